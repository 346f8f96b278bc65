"""Is cuBLAS's per-process speed a choice of kernel or a draw of the machine? A GPU probe.

torch.matmul's median at one shape moves 5-15 % from one process to the next (scripts/process_spread.py: 8192x3072x8192
bf16 537-543 us in three children and 584-595 in four, one H100, 2026-12-07, scripts/child_order_probe.py), while our
persistent Triton matmul moves about 1 %. This starts N fresh processes; each times torch.matmul at the shape (CUDA
events, 30 back-to-back calls after 10 warm-up calls; the harness instead flushes L2 before each call), names the
kernels it launched (torch.profiler), then allocates a padding buffer, makes new copies of A and B at other addresses
and times the two pairs in alternating blocks (original, copy, original, ...).
If the slow processes launch another kernel, cuBLAS's heuristic is the draw; if the kernel is the same and a block's
time follows the tensors (the original always one speed, the copy another), it is where the tensors lie in memory;
if it changes between blocks of the same tensors, it is the machine's state over time. Last, four medians of the
original by the bench's own timer (harness/timing.py: a clean L2 flush and a spin before each call), which is
where the two modes were seen.

H100, 2026-12-07 (rounds/20261207-1028-h100-cublas-draw*, -1043-cublas-draw-3001*): one kernel in every process at
each shape; 8192x3072x8192 530.6-531.6 us and 4096x3584x18944 679.7-681.0 in every process and copy, but
3001x8192x28672 1690-1696 us in 15 of 28 blocks (14 processes, original and copy) and 1721-1861 in the other 13, the
copy in the other group from the original in 5 of the 14 processes.

    python3 scripts/cublas_draw_probe.py OUT.tsv [--processes 8] [--shape 8192x3072x8192 ...]   (shape: M x K x N)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, math, statistics, sys, torch
m, k, n = (int(v) for v in sys.argv[1].split("x"))
torch.manual_seed(0)
a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
b = (torch.randn(k, n, device="cuda") / math.sqrt(k)).to(torch.bfloat16)

def timed(a, b):
    for _ in range(10):
        torch.matmul(a, b)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(30)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(30)]
    for s, e in zip(starts, ends):
        s.record(); torch.matmul(a, b); e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) * 1000 for s, e in zip(starts, ends))

def kernels(a, b):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        torch.matmul(a, b); torch.cuda.synchronize()
    return sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})

first = timed(a, b)
names = kernels(a, b)
pad = torch.empty(3 * 2**30 + 12345 * 512, dtype=torch.uint8, device="cuda")  # other addresses for the copies
a2, b2 = a.clone(), b.clone()
second = timed(a2, b2)
names2 = kernels(a2, b2)
blocks = [round(timed(*((a2, b2) if i % 2 else (a, b))), 1) for i in range(6)]  # original, copy, original, ...
from harness.timing import CudaTimer  # the bench's own timer: a clean L2 flush and a spin before every call
timer = CudaTimer()
harness_blocks = [round(timer.measure(lambda: torch.matmul(a, b)).median_us, 1) for _ in range(4)]
print(json.dumps(dict(first_us=first, second_us=second, kernel=";".join(names), kernel2=";".join(names2),
                      a_ptr=hex(a.data_ptr()), a2_ptr=hex(a2.data_ptr()), blocks=blocks,
                      harness_blocks=harness_blocks)))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--shape", action="append", default=None, help="M x K x N (repeatable)")
    args = parser.parse_args(argv)
    shapes = args.shape or ["8192x3072x8192", "3001x8192x28672"]
    rows = []
    with args.out.open("w") as sink:
        sink.write("shape\tprocess\tfirst_us\tsecond_us\tkernel\tkernel2\ta_ptr\ta2_ptr\tblocks\tharness_blocks\n")
        for shape in shapes:
            for i in range(args.processes):
                done = subprocess.run([sys.executable, "-c", CHILD, shape], capture_output=True, text=True,
                                      timeout=120, cwd=ROOT)
                if done.returncode != 0:
                    print(f"{shape} process {i}: failed: {done.stderr.strip().splitlines()[-1:]}", flush=True)
                    continue
                r = json.loads(done.stdout.strip().splitlines()[-1]) | {"shape": shape, "process": i}
                rows.append(r)
                sink.write("\t".join(str(r[f]) for f in ("shape", "process", "first_us", "second_us", "kernel",
                                                         "kernel2", "a_ptr", "a2_ptr", "blocks",
                                                         "harness_blocks")) + "\n")
                sink.flush()
                print(f"{shape} #{i}: {r['first_us']:.1f} us, copies {r['second_us']:.1f} us, then original / copy "
                      f"{' / '.join(str(v) for v in r['blocks'])}, the bench's timer "
                      f"{' / '.join(str(v) for v in r['harness_blocks'])}; {r['kernel']}"
                      + ("" if r["kernel2"] == r["kernel"] else f" / copies: {r['kernel2']}"), flush=True)
    for shape in shapes:
        mine = [r for r in rows if r["shape"] == shape]
        if mine:
            firsts = [r["first_us"] for r in mine]
            print(f"{shape}: {len(mine)} processes, first {min(firsts):.1f}-{max(firsts):.1f} us "
                  f"(median {statistics.median(firsts):.1f}), kernels seen: {len({r['kernel'] for r in mine})}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
