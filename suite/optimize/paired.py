"""The keep rule on paired, interleaved timings: a confidence interval on the candidate's speedup.

Best and candidate are timed in rounds, one batch of each in turn on the same inputs (harness/
jobs/tuning_session.py), so each round gives a ratio best/candidate in which clock drift and neighbours
cancel. Over the shapes of one bucket, a round's log-ratio is the mean of its shapes' log-ratios (the
geometric mean speedup of that round). The candidate is kept when the lower end of a bootstrap
confidence interval (over rounds) of that mean is above 1 + min_gain. A pure function of the numbers,
with a seeded resampler, so it is tested without a GPU and gives the same verdict twice. Buckets are
decided separately: a noisy shape in one bucket cannot block a clear win in another.
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass

MIN_GAIN = 0.01
CONFIDENCE = 0.95
RESAMPLES = 2000


@dataclass(frozen=True)
class PairedVerdict:
    keep: bool
    reason: str
    speedup: float | None = None  # geometric mean over rounds and shapes of best / candidate
    low: float | None = None  # lower end of the confidence interval of the speedup
    high: float | None = None


def round_log_ratios(pairs: list[tuple[list[float], list[float]]]) -> list[float]:
    """Per round, the mean over shapes of log(best / candidate); rounds beyond the shortest are dropped."""
    rounds = min(len(b) for b, _ in pairs)
    return [statistics.fmean(math.log(b[r] / c[r]) for b, c in pairs) for r in range(rounds)]


def interval(logs: list[float], confidence: float = CONFIDENCE, resamples: int = RESAMPLES,
             seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `logs`."""
    rng = random.Random(seed)
    n = len(logs)
    means = sorted(statistics.fmean(rng.choices(logs, k=n)) for _ in range(resamples))
    tail = (1 - confidence) / 2
    return means[int(tail * resamples)], means[min(resamples - 1, int((1 - tail) * resamples))]


def near_miss(verdict: PairedVerdict, min_gain: float = MIN_GAIN) -> bool:
    """Not kept, yet faster on this evidence (the interval's lower end above 1) by a gain worth having (the
    estimate at least twice the keep line's gain): a question too few rounds answered, not a tie. The table search
    asks it once more with twice the rounds (on the H100, 2026-12-06, rmsnorm's 4 warps with hints off at the
    3072-column corner: 1.024x [1.008, 1.052] at its tuning shapes, discarded; 1.047x at the held-out 8192x3072)."""
    return (not verdict.keep and verdict.low is not None and verdict.speedup is not None and verdict.low > 1
            and verdict.speedup >= 1 + 2 * min_gain)


def decide(pairs: list[tuple[list[float], list[float]]], min_gain: float = MIN_GAIN,
           confidence: float = CONFIDENCE, seed: int = 0) -> PairedVerdict:
    """`pairs`: per shape of the bucket, (best per-round us, candidate per-round us), same rounds."""
    pairs = [(b, c) for b, c in pairs if b and c]
    if not pairs:
        return PairedVerdict(False, "untimed: nothing can be kept on untimed data")
    if any(v <= 0 for b, c in pairs for v in b + c):
        return PairedVerdict(False, "a non-positive time: the timer failed")
    logs = round_log_ratios(pairs)
    if len(logs) < 3:
        return PairedVerdict(False, f"{len(logs)} rounds: too few for an interval")
    lo, hi = interval(logs, confidence, seed=seed)
    speedup, low, high = math.exp(statistics.fmean(logs)), math.exp(lo), math.exp(hi)
    text = f"{speedup:.3f}x [{low:.3f}, {high:.3f}] over {len(logs)} rounds x {len(pairs)} shape(s)"
    if low > 1 + min_gain:
        return PairedVerdict(True, f"{text}: faster", speedup, low, high)
    return PairedVerdict(False, f"{text}: not above {1 + min_gain:.2f}x", speedup, low, high)
