"""CUDA-event timing with an L2 flush before every call and an adaptive stopping rule.

Like triton.testing.do_bench (events around each call, L2 flushed first), but it stops when the relative
standard error of the mean is small, or a time budget ends. The flush differs on purpose: do_bench and
GPU MODE write 256 MiB, which leaves up to L2's size of dirty lines whose write-back lands inside the
timed call (measured on an H200 by scripts/flush_probe.py: a 134 MB read-only sum took 48.0 us after
the write and 41.0 us after a clean flush). The harness's default flush is "clean": the same write, then
a read of another 256 MiB buffer, so L2 holds clean lines of neither the inputs nor the flush. "write"
keeps the do_bench method, for comparing with tools that use it.

After the flush the GPU also spins (torch.cuda._sleep) before the start event, so the host is ahead of the
GPU when it enqueues the timed call: the timed span is device time only, never the host's launch path
(Python wrappers, guards) racing a GPU that already finished the flush. Host launch cost does matter at
decode sizes, but it belongs to the caller's launch path (a CUDA graph removes it), not to the kernel, and a
timer that includes it only sometimes returns bimodal samples: on the H200, torch.compile's layernorm at
1x4096 had a median of 35.6 us without the spin and 4.9 with it (scripts/launch_gap_probe.py). The spin is
at least LEAD_US and covers the launch path it measures during warm-up (lead_us_for): a fixed 100 us was
too short for a two-kernel softmax whose host path is longer, on the H200 (run 20261202-041318, 7x151936
bf16: median 31.7 us, interquartile range 70, minimum 8.1; 9.0 us in the next run).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import torch

FLUSH_BYTES = 256 * 1024 * 1024
BATCH = 10
LEAD_US = 100.0  # the least spin before a timed call
LEAD_PER_HOST = 2.0  # the spin covers this many times the launch path's 90th-percentile host time
MAX_LEAD_US = 2000.0  # a callable whose host path is slower still may leak host time into its samples


@dataclass(frozen=True)
class Timing:
    median_us: float
    iqr_us: float
    runs: int
    rse: float
    # KernelBench's statistics (baseline-times JSON: mean, std, min, max), kept beside ours
    mean_us: float | None = field(default=None, compare=False)
    std_us: float | None = field(default=None, compare=False)
    min_us: float | None = field(default=None, compare=False)
    max_us: float | None = field(default=None, compare=False)
    lead_us: float | None = field(default=None, compare=False)  # the GPU's spin before each timed call
    # the 10th percentile: at a few microseconds the per-call times spread over modes about 0.6 us apart, and the
    # median says which mode most samples fell in; the fast mode's level, unlike the minimum, does not fall as the
    # timer takes more samples of a noisier callable (scripts/min_vs_median.py)
    p10_us: float | None = field(default=None, compare=False)


def summarize(times_us: list[float]) -> Timing:
    """Median, interquartile range and relative standard error of the mean of per-call times."""
    n = len(times_us)
    q = statistics.quantiles(times_us, n=4) if n >= 2 else [times_us[0]] * 3
    mean = statistics.fmean(times_us)
    sd = statistics.stdev(times_us) if n >= 2 else 0.0
    rse = sd / (mean * n**0.5) if mean > 0 else 0.0
    p10 = statistics.quantiles(times_us, n=10)[0] if n >= 2 else times_us[0]
    return Timing(statistics.median(times_us), q[2] - q[0], n, rse, mean, statistics.pstdev(times_us),
                  min(times_us), max(times_us), p10_us=p10)


FLUSHES = ("clean", "write")


def lead_us_for(host_us: list[float], floor_us: float = LEAD_US) -> float:
    """The spin before each timed call: at least floor_us, and LEAD_PER_HOST times the 90th percentile of
    the host's time to return from the callable (its whole launch path, every kernel of it), so the GPU
    is still spinning when the last kernel is enqueued. floor_us <= 0 turns the spin off."""
    if floor_us <= 0:
        return 0.0
    if not host_us:
        return floor_us
    ranked = sorted(host_us)
    p90 = ranked[int(0.9 * (len(ranked) - 1))]
    return min(MAX_LEAD_US, max(floor_us, LEAD_PER_HOST * p90))


_CYCLES_PER_US: dict = {}


def _sleep_cycles_per_us() -> float:
    """torch.cuda._sleep spins for a number of GPU clock cycles: how many make a microsecond here."""
    device = torch.cuda.current_device()
    if device not in _CYCLES_PER_US:
        cycles = 2_000_000
        torch.cuda._sleep(cycles)  # warm
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(cycles)
        end.record()
        torch.cuda.synchronize()
        _CYCLES_PER_US[device] = cycles / max(start.elapsed_time(end) * 1000.0, 1.0)
    return _CYCLES_PER_US[device]


class CudaTimer:
    """Times zero-argument callables on the current stream."""

    def __init__(self, warmup_ms: float = 25.0, min_runs: int = 10, max_runs: int = 500,
                 target_rse: float = 0.005, budget_s: float = 1.0, flush: str = "clean",
                 lead_us: float = LEAD_US):
        if flush not in FLUSHES:
            raise ValueError(f"flush must be one of {FLUSHES}, got {flush!r}")
        self.warmup_ms, self.min_runs, self.max_runs = warmup_ms, min_runs, max_runs
        self.target_rse, self.budget_s, self.flush_kind = target_rse, budget_s, flush
        self.flush_buffer = torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda")
        if flush == "clean":
            self.read_buffer = torch.ones(FLUSH_BYTES // 4, dtype=torch.float32, device="cuda")
            self.sink = torch.empty((), dtype=torch.float32, device="cuda")
        self.floor_lead_us = lead_us
        self.set_lead(lead_us)

    def set_lead(self, lead_us: float) -> None:
        self.lead_us = max(lead_us, 0.0)
        self.lead_cycles = int(lead_us * _sleep_cycles_per_us()) if lead_us > 0 else 0

    @property
    def held_bytes(self) -> int:
        """Device bytes the timer holds for its whole life (the flush buffers): the worker's, not a trial's."""
        held = [self.flush_buffer, getattr(self, "read_buffer", None), getattr(self, "sink", None)]
        return sum(t.untyped_storage().nbytes() for t in held if t is not None)

    def flush(self) -> None:
        """Evict L2 before a timed call; "clean" also reads another buffer, so the write's dirty lines
        are written back here and not inside the timed call."""
        self.flush_buffer.zero_()
        if self.flush_kind == "clean":
            torch.sum(self.read_buffer, dim=0, out=self.sink)
        if self.lead_cycles:
            torch.cuda._sleep(self.lead_cycles)

    def time_batch(self, fn: Callable[[], object], n: int) -> list[float]:
        """Per-call times (us) of n calls of fn, each after a flush, one synchronize at the end."""
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        for start, end in zip(starts, ends):
            self.flush()
            start.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends)]

    def warmup(self, fn: Callable[[], object]) -> list[float]:
        """Calls fn for warmup_ms; the host's time (us) to return from each call after the first."""
        fn()
        torch.cuda.synchronize()
        host_us = []
        begin = time.perf_counter()
        while (time.perf_counter() - begin) * 1000.0 < self.warmup_ms:
            called = time.perf_counter()
            fn()
            host_us.append((time.perf_counter() - called) * 1e6)
            torch.cuda.synchronize()
        return host_us

    def prepare(self, *fns: Callable[[], object]) -> None:
        """Warm each callable up, then set the spin to cover the slowest one's launch path (callables
        timed in turn share one spin)."""
        self.set_lead(max(lead_us_for(self.warmup(fn), self.floor_lead_us) for fn in fns))

    def measure(self, fn: Callable[[], object]) -> Timing:
        self.prepare(fn)
        times: list[float] = []
        begin = time.perf_counter()
        while len(times) < self.max_runs:
            times += self.time_batch(fn, min(BATCH, self.max_runs - len(times)))
            if len(times) >= self.min_runs:
                if summarize(times).rse < self.target_rse or time.perf_counter() - begin > self.budget_s:
                    break
        return replace(summarize(times), lead_us=self.lead_us)
