"""Time one family file under several forced launches at a few shapes, beside torch.compile (default and
max-autotune), all in one process: which of the family's own launches reaches compile where the table does not?

Why: a table search only tries the launches its bucket's tuning shapes favour; when a held-out or issue shape
loses to torch.compile, the first question is whether any launch of the family wins there (then the bucket or its
shapes are the problem) or none does (then the kernel is). Each CONFIG "k=v,..." empties the file's DISPATCH tables
and sets TUNABLES, so every shape runs that launch alone; "table" keeps the file as it is; "table+k=v,..." keeps the
tables and sets TUNABLES (what their entries leave out). Rounds are interleaved (every
implementation once per round, the order rotated) and the median over rounds of each one's median is printed with
its ratio to the best baseline of the shape. A probe for design work: tune on other shapes than you judge on.
Usage (GPU machine):
  python3 scripts/family_sweep.py PROBLEM FILE "AxB;CxD" "table" "num_warps=16,ONE_PASS=False,BLOCK_N=4096" ...
  [--dtype float16] [--rounds 5]
"""

from __future__ import annotations

import argparse
import ast
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def parse_config(text: str) -> tuple[dict | None, bool]:
    """"table" -> (None, True): the file as it is; "k=v,k=v" -> ({k: literal v}, False): that launch at every
    shape; "table+k=v" -> ({k: v}, True): the table's entries, with TUNABLES (what entries leave out) set."""
    keep_table = text == "table" or text.startswith("table+")
    text = text.removeprefix("table").removeprefix("+")
    if not text:
        return None, True
    out = {}
    for part in filter(None, text.split(",")):
        key, _, value = part.partition("=")
        if not key or not value:
            raise SystemExit(f"family_sweep: config {text!r}: want k=v,k=v or 'table'")
        out[key.strip()] = ast.literal_eval(value.strip())
    return out, keep_table


def forced(path: Path, config: dict | None, keep_table: bool, index: int):
    """The file's ModelNew with its TUNABLES updated by config (None: untouched) and, unless keep_table, its
    DISPATCH tables emptied."""
    from harness.loader import import_file

    module = import_file(path, f"family_sweep_{index}")
    if config is not None:
        unknown = set(config) - set(getattr(module, "TUNABLES", {}))
        if unknown:
            raise SystemExit(f"family_sweep: {path}: no tunable(s) {sorted(unknown)}")
        module.TUNABLES = {**module.TUNABLES, **config}
    if not keep_table:
        module.DISPATCH = {}
        module.DISPATCH_BY_GPU = {}
    return module.ModelNew


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem")
    parser.add_argument("file", type=Path)
    parser.add_argument("shapes")
    parser.add_argument("configs", nargs="+")
    parser.add_argument("--dtype", default=None)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)

    import torch

    from harness.baselines import make_baseline
    from harness.inputs import build_candidate, make_inputs
    from harness.loader import load_problem
    from harness.timing import CudaTimer

    problem = load_problem(Path("problems") / f"{args.problem}.py")
    dtype = args.dtype or problem.meta.dtypes[0]
    names = [k for k in problem.defaults if k in (problem.meta.large_shapes or [problem.defaults])[0]]
    shapes = [dict(zip(names, map(int, part.split("x")))) for part in args.shapes.split(";") if part]
    classes = {text: forced(args.file, *parse_config(text), i) for i, text in enumerate(args.configs)}
    timer = CudaTimer(min_runs=20, max_runs=200, target_rse=0.003, budget_s=0.5)
    print(f"{args.problem} {args.file} {dtype}; {args.rounds} interleaved rounds; median us, x best baseline")
    for shape in shapes:
        inputs = make_inputs(problem, shape, dtype, 1, "cuda")
        impls = {name: make_baseline(problem, name, shape, dtype, 0, "cuda")
                 for name in ("compile", "compile-max-autotune")}
        for text, cls in classes.items():
            impls[text] = build_candidate(problem, cls, shape, dtype, 0, "cuda")
        times = {name: [] for name in impls}
        order = list(impls)
        with torch.no_grad():
            for r in range(args.rounds):
                for name in order[r % len(order):] + order[:r % len(order)]:
                    times[name].append(timer.measure(lambda m=impls[name], x=inputs: m(*x)).median_us)
        medians = {name: statistics.median(t) for name, t in times.items()}
        best = min(medians["compile"], medians["compile-max-autotune"])
        label = "x".join(map(str, shape.values()))
        for name, us in sorted(medians.items(), key=lambda kv: kv[1]):
            print(f"{label:>14}  {us:9.2f}  {best / us:6.3f}  {name}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
