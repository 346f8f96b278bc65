"""Would a run's verdicts stand against torch.compile max-autotune's best pick? A check of the best baseline's draw.

max-autotune autotunes again in each process, and at some large memory-bound shapes its pick is a draw between
configurations whose times differ by up to a fifth (H200, layernorm 32768x8192 bf16: 318 us in most runs, 261 in
one; 16384x4096: 67-68 or 76-78): a run whose max-autotune drew the slower one flatters every solution against it.
For one run, per (problem, dtype), this prints the held-out verdict as the run has it (shapes won, geometric mean
over the best baseline) and again with max-autotune's time at each shape replaced by the fastest median it ever
recorded there on this GPU, with the same torch, in any run (only at calls of --min-us and more: below, the fastest
of many medians is the timer's luck, not the autotuner's pick), and the shapes whose ratio moved past 2 %.
Usage: python3 scripts/autotune_draws.py GPU RUN [--solution triton_family] [--min-us 20]
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from suite.results_store import ResultsError, RunFile, find_run, runs_newest_first  # noqa: E402

AUTOTUNED = "compile-max-autotune"


def _key(d: dict) -> tuple:
    return d["problem"], tuple(sorted(d["shape"].items())), d["dtype"], d.get("flush")


def fastest_picks(slug: str, torch_version: str | None) -> dict:
    """{(problem, shape, dtype, flush): the fastest max-autotune median recorded on this GPU with this torch}"""
    best: dict = {}
    for path in runs_newest_first(slug=slug):
        for r in RunFile(path).read():
            d = r.to_dict()
            if d["solution"] != AUTOTUNED or not d.get("median_us") or d.get("cached_from"):
                continue
            if torch_version and (d.get("env") or {}).get("torch") != torch_version:
                continue
            key = _key(d)
            best[key] = min(best.get(key, math.inf), d["median_us"])
    return best


def verdicts(records: list[dict], solution: str, picks: dict, min_us: float) -> dict:
    """{(problem, dtype): [(shape, ratio as run, ratio against the fastest pick)]} over the run's held-out shapes."""
    baselines: dict = defaultdict(dict)
    ours: dict = {}
    for d in records:
        if d.get("shape_set") != "heldout" or not d.get("median_us") or not d.get("correct", True):
            continue
        if d["kind"] == "baseline":
            baselines[_key(d)][d["solution"]] = d["median_us"]
        elif d["solution"] == solution:
            ours[_key(d)] = (d["median_us"], d["shape"])
    out: dict = defaultdict(list)
    for key, (t, shape) in ours.items():
        times = baselines.get(key)
        if not times:
            continue
        strict = dict(times)
        if AUTOTUNED in strict and strict[AUTOTUNED] >= min_us and key in picks:
            strict[AUTOTUNED] = min(strict[AUTOTUNED], picks[key])
        out[(key[0], key[2])].append((shape, min(times.values()) / t, min(strict.values()) / t))
    return out


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gpu", help="results folder name, e.g. nvidia-h200")
    parser.add_argument("run", help="run id")
    parser.add_argument("--solution", default="triton_family")
    parser.add_argument("--min-us", type=float, default=20.0)
    args = parser.parse_args(argv)
    try:
        records = [r.to_dict() for r in find_run(args.run, args.gpu).read()]
    except ResultsError as e:
        print(e)
        return 2
    torch_version = next(((d.get("env") or {}).get("torch") for d in records if d.get("env")), None)
    rows = verdicts(records, args.solution, fastest_picks(args.gpu, torch_version), args.min_us)
    if not rows:
        print(f"run {args.run}: no held-out record of {args.solution} beside baselines")
        return 1
    for (problem, dtype), shapes in sorted(rows.items()):
        as_run, strict = [s[1] for s in shapes], [s[2] for s in shapes]
        print(f"{problem} {dtype} {args.solution}: as run {sum(r >= 1 for r in as_run)} of {len(shapes)}, "
              f"{geomean(as_run):.3f}; against max-autotune's fastest pick {sum(r >= 1 for r in strict)} of "
              f"{len(shapes)}, {geomean(strict):.3f}")
        for shape, a, b in shapes:
            if b < a / 1.02:
                print(f"  {'x'.join(str(v) for v in shape.values())}: {a:.3f} -> {b:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
