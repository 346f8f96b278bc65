"""CUDA-event timing with an L2 flush before every call and an adaptive stopping rule.

Same method as triton.testing.do_bench (events around each call, a 256 MiB write to flush L2 first),
but it stops when the relative standard error of the mean is small, or a time budget ends.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

FLUSH_BYTES = 256 * 1024 * 1024
BATCH = 10


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


def summarize(times_us: list[float]) -> Timing:
    """Median, interquartile range and relative standard error of the mean of per-call times."""
    n = len(times_us)
    q = statistics.quantiles(times_us, n=4) if n >= 2 else [times_us[0]] * 3
    mean = statistics.fmean(times_us)
    sd = statistics.stdev(times_us) if n >= 2 else 0.0
    rse = sd / (mean * n**0.5) if mean > 0 else 0.0
    return Timing(statistics.median(times_us), q[2] - q[0], n, rse, mean, statistics.pstdev(times_us),
                  min(times_us), max(times_us))


class CudaTimer:
    """Times zero-argument callables on the current stream."""

    def __init__(self, warmup_ms: float = 25.0, min_runs: int = 10, max_runs: int = 500,
                 target_rse: float = 0.005, budget_s: float = 1.0):
        self.warmup_ms, self.min_runs, self.max_runs = warmup_ms, min_runs, max_runs
        self.target_rse, self.budget_s = target_rse, budget_s
        self.flush_buffer = torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda")

    def _batch(self, fn: Callable[[], object], n: int) -> list[float]:
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        for start, end in zip(starts, ends):
            self.flush_buffer.zero_()
            start.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends)]

    def warmup(self, fn: Callable[[], object]) -> None:
        fn()
        torch.cuda.synchronize()
        begin = time.perf_counter()
        while (time.perf_counter() - begin) * 1000.0 < self.warmup_ms:
            fn()
            torch.cuda.synchronize()

    def measure(self, fn: Callable[[], object]) -> Timing:
        self.warmup(fn)
        times: list[float] = []
        begin = time.perf_counter()
        while len(times) < self.max_runs:
            times += self._batch(fn, min(BATCH, self.max_runs - len(times)))
            if len(times) >= self.min_runs:
                if summarize(times).rse < self.target_rse or time.perf_counter() - begin > self.budget_s:
                    break
        return summarize(times)
