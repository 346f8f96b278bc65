"""How far one file's median at one shape moves from one run (process) to the next, on one GPU, from the committed
results: the evidence behind `ksuite confirm`'s close-call window (suite/confirm.py, WITHIN and CONTENDER).

Every pair of unpaired records of the same (problem, implementation, source hash, shape, dtype, flush) from two
runs, with both medians under --max-us, gives a ratio (slower / faster). Printed: how many pairs, the ratio's
quantiles, and the share over 1.10 and over 1.25; then the same per implementation with at least 50 pairs (a
baseline has no source hash: its records pair across runs of any day; torch.compile max-autotune autotunes again in
each process, so its spread is its own choice of kernel, not only the timer's draw).

    python3 scripts/process_spread.py nvidia-h100-80gb-hbm3 [--max-us 20]

With `--min-us 20 --max-us 1e9 --by problem` the same for calls above 20 us, per problem: the evidence behind
confirm's COMPUTE_WITHIN (on the H200, 2026-12-07, a compute-bound problem's call moves past 5 % in about a
quarter of the pairs, a memory-bound one's in about one in twenty).
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from suite.results_store import RunFile, runs_newest_first  # noqa: E402


def medians_by_key(slug: str, max_us: float, min_us: float = 0.0) -> dict:
    """{(problem, implementation, source hash, shape, dtype, flush): [median of each run that timed it alone]}"""
    seen: dict = defaultdict(list)
    copies: set = set()  # a run `ksuite confirm` wrote holds the old run's other records as they were: one timing
    for path in runs_newest_first(slug=slug):
        for r in RunFile(path).read():
            d = r.to_dict()
            if d.get("paired") or d.get("cached_from") or not d.get("median_us") or d["median_us"] > max_us:
                continue
            if d["median_us"] < min_us:
                continue
            key = (d["problem"], d["solution"], d.get("source_hash"), tuple(sorted(d["shape"].items())), d["dtype"],
                   d.get("flush"))
            timing = (key, d.get("timestamp"), d["median_us"])
            if d.get("timestamp") and timing in copies:
                continue
            copies.add(timing)
            seen[key].append(d["median_us"])
    return seen


def pair_ratios(seen: dict) -> list[float]:
    return sorted(max(a, b) / min(a, b) for times in seen.values() for a, b in itertools.combinations(times, 2))


def spread_line(name: str, ratios: list[float]) -> str:
    q = {p: ratios[int(p * (len(ratios) - 1))] for p in (0.5, 0.75, 0.9, 0.95)}
    over = {w: sum(x > w for x in ratios) / len(ratios) for w in (1.05, 1.10, 1.25)}
    return (f"{name}: {len(ratios)} pairs; slower / faster median: p50 {q[0.5]:.3f}, p75 {q[0.75]:.3f}, "
            f"p90 {q[0.9]:.3f}, p95 {q[0.95]:.3f}; over 1.05: {over[1.05]:.0%}, over 1.10: {over[1.10]:.0%}, "
            f"over 1.25: {over[1.25]:.0%}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gpu", help="results folder name, e.g. nvidia-h200")
    parser.add_argument("--max-us", type=float, default=20.0)
    parser.add_argument("--min-us", type=float, default=0.0)
    parser.add_argument("--by", choices=("implementation", "problem"), default="implementation",
                        help="one line per implementation (default) or per problem, for those with 50 pairs or more")
    args = parser.parse_args(argv)
    seen = medians_by_key(args.gpu, args.max_us, args.min_us)
    ratios = pair_ratios(seen)
    span = f"under {args.max_us:g} us" + (f" and from {args.min_us:g} us" if args.min_us else "")
    if not ratios:
        print(f"{args.gpu}: no implementation timed alone at one shape in two runs {span}")
        return 1
    print(spread_line(f"{args.gpu}, every implementation at one shape {span}", ratios))
    field = 1 if args.by == "implementation" else 0
    names = sorted({key[field] for key in seen})
    by_name = {n: pair_ratios({k: v for k, v in seen.items() if k[field] == n}) for n in names}
    for name, own in sorted(by_name.items(), key=lambda kv: -len(kv[1])):
        if len(own) >= 50:
            print("  " + spread_line(name, own))
    return 0


if __name__ == "__main__":
    sys.exit(main())
