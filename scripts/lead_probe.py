"""Does the timer's spin cover each callable's host launch path? A GPU probe of the fixed and the sized spin.

The timer spins the GPU between the L2 flush and each timed call so that the host's launch path (Python
wrapper, guards, every kernel launch of a multi-kernel solution) stays outside the timed span. A fixed
100 us was too short once: softmax 7x151936 bf16 (a two-kernel split form) had a median of 31.7 us, an
interquartile range of 70 and a minimum of 8.1 in run 20261202-041318, 9.0 us in the next run. The timer
now sizes the spin from the host times it measures in warm-up (harness/timing.lead_us_for). This times each
implementation both ways in one process, on the same inputs, and prints the host's launch time (median and
90th percentile), the spin used, and median / interquartile range / minimum of each way.
Usage: python3 scripts/lead_probe.py
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from harness.baselines import make_baseline  # noqa: E402
from harness.inputs import build_candidate, make_inputs  # noqa: E402
from harness.loader import load_candidate_class, load_problem  # noqa: E402
from harness.timing import LEAD_US, CudaTimer, summarize  # noqa: E402

CASES = [("softmax", {"batch_size": 7, "dim": 151936}, "bfloat16"),
         ("softmax", {"batch_size": 16, "dim": 50257}, "bfloat16"),
         ("layernorm", {"batch_size": 1, "dim": 4096}, "float16")]
IMPLS = ("eager", "compile", "triton_family")
RUNS = 300


def fixed_lead(timer: CudaTimer, fn) -> list[float]:
    """The timer as it was: warm-up, then batches with the 100 us spin."""
    timer.warmup(fn)
    timer.set_lead(LEAD_US)
    times: list[float] = []
    while len(times) < RUNS:
        times += timer.time_batch(fn, 10)
    return times


def main() -> None:
    timer = CudaTimer()
    print(f"{'case':34s} {'impl':14s} {'host p50':>8s} {'host p90':>8s} {'spin':>6s} "
          f"{'fixed: med / iqr / min':>24s} {'sized: med / iqr / min':>24s}")
    for name, shape, dtype in CASES:
        problem = load_problem(Path("problems") / f"{name}.py")
        inputs = make_inputs(problem, shape, dtype, 1, "cuda")
        for impl in IMPLS:
            if impl == "triton_family":
                cls = load_candidate_class(Path("solutions") / name / "triton_family.py", f"lead_{name}")
                model = build_candidate(problem, cls, shape, dtype, 0, "cuda")
            else:
                model = make_baseline(problem, impl, shape, dtype, 0, "cuda")
            with torch.no_grad():
                fn = lambda m=model, x=inputs: m(*x)  # noqa: E731
                host = sorted(timer.warmup(fn))
                fixed = summarize(fixed_lead(timer, fn))
                sized = timer.measure(fn)
            case = f"{name} {'x'.join(str(v) for v in shape.values())} {dtype}"
            print(f"{case:34s} {impl:14s} {statistics.median(host):8.1f} {host[int(0.9 * (len(host) - 1))]:8.1f} "
                  f"{sized.lead_us:6.0f} {fixed.median_us:8.2f} {fixed.iqr_us:7.2f} {fixed.min_us:7.2f} "
                  f"{sized.median_us:8.2f} {sized.iqr_us:7.2f} {sized.min_us:7.2f}", flush=True)


if __name__ == "__main__":
    main()
