"""Where each problem's float64 reference would run on a GPU of FREE_GB, and in how many slices, without a GPU.

The checker's memory plan (harness/memory.py) decides per (problem, shape, dtype) from sizes traced on the
meta device. This makes the same decisions as harness/correctness.Checker.setup for every problem file
given, at its timed shapes (a KernelBench file: its own size, float32), and prints where the reference goes,
the slices, and the trial's planned peak against inputs + weights + outputs. With --compare-slack it prints the plan
of the former cap (BOUND x (inputs + outputs) + SLACK at every size) beside the current one, so a change
of the cap shows which problems it moves.
Usage: python3 scripts/memory_plan_table.py [--free-gb 139] [--host-gb 120] [--compare-slack] FILE_OR_DIR...
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from harness import independence, memory  # noqa: E402
from harness.loader import DTYPES, load_problem  # noqa: E402

GB = 1e9


def decide(problem, shape: dict, dtype: str, free: int, host: int) -> tuple[int, memory.Plan, memory.Sizes | None]:
    """(slices, plan, sizes) as Checker.setup makes them (sizes None: the meta trace failed; then the
    checker calls the reference once on the device, which this cannot)."""
    sizes = memory.trace_sizes(problem, shape, dtype)
    if sizes is None:
        return 1, memory.Plan(), None
    itemsize, compute_bound = DTYPES[dtype].itemsize, problem.meta.bound == "compute"
    slices, plan = 1, memory.plan(sizes, itemsize, free, host, compute_bound=compute_bound)
    meta = problem.meta
    dim, whole = meta.reference_split_dim, meta.reference_whole_inputs
    if dim is None and plan.reference == "host":
        dim = (independence.split(problem, shape) or (None, None))[0]
    if dim is not None:
        extent = memory.split_extent(problem, shape, dim, whole)
        slices, plan = memory.plan_in_slices(sizes, itemsize, free, extent, compute_bound, host=host)
    return slices, plan, sizes


def row(problem, shape: dict, dtype: str, free: int, host: int) -> str:
    slices, plan, sizes = decide(problem, shape, dtype, free, host)
    if sizes is None:
        return "not traced"
    io = sizes.inputs + sizes.params + sizes.outputs  # the bound's base: a model's weights are inputs too
    where = "refused" if plan.refusal else f"{plan.reference}{f' x{slices}' if slices > 1 else ''}"
    ratio = memory.planned_peak(sizes, DTYPES[dtype].itemsize, slices, plan) / io
    return f"{where:12s} {ratio:5.2f}x of {io / GB:7.3f} GB"


def files(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        out += sorted(p.glob("*.py")) if p.is_dir() else [p]
    return [p for p in out if p.name != "__init__.py"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--free-gb", type=float, default=139.0)
    parser.add_argument("--host-gb", type=float, default=120.0)
    parser.add_argument("--compare-slack", action="store_true")
    args = parser.parse_args()
    free, host = int(args.free_gb * GB), int(args.host_gb * GB)
    current = memory.trial_cap
    former = lambda i, o: memory.BOUND * (i + o) + memory.SLACK  # noqa: E731
    changed = 0
    for path in files(args.paths):
        try:
            problem = load_problem(path, f"ksuite_plan_{path.stem}")
        except Exception as exc:  # noqa: BLE001 - one line per file that does not load
            print(f"{path.stem:40s} does not load: {str(exc).splitlines()[0][:80]}")
            continue
        meta = problem.meta
        for shape in list(meta.large_shapes) or list(meta.shapes) or list(meta.small_shapes):
            dtype = meta.dtypes[0]
            now = row(problem, shape, dtype, free, host)
            line = f"{path.stem:40s} {now}"
            if args.compare_slack:
                memory.trial_cap = former
                try:
                    before = row(problem, shape, dtype, free, host)
                finally:
                    memory.trial_cap = current
                changed += before != now
                line += f"   was {before}" + ("   CHANGED" if before != now else "")
            print(line, flush=True)
    if args.compare_slack:
        print(f"{changed} plan(s) changed")


if __name__ == "__main__":
    main()
