"""Does a worker's first measurement after an idle GPU time slow? A GPU probe for the small-shape gap.

scripts/small_shape_probe.py timed triton_family and torch.compile in one process, interleaved, and found
them tied (0.98-1.13x) at decode shapes where `ksuite bench`, timing each in its own worker, had the family
0.83-0.92x. A fresh candidate worker starts after the GPU idled (its imports, its correctness stages run on
the host too), and the timer's warm-up calls a few-microsecond kernel with a synchronize after each, which
leaves the GPU idle most of the time: if the SM clock has dropped, the first timed calls run at a lower
clock. This idles the GPU, then measures one small kernel several times in a row, with the timer's plain
warm-up and with a busy warm-up (the flush and the call back to back, no synchronize, for BUSY_MS), and
samples the SM clock (nvidia-smi, every 20 ms) beside it: printed per measurement, median and clock.
Usage: python3 scripts/clock_settle_probe.py
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from harness.inputs import build_candidate, make_inputs  # noqa: E402
from harness.loader import load_candidate_class, load_problem  # noqa: E402
from harness.timing import CudaTimer  # noqa: E402

IDLE_S = 3.0
BUSY_MS = 200.0
REPEATS = 6


def busy_warmup(timer: CudaTimer, fn, ms: float) -> None:
    begin = time.perf_counter()
    while (time.perf_counter() - begin) * 1000.0 < ms:
        for _ in range(10):
            timer.flush()
            fn()
        torch.cuda.synchronize()


def main() -> None:
    clocks = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw",
                               "--format=csv,noheader", "-lms", "20"], stdout=subprocess.PIPE, text=True)
    problem = load_problem(Path("problems/swiglu_act.py"))
    cls = load_candidate_class(Path("solutions/swiglu_act/triton_family.py"), "probe_family")
    shape = {"rows": 1, "cols": 14336}
    inputs = make_inputs(problem, shape, "float16", 1, "cuda")
    model = build_candidate(problem, cls, shape, "float16", 0, "cuda")
    timer = CudaTimer()
    fn = lambda: model(*inputs)  # noqa: E731
    with torch.no_grad():
        for how in ("plain", "busy", "plain", "busy"):
            time.sleep(IDLE_S)
            t0 = time.time()
            if how == "busy":
                busy_warmup(timer, fn, BUSY_MS)
            for k in range(REPEATS):
                m = timer.measure(fn)
                print(f"{how:6s} #{k} at {time.time() - t0:6.3f} s: median {m.median_us:6.2f} us over {m.runs} runs",
                      flush=True)
    clocks.terminate()
    out = clocks.communicate(timeout=5)[0].splitlines()
    print(f"SM clock samples (every 20 ms, {len(out)}): " + " ".join(line.split(",")[1].strip().split()[0]
                                                               for line in out if line.count(",") >= 3))


if __name__ == "__main__":
    main()
