"""The keep/discard rule: a pure function over measurements, so it is tested without a GPU.

A candidate is kept only if it is correct at every timed (shape, dtype), was actually timed, and is
faster than the current best by more than both 1 % and the noise of the two medians, measured as half
of each one's interquartile range relative to its median. No shape may get slower beyond its own noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness.records import Measurement, shape_text

MIN_GAIN = 0.01


@dataclass(frozen=True)
class Verdict:
    keep: bool
    reason: str
    speedup: float | None = None  # geometric mean over shapes of best median / candidate median
    noise: float | None = None  # relative noise bound the speedup had to beat


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def _key(m: Measurement) -> tuple:
    return (tuple(sorted(m.shape.items())), m.dtype)


def relative_noise(best: Measurement, cand: Measurement) -> float:
    """Half the IQR of each median, relative to it: two medians closer than this are indistinguishable."""
    return 0.5 * ((best.iqr_us or 0.0) / best.median_us + (cand.iqr_us or 0.0) / cand.median_us)


def decide(best: list[Measurement], cand: list[Measurement], min_gain: float = MIN_GAIN) -> Verdict:
    """Keep `cand` over `best`? Both lists come from one side-by-side timing run."""
    if not cand:
        return Verdict(False, "no measurements")
    wrong = [c for c in cand if c.correct is not True]
    if wrong:
        return Verdict(False, f"incorrect: {wrong[0].error or 'not checked'}")
    if any(m.median_us is None for m in cand + best):
        return Verdict(False, "untimed: nothing can be kept on untimed data")
    by_key = {_key(b): b for b in best if b.correct and b.median_us}
    missing = [c for c in cand if _key(c) not in by_key]
    if missing:
        return Verdict(False, f"no timing of the best at {shape_text(missing[0].shape)} {missing[0].dtype}")
    pairs = [(by_key[_key(c)], c) for c in cand]
    speedup = geomean([b.median_us / c.median_us for b, c in pairs])
    noise = sum(relative_noise(b, c) for b, c in pairs) / len(pairs)
    for b, c in pairs:
        if b.median_us / c.median_us < 1.0 - max(min_gain, relative_noise(b, c)):
            return Verdict(False, f"slower at {shape_text(c.shape)} {c.dtype}", speedup, noise)
    need = max(min_gain, noise)
    if speedup - 1.0 > need:
        return Verdict(True, f"{speedup:.3f}x faster (needed > {1 + need:.3f}x)", speedup, noise)
    return Verdict(False, f"{speedup:.3f}x is within noise (needed > {1 + need:.3f}x)", speedup, noise)


@dataclass(frozen=True)
class Summary:
    """One ledger row's numbers: geometric means over the timed shapes."""

    correct: bool | None
    median_us: float | None
    pct_sol: float | None
    speedup_vs_baseline: float | None


def summarize(measurements: list[Measurement], baselines: dict | None = None) -> Summary:
    """`baselines` maps (shape items, dtype) to the best baseline's median us at that shape."""
    if not measurements:
        return Summary(None, None, None, None)
    correct = all(m.correct for m in measurements)
    timed = [m for m in measurements if m.median_us]
    if not timed or len(timed) < len(measurements):
        return Summary(correct, None, None, None)
    baselines = baselines or {}
    ratios = [baselines[_key(m)] / m.median_us for m in timed if _key(m) in baselines]
    return Summary(correct, geomean([m.median_us for m in timed]), geomean([m.pct_sol for m in timed]),
                   geomean(ratios) if len(ratios) == len(timed) else None)


def best_baselines(records: list[Measurement]) -> dict:
    """Fastest correct baseline median per (shape, dtype)."""
    out: dict = {}
    for r in records:
        if r.kind == "baseline" and r.correct and r.median_us:
            k = _key(r)
            out[k] = min(out.get(k, r.median_us), r.median_us)
    return out
