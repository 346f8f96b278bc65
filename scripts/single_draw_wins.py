"""Table changes kept on one draw where one draw is not enough: the kept rows of the table searches' ledgers whose
calls took under --max-us and whose interval's lower end was under --below.

Until 2026-12-06 a change was kept when one paired comparison of the best and the candidate (two modules loaded
once each) passed the keep rule. Two copies of one file differed by 2-6 % at calls of a few microseconds on the
H100 (scripts/same_file_probe.py), a placement draw those rounds all share, so a kept win of a few per cent at such
calls is not established; the search now asks a second draw (suite/optimize/table.py, again_as_copies). This lists
the older wins that a second draw should look at again. A later search may have replaced an entry listed here;
the ledger's bucket and time say which row it was.
--revert-dir DIR writes, for each listed change that still stands in the family file, a copy of the file with that
bucket's changed tunables set back to their values before the change, and prints the `ksuite ab ... --again`
command that asks, at the bucket's tuning shapes, whether the change paid (A: the file, B: the copy without it).
Run from the repository root: python3 scripts/single_draw_wins.py [--gpu nvidia-h200] [--max-us 10] [--below 1.05]
[--revert-dir DIR]
"""

import argparse
import ast
import csv
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
INTERVAL = re.compile(r"(\d+\.\d+)x \[(\d+\.\d+), (\d+\.\d+)\] over")
CONFIRMED = "again as fresh copies of both"
STEP = re.compile(r"(\w+) ([^\s,]+?)->([^\s,]+)")  # a tunable, its value before and after (no commas)


def single_draw_wins(ledger: Path, max_us: float, below: float) -> list[dict]:
    """The kept table-search rows of one ledger that rest on one draw at calls under max_us, gaining less than
    `below` at the interval's lower end."""
    found, start = [], None
    with ledger.open(newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if row.get("description", "").startswith("start: "):
                start = row["description"][len("start: "):].strip()
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
                              "change": description.split(";")[0], "start": start})
    return found


def steps(change: str) -> list[tuple[str, str, str]]:
    """'search: BLOCK_M 1->2, num_warps 8->4' -> [('BLOCK_M', '1', '2'), ('num_warps', '8', '4')]."""
    return STEP.findall(change.split(":", 1)[-1])


def value(text: str):
    """A tunable's value as the ledger wrote it: a Python literal (4, True), else the bare word ('tile')."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def without_change(source: str, gpu: str, bucket: str, change: str) -> str | None:
    """The family source with `bucket`'s tunables that `change` set put back to their values before it, in the
    table `gpu` runs; None where the change no longer stands there (a later search moved one of them) or the
    bucket is gone."""
    from suite.optimize import dispatch

    current = dispatch.read_configs(source, gpu).get(bucket)
    moves = steps(change)
    if current is None or not moves or any(str(current.get(key)) != new for key, _, new in moves):
        return None
    table = {b: dict(entry) for b, entry in dispatch.read_table(source, gpu).items()}
    table[bucket] = {**current, **{key: value(old) for key, old, _ in moves}}
    return dispatch.replace_entries(source, table, gpu)  # a GPU table's comment lines (its provenance) kept


def bucket_shapes(problem: Path, source: str, bucket: str) -> list[dict]:
    """The workload's tuning shapes that fall in `bucket`, else its probe shape, as the search chose them
    (suite/optimize/table_command.py probes_for); empty where it has neither."""
    from harness.loader import load_problem
    from suite.optimize import dispatch
    from suite.optimize.table_command import probes_for

    buckets = dispatch.read_buckets(source)
    meta = load_problem(problem, "ksuite_single_draw_problem").meta
    tuning = meta.sweep("tuning")
    own = [s for s in tuning if dispatch.bucket_of(s, buckets) == bucket]
    if own:
        return own
    probe = probes_for(meta, buckets, tuning)[0].get(bucket)
    return [probe] if probe else []


def write_reverts(rows: list[dict], gpu: str, folder: Path) -> list[str]:
    """One copy of the family per change that still stands, and the command that times it against the file."""
    folder.mkdir(parents=True, exist_ok=True)
    commands = []
    for n, r in enumerate(rows):
        problem = r["ledger"].split("-")[0]
        folder_of = ROOT / "solutions" / problem  # a --split search started from a copy: the family it cut
        names = [name for name in (r["start"], "triton_family.py") if name and (folder_of / name).is_file()]
        family = folder_of / names[0] if names else None
        if family is None:
            commands.append(f"# {r['ledger']} {r['bucket']}: no family file of {problem} to revert in")
            continue
        source = family.read_text()
        reverted = without_change(source, gpu, r["bucket"], r["change"])
        if reverted is None:
            commands.append(f"# {r['ledger']} {r['bucket']}: '{r['change']}' no longer stands in {family.name}")
            continue
        copy = folder / f"{problem}_{n:03d}_without.py"
        copy.write_text(reverted)
        shapes = bucket_shapes(ROOT / "problems" / f"{problem}.py", source, r["bucket"])
        named = " ".join("--shape " + ",".join(f"{k}={v}" for k, v in s.items()) for s in shapes)
        if not named:
            commands.append(f"# {r['ledger']} {r['bucket']}: no tuning or probe shape in the bucket ({copy})")
            continue
        commands.append(f"python3 -m suite ab {problem} {family.relative_to(ROOT)} {copy} --again {named}"
                        f"  # {r['bucket']}: without '{r['change']}'")
    return commands


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", default="nvidia-h200", help="The results folder whose ledgers are read.")
    parser.add_argument("--max-us", type=float, default=10.0, help="Calls under this median (us) count.")
    parser.add_argument("--below", type=float, default=1.05, help="Wins whose interval starts under this count.")
    parser.add_argument("--revert-dir", type=Path, help="Write each standing change's revert copy here.")
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
    if args.revert_dir is not None:
        print("\n".join(write_reverts(rows, args.gpu, args.revert_dir)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
