"""Does the bench time an implementation as `ksuite confirm` does? Each paired record beside the bench's own.

`ksuite confirm RUN` times a run's close calls again, every implementation of a shape in one process, interleaved,
and writes them as a new run whose records name RUN (`paired.run`). Each paired record and RUN's record of the same
(problem, implementation, shape, dtype) give two ratios, bench over paired: of the medians and of the fastest calls.
A timer that treats implementations alike puts every implementation's ratios near 1 alike; one whose ratio sits above
the others' is timed slower by the bench than beside the rest, and a verdict against it is flattering. Per
implementation (a baseline's name, or "ours" for every solution) and length of call (short under 20 us, mid to 100,
long from 100): how many pairs, the geometric means of both ratios, and the shares of median ratios over 1.05 and
under 0.95. A record reused from the baseline cache (`cached_from`) is not a bench timing and is left out.

    python3 scripts/bench_vs_paired.py nvidia-h200 [--by problem]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from suite import results_store  # noqa: E402
from suite.results_store import RunFile, runs_newest_first  # noqa: E402

LENGTHS = ((20.0, "short"), (100.0, "mid"), (float("inf"), "long"))


def length(median_us: float) -> str:
    return next(name for edge, name in LENGTHS if median_us < edge)


def ratio_pairs(slug: str, root: Path | None = None) -> list[dict]:
    """One row per paired record with a bench record of the same key in the run it names: implementation,
    problem, length of call (by the paired median), median ratio and fastest-call ratio (None where a record
    lacks its minimum)."""
    folder = Path(root or results_store.RESULTS_DIR) / slug
    bench_runs: dict = {}
    rows = []
    for path in runs_newest_first(root=root, slug=slug):
        for m in RunFile(path).read():
            d = m.to_dict()
            source = (d.get("paired") or {}).get("run")
            if not source or not d.get("median_us"):
                continue
            if source not in bench_runs:
                bench_file = folder / f"{source}.jsonl"
                bench_runs[source] = {b.key: b.to_dict() for b in RunFile(bench_file).read()
                                      if b.median_us and not b.paired and not b.cached_from
                                      } if bench_file.is_file() else {}
            bench = bench_runs[source].get(m.key)
            if bench is None:
                continue
            fastest = bench["min_us"] / d["min_us"] if bench.get("min_us") and d.get("min_us") else None
            rows.append(dict(implementation="ours" if d.get("kind") == "solution" else d["solution"],
                             problem=d["problem"], length=length(d["median_us"]),
                             median_ratio=bench["median_us"] / d["median_us"], fastest_ratio=fastest))
    return rows


def summary_line(name: str, rows: list[dict]) -> str:
    medians = [r["median_ratio"] for r in rows]
    fastest = [r["fastest_ratio"] for r in rows if r["fastest_ratio"]]
    fastest_text = f"{statistics.geometric_mean(fastest):.3f}" if fastest else "-"
    over = sum(x > 1.05 for x in medians) / len(medians)
    under = sum(x < 0.95 for x in medians) / len(medians)
    return (f"{name}: {len(rows)} pairs; bench / paired, median {statistics.geometric_mean(medians):.3f}, "
            f"fastest call {fastest_text}; over 1.05: {over:.0%}, under 0.95: {under:.0%}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gpu", help="results folder name, e.g. nvidia-h200")
    parser.add_argument("--by", choices=("implementation", "problem"), default="implementation",
                        help="group by implementation and length of call (default), or also by problem")
    parser.add_argument("--min-pairs", type=int, default=5, help="leave out groups with fewer pairs")
    args = parser.parse_args(argv)
    rows = ratio_pairs(args.gpu)
    if not rows:
        print(f"{args.gpu}: no paired record with its bench record")
        return 1
    groups = defaultdict(list)
    for r in rows:
        key = (r["implementation"], r["length"]) if args.by == "implementation" else \
            (r["implementation"], r["length"], r["problem"])
        groups[key].append(r)
    print(summary_line(f"{args.gpu}, every implementation", rows))
    order = {name: i for i, (_, name) in enumerate(LENGTHS)}
    for key in sorted(groups, key=lambda k: (k[0], order[k[1]], k[2:])):
        if len(groups[key]) >= args.min_pairs:
            print("  " + summary_line(" ".join(key), groups[key]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
