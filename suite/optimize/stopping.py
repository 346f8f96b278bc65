"""When the loop stops: pure functions of the loop's progress and the clock, tested without a GPU."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    plateau: int | None = 20  # stop after this many discards in a row
    target_pct_sol: float | None = None  # stop once the best reaches this % of speed of light
    problem_budget_s: float | None = None  # per problem, from that problem's start
    total_budget_s: float | None = None  # whole command, from its start


@dataclass
class Progress:
    problem_started: float
    total_started: float
    experiments: int = 0
    discards_in_a_row: int = 0
    best_pct_sol: float | None = None
    interrupted: bool = False  # Ctrl-C
    exhausted: bool = False  # the proposer has nothing left (or its token budget is spent)

    def record(self, kept: bool) -> None:
        self.experiments += 1
        self.discards_in_a_row = 0 if kept else self.discards_in_a_row + 1


def stop_reason(progress: Progress, limits: Limits, now: float) -> str | None:
    """The first rule that fires, as a sentence for the log; None to go on."""
    if progress.interrupted:
        return "interrupted (Ctrl-C): best so far kept"
    if progress.exhausted:
        return "the proposer has nothing more to propose"
    if limits.total_budget_s is not None and now - progress.total_started >= limits.total_budget_s:
        return f"total time budget of {limits.total_budget_s / 60:g} min spent"
    if limits.problem_budget_s is not None and now - progress.problem_started >= limits.problem_budget_s:
        return f"per-problem time budget of {limits.problem_budget_s / 60:g} min spent"
    if (limits.target_pct_sol is not None and progress.best_pct_sol is not None
            and progress.best_pct_sol >= limits.target_pct_sol):
        return f"target reached: {progress.best_pct_sol:.1f} % of speed of light >= {limits.target_pct_sol:g} %"
    if limits.plateau is not None and progress.discards_in_a_row >= limits.plateau:
        return f"plateau: {progress.discards_in_a_row} discards in a row"
    return None
