"""Does the L2 flush itself cost the timed kernel time? A GPU probe for the harness's method.

The harness (like triton.testing.do_bench and GPU MODE's eval) flushes L2 by writing 256 MiB just
before each timed call. The last tens of MB of that write are still dirty in L2 when the kernel starts,
so the kernel's own reads may pay for writing them back to DRAM. Every implementation pays the same,
so speedups are fair, but % of speed of light would be understated by a fixed few microseconds.

This times a copy and a read-only sum at several sizes with three flushes, side by side in one process:
  none   no flush (L2 may hold the inputs: a lower bound),
  write  the harness's flush (a 256 MiB write),
  clean  the same write, then a read of another 256 MiB buffer, so L2 holds clean, unrelated lines.
  cushion  the harness's flush, then a ~100 us spin on the GPU before the start event, so the host has
         enqueued the call before the GPU reaches the event (launch latency cannot enter the window).
If `write` exceeds `clean` by a constant, that constant is the flush's cost, not the kernel's. If `write`
exceeds `cushion` for the small, Python-launched Triton kernel (vectorsum_v2's triton_balanced at
1,638,400 floats), host launch time is leaking into the harness's small-shape times.
Usage (on a GPU machine, from the repo root): python3 scripts/flush_probe.py   (about 30 s)
"""

import importlib.util
import statistics
import sys
from pathlib import Path

import torch

FLUSH_BYTES = 256 * 1024 * 1024
RUNS = 200
CUSHION_CYCLES = 200_000  # ~100 us at the H200's ~2 GHz
VECTORSUM = Path(__file__).resolve().parent.parent / "solutions" / "vectorsum_v2" / "triton_balanced.py"


def timed(fn, flush) -> float:
    """Median microseconds of fn over RUNS calls, each after `flush`, events around the call only."""
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(RUNS)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(RUNS)]
    for _ in range(5):
        fn()
    for start, end in zip(starts, ends):
        flush()
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends))


def ops(mib: int) -> list:
    """(name, call, MB moved): a fp16 copy of `mib` MiB and a float32-accumulated sum of it."""
    x = torch.randn(mib * 1024 * 1024 // 2, dtype=torch.float16, device="cuda")
    y, out = torch.empty_like(x), torch.empty((), dtype=torch.float32, device="cuda")
    return [("copy", lambda: y.copy_(x), 2 * mib),
            ("sum", lambda: torch.sum(x, dim=0, dtype=torch.float32, out=out), mib)]


def triton_op() -> tuple:
    """vectorsum_v2's single-launch Triton kernel at the smallest benchmark size: host-launch heavy."""
    spec = importlib.util.spec_from_file_location("ksuite_probe_vectorsum", VECTORSUM)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = torch.randn(1_638_400, dtype=torch.float32, device="cuda")
    return ("triton", lambda: module.vector_sum(x), 4 * x.numel() / 2**20)


def main() -> int:
    if not torch.cuda.is_available():
        print("flush_probe.py needs a CUDA device", file=sys.stderr)
        return 2
    dirty = torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda")
    other = torch.ones(FLUSH_BYTES // 4, dtype=torch.float32, device="cuda")
    sink = torch.empty((), dtype=torch.float32, device="cuda")
    flushes = {
        "none": lambda: None,
        "write": lambda: dirty.zero_(),
        "clean": lambda: (dirty.zero_(), torch.sum(other, dim=0, out=sink)),
        "cushion": lambda: (dirty.zero_(), torch.cuda._sleep(CUSHION_CYCLES)),
    }
    print(f"{torch.cuda.get_device_name()}: median us over {RUNS} calls")
    print(f"{'op':<6} {'MB moved':>9} " + " ".join(f"{name:>8}" for name in flushes)
          + "  write-clean  write-cushion")
    cases = [case for mib in (16, 32, 64, 128, 256) for case in ops(mib)] + [triton_op()]
    for op, fn, moved in cases:
        us = {name: timed(fn, flush) for name, flush in flushes.items()}
        print(f"{op:<6} {moved * 1.048576:>9.1f} " + " ".join(f"{us[k]:>8.1f}" for k in flushes)
              + f"  {us['write'] - us['clean']:>+11.1f}  {us['write'] - us['cushion']:>+13.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
