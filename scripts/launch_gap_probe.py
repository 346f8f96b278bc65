"""Does host launch time leak into the harness's timed calls? A GPU probe, one shape per problem.

Held-out benches on the H200 (run 20261201-093656) gave bimodal samples for small Triton kernels
(layernorm 1x4096: median 16.6 us, interquartile range 39 us, minimum 4.2 us) while the tuning session
timed the same kernel at 4.5 us. If the GPU finishes the L2 flush before the host has enqueued the start
event and the kernel, the span between the events includes the host's launch path. This times each
implementation three ways on the same inputs, 400 calls each, and prints percentiles of the samples:
  lead    the harness's timer (flush, then the GPU spins LEAD_US, then start, call, end)
  nolead  the same timer with no spin (the timer before the change)
  synced  flush, synchronize, then start, call, end: the host's launch path fully inside the span
and the host's own time per call (no synchronisation), so the gap can be read against it.
Usage: python3 scripts/launch_gap_probe.py [problem ...] (default: layernorm rmsnorm reduce_rows)
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from harness.baselines import available, make_baseline  # noqa: E402
from harness.inputs import build_candidate, make_inputs  # noqa: E402
from harness.loader import load_candidate_class, load_problem  # noqa: E402
from harness.timing import CudaTimer  # noqa: E402

SHAPES = {"layernorm": {"batch_size": 1, "dim": 4096}, "rmsnorm": {"batch_size": 7, "dim": 3584},
          "reduce_rows": {"rows": 127, "cols": 8192}, "softmax": {"batch_size": 7, "dim": 32000}}
CALLS = 400


def percentiles(times: list[float]) -> str:
    q = statistics.quantiles(times, n=20)
    return f"min {min(times):6.1f}  p25 {q[4]:6.1f}  p50 {statistics.median(times):6.1f}  p75 {q[14]:6.1f}  " \
           f"p95 {q[18]:6.1f}"


def samples(timer: CudaTimer, fn, synced: bool = False) -> list[float]:
    timer.warmup(fn)
    out: list[float] = []
    while len(out) < CALLS:
        if not synced:
            out += timer.time_batch(fn, 10)
            continue
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        timer.flush()
        torch.cuda.synchronize()
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        out.append(start.elapsed_time(end) * 1000.0)
    return out


def host_us(fn) -> float:
    fn()
    torch.cuda.synchronize()
    begin = time.perf_counter()
    for _ in range(200):
        fn()
    spent = (time.perf_counter() - begin) / 200 * 1e6
    torch.cuda.synchronize()
    return spent


def implementations(name, problem, shape, dtype):
    names = [n for n in ("eager", "liger", "compile") if n in available(problem, False)]
    impls = {n: make_baseline(problem, n, shape, dtype, 0, "cuda") for n in names}
    family = Path("solutions") / name / "triton_family.py"
    impls["triton_family"] = build_candidate(problem, load_candidate_class(family, "probe_family"), shape, dtype,
                                             0, "cuda")
    return impls


def main(names: list[str]) -> None:
    lead, nolead = CudaTimer(lead_us=100.0), CudaTimer(lead_us=0.0)
    for name in names:
        problem = load_problem(Path("problems") / f"{name}.py")
        shape = SHAPES[name]
        dtype = problem.meta.dtypes[0]
        inputs = make_inputs(problem, shape, dtype, 1, "cuda")
        print(f"{name} {shape} {dtype}", flush=True)
        with torch.no_grad():
            for impl, model in implementations(name, problem, shape, dtype).items():
                fn = lambda m=model, x=inputs: m(*x)  # noqa: E731
                rows = [("lead", samples(lead, fn)), ("nolead", samples(nolead, fn)),
                        ("synced", samples(nolead, fn, synced=True))]
                host = host_us(fn)
                for how, times in rows:
                    print(f"  {impl:14s} {how:7s} {percentiles(times)}")
                print(f"  {impl:14s} host    {host:6.1f} us a call", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["layernorm", "rmsnorm", "reduce_rows"])
