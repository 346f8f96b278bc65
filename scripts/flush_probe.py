"""Does the L2 flush itself cost the timed kernel time? A GPU probe for the harness's method.

The harness (like triton.testing.do_bench and GPU MODE's eval) flushes L2 by writing 256 MiB just
before each timed call. The last tens of MB of that write are still dirty in L2 when the kernel starts,
so the kernel's own reads may pay for writing them back to DRAM. Every implementation pays the same,
so speedups are fair, but % of speed of light would be understated by a fixed few microseconds.

This times a copy and a read-only sum at several sizes with three flushes, side by side in one process:
  none   no flush (L2 may hold the inputs: a lower bound),
  write  the harness's flush (a 256 MiB write),
  clean  the same write, then a read of another 256 MiB buffer, so L2 holds clean, unrelated lines.
If `write` exceeds `clean` by a constant, that constant is the flush's cost, not the kernel's.
Usage (on a GPU machine): python3 scripts/flush_probe.py   (about 20 s)
"""

import statistics
import sys

import torch

FLUSH_BYTES = 256 * 1024 * 1024
RUNS = 200


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
    }
    print(f"{torch.cuda.get_device_name()}: median us over {RUNS} calls")
    print(f"{'op':<6} {'MB moved':>9} " + " ".join(f"{name:>8}" for name in flushes) + "  write-clean")
    for mib in (16, 32, 64, 128, 256):
        for op, fn, moved in ops(mib):
            us = {name: timed(fn, flush) for name, flush in flushes.items()}
            print(f"{op:<6} {moved * 1.048576:>9.1f} " + " ".join(f"{us[k]:>8.1f}" for k in flushes)
                  + f"  {us['write'] - us['clean']:>+10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
