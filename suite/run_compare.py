"""Two recorded runs side by side: the same (problem, implementation, shape, dtype) in each, and whether it
got slower, faster or wrong. Runs on two GPUs compare generations; two runs on one GPU find regressions.

A time counts as changed only beyond both a relative threshold and the runs' own spread (the mean of the
two interquartile ranges), so noise on a shared machine is not reported as a regression.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness import Measurement

REGRESSIONS = ("slower", "now wrong")


@dataclass(frozen=True)
class Row:
    problem: str
    implementation: str
    shape: dict
    dtype: str
    base_us: float | None
    new_us: float | None
    base_pct_sol: float | None
    new_pct_sol: float | None
    status: str  # faster | slower | same | now wrong | fixed | new | gone | untimed

    @property
    def ratio(self) -> float | None:
        """New time over base time: above 1 is slower."""
        return self.new_us / self.base_us if self.base_us and self.new_us else None


def _status(base: Measurement | None, new: Measurement | None, threshold: float) -> str:
    if base is None:
        return "new"
    if new is None:
        return "gone"
    if base.correct is not False and new.correct is False:
        return "now wrong"
    if base.correct is False and new.correct:
        return "fixed"
    if not (base.median_us and new.median_us):
        return "untimed"
    spread = ((base.iqr_us or 0.0) + (new.iqr_us or 0.0)) / 2
    delta = new.median_us - base.median_us
    if abs(delta) <= spread or abs(delta) <= threshold * base.median_us:
        return "same"
    return "slower" if delta > 0 else "faster"


def compare(base: list[Measurement], new: list[Measurement], threshold: float = 0.05) -> list[Row]:
    """One row per (problem, implementation, shape, dtype) found in either run, in the new run's order."""
    def keyed(records):
        return {(r.problem, r.solution, tuple(sorted(r.shape.items())), r.dtype): r for r in records}
    b, n = keyed(base), keyed(new)
    rows = []
    for key in list(n) + [k for k in b if k not in n]:
        old, now = b.get(key), n.get(key)
        ref = now or old
        rows.append(Row(ref.problem, ref.solution, ref.shape, ref.dtype,
                        old.median_us if old else None, now.median_us if now else None,
                        old.pct_sol if old else None, now.pct_sol if now else None,
                        _status(old, now, threshold)))
    return rows


def counts(rows: list[Row]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows:
        out[r.status] = out.get(r.status, 0) + 1
    return out
