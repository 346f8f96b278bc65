"""Table changes kept on one draw where one draw is not enough: the kept rows of the table searches' ledgers whose
calls took under --max-us and whose interval's lower end was under --below.

Until 2026-12-06 a change was kept when one paired comparison of the best and the candidate (two modules loaded
once each) passed the keep rule. Two copies of one file differed by 2-6 % at calls of a few microseconds on the
H100 (scripts/same_file_probe.py), a placement draw those rounds all share, so a kept win of a few per cent at such
calls is not established; the search now asks a second draw (suite/optimize/table.py, again_as_copies). This lists
the older wins that a second draw, or `ksuite ab --control` at the bucket's shapes, should look at again. A later
search may have replaced an entry listed here; the ledger's bucket and time say which row it was.
Run from the repository root: python3 scripts/single_draw_wins.py [--gpu nvidia-h200] [--max-us 10] [--below 1.05]
"""

import argparse
import csv
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INTERVAL = re.compile(r"(\d+\.\d+)x \[(\d+\.\d+), (\d+\.\d+)\] over")
CONFIRMED = "again as fresh copies of both"


def single_draw_wins(ledger: Path, max_us: float, below: float) -> list[dict]:
    """The kept table-search rows of one ledger that rest on one draw at calls under max_us, gaining less than
    `below` at the interval's lower end."""
    found = []
    with ledger.open(newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if row.get("status") != "kept" or row.get("strategy") != "table" or not row.get("bucket"):
                continue
            description = row.get("description", "")
            match = INTERVAL.search(description)
            try:
                median = float(row.get("median_us") or "nan")
            except ValueError:
                continue
            if match is None or CONFIRMED in description or not median < max_us:
                continue
            speedup, low, high = (float(g) for g in match.groups())
            if low < below:
                found.append({"ledger": ledger.name, "time": row["time"][:16], "bucket": row["bucket"],
                              "median_us": median, "speedup": speedup, "low": low, "high": high,
                              "change": description.split(";")[0]})
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", default="nvidia-h200", help="The results folder whose ledgers are read.")
    parser.add_argument("--max-us", type=float, default=10.0, help="Calls under this median (us) count.")
    parser.add_argument("--below", type=float, default=1.05, help="Wins whose interval starts under this count.")
    args = parser.parse_args()
    folder = ROOT / "results" / args.gpu / "optimize"
    if not folder.is_dir():
        print(f"{folder}: no such folder (is --gpu a results folder name?)")
        return 2
    rows = [r for ledger in sorted(folder.glob("*.tsv")) for r in single_draw_wins(ledger, args.max_us, args.below)]
    for r in rows:
        print(f"{r['ledger']:<34} {r['time']:<16} {r['bucket']:<40} {r['median_us']:7.2f} us  "
              f"{r['speedup']:.3f}x [{r['low']:.3f}, {r['high']:.3f}]  {r['change']}")
    print(f"{len(rows)} kept change(s) under {args.max_us:g} us with an interval starting under {args.below:g}x, "
          f"each on one draw ({args.gpu})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
