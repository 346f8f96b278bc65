"""What does torch.compile generate for a problem at a shape, and how fast is it beside our files?

For each shape: compiles the problem's Model with inductor (default and max-autotune-no-cudagraphs),
times both and every given solution file with the harness's timer (clean flush), in one process, and
copies inductor's generated Triton kernels (and the configs its autotuner kept) to OUT/inductor/, so a
kernel engineer can read the launch configuration that wins. A probe for design work, not a benchmark
of record: `ksuite bench` is that.
Usage (GPU machine): python3 scripts/probe_inductor.py PROBLEM "AxB;CxD" [solution.py ...]
"""

import glob
import os
import shutil
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.baselines import make_baseline  # noqa: E402
from harness.inputs import build_candidate, make_inputs  # noqa: E402
from harness.loader import load_candidate_class, load_problem  # noqa: E402
from harness.timing import CudaTimer  # noqa: E402


def parse(problem, text: str) -> list[dict]:
    names = [k for k in problem.defaults if k in (problem.meta.large_shapes or [problem.defaults])[0]]
    return [dict(zip(names, map(int, part.split("x")))) for part in text.split(";") if part]


def main(argv: list[str]) -> int:
    problem = load_problem(Path("problems") / f"{argv[0]}.py")
    files = [Path(f) for f in argv[2:]]
    out = Path(os.environ.get("OUT", "/tmp")) / "inductor"
    out.mkdir(parents=True, exist_ok=True)
    timer = CudaTimer(min_runs=30, max_runs=300, target_rse=0.002, budget_s=1.0)
    dtype = problem.meta.dtypes[0]
    for shape in parse(problem, argv[1]):
        inputs = make_inputs(problem, shape, dtype, 1, "cuda")
        impls = {name: make_baseline(problem, name, shape, dtype, 0, "cuda") for name in
                 ("compile", "compile-max-autotune")}
        for i, f in enumerate(files):
            impls[f.stem] = build_candidate(problem, load_candidate_class(f, f"probe_{i}"), shape, dtype, 0, "cuda")
        line = "x".join(map(str, shape.values())) + f" {dtype}:"
        with torch.no_grad():
            for name, model in impls.items():
                line += f"  {name} {timer.measure(lambda m=model, x=inputs: m(*x)).median_us:.2f}"
        print(line, flush=True)
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR") or glob.glob("/tmp/torchinductor_*")[0]
    for path in glob.glob(f"{cache}/**/*.py", recursive=True) + glob.glob(f"{cache}/**/*.best_config", recursive=True):
        if "triton_" in Path(path).read_text(errors="replace")[:100000] or path.endswith(".best_config"):
            shutil.copy(path, out / Path(path).name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
