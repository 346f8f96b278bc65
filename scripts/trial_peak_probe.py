"""Which phase of one record sets its peak memory: a trial, the timed call, the timing loop, the re-check.

A record's peak_mem_bytes is the most of its phases; this replays them the way harness/jobs/worker.py runs
them for one (problem, shape, dtype, implementation) and prints each phase's peak as a multiple of inputs +
outputs, beside the memory plan's cap (harness/memory.trial_cap). On a GPU the peaks are torch.cuda's; on a
CPU machine they are counted storage by storage (memory.StorageWatch), without the timer.
Usage: python3 scripts/trial_peak_probe.py PROBLEM 4096x4096 float16 [eager|fused|compile|SOLUTION_FILE] ...
(several "PROBLEM SHAPE DTYPE IMPL" groups may follow one another)
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from harness import memory  # noqa: E402
from harness.baselines import COMPILE_MODES, make_baseline  # noqa: E402
from harness.compare import as_tensor_list  # noqa: E402
from harness.correctness import Checker  # noqa: E402
from harness.inputs import build_candidate, make_inputs  # noqa: E402
from harness.loader import load_candidate_class, load_problem  # noqa: E402


def maker(problem, impl: str, device: str):
    if impl in ("eager", "fused", "liger") or impl in COMPILE_MODES:
        return lambda s, d: make_baseline(problem, impl, s, d, 0, device)
    cls = load_candidate_class(Path(impl), f"ksuite_peak_probe_{Path(impl).stem}")
    return lambda s, d: build_candidate(problem, cls, s, d, 0, device)


@torch.no_grad()
def probe(name: str, shape_text: str, dtype: str, impl: str) -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    problem = load_problem(ROOT / "problems" / f"{name}.py", f"ksuite_peak_probe_{name}")
    shape = dict(zip(problem.meta.shapes[0].keys(), map(int, shape_text.split("x"))))
    free = None if device == "cuda" else (lambda d: int(139e9))  # a CPU run plans as on an H200
    checker = Checker(problem, maker(problem, impl, device), device, 0, free_fn=free)
    watch = memory.StorageWatch() if device == "cpu" else None
    if watch:  # the harness's own peak calls, counted on the host
        memory.reset_peak, memory.peak = watch.reset_peak, watch.peak_bytes
        watch.__enter__()
    timer = None
    if device == "cuda":
        from harness.timing import CudaTimer
        timer = CudaTimer(max_runs=50, budget_s=0.2)
    held = timer.held_bytes if timer else 0
    setup = checker.setup(shape, dtype)
    phases = []

    def note(phase: str) -> None:
        phases.append((phase, (memory.peak(device) or 0) - held))
        memory.reset_peak(device)

    memory.reset_peak(device)
    checker.trial(shape, dtype)
    note("trial")
    inputs = make_inputs(problem, shape, dtype, 11, device)
    memory.reset_peak(device)
    outputs = as_tensor_list(setup.candidate(*inputs))
    io = memory.nbytes(inputs) + memory.nbytes(outputs)
    note("timed call")
    if timer:
        timer.measure(lambda: setup.candidate(*inputs))
        note("timing")
    after = checker.recheck_in_place(shape, dtype, inputs, outputs)
    note("re-check")
    if watch:
        watch.__exit__(None, None, None)
    cap = memory.trial_cap(io, 0)
    print(f"{name} {shape_text} {dtype} {Path(impl).stem} on {device}: inputs + outputs {io / 1e6:.1f} MB, "
          f"plan {setup.plan.reference}"
          f"{' x' + str(setup.reference64.slices) if hasattr(setup.reference64, 'slices') else ''}, "
          f"cap {cap / io:.2f}x, re-check {'passed' if after.passed else after.detail}")
    for phase, peak in phases:
        print(f"  {phase:11s} {peak / io:5.2f}x  {peak / 1e6:9.1f} MB{'  past the cap' if peak > cap else ''}")


def main(args: list[str]) -> int:
    if len(args) < 4 or len(args) % 4:
        print(__doc__.strip().splitlines()[-2])
        return 2
    for k in range(0, len(args), 4):
        probe(*args[k:k + 4])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
