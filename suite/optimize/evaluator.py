"""The frozen evaluator the loop calls: the harness's full check, then side-by-side timing.

Nothing here decides anything; it turns harness records into Measurements and statuses."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness import Measurement, Options, ProblemRef, SolutionRef, evaluate_problem
from harness.jobs.pairwise import run_pairwise


@dataclass(frozen=True)
class CheckOutcome:
    status: str  # ok | failed | crashed | timed-out
    detail: str = ""


@dataclass
class PairOutcome:
    status: str  # ok | crashed | timed-out
    best: list[Measurement] = field(default_factory=list)
    candidate: list[Measurement] = field(default_factory=list)
    detail: str = ""


def failure_status(error: str) -> str:
    """The harness writes hangs as 'timed out ...' and dead children as 'crashed: ...'."""
    if "timed out" in error:
        return "timed-out"
    return "crashed" if error.startswith("crashed") else "failed"


class HarnessEvaluator:
    def __init__(self, problem: ProblemRef, check_options: Options, time_options: Options, env: dict | None = None,
                 recorded_baselines: list[Measurement] | None = None):
        self.problem, self.check_options, self.time_options = problem, check_options, time_options
        self.env, self.recorded_baselines = env or {}, recorded_baselines

    @property
    def timed(self) -> bool:
        return self.time_options.time

    def check(self, solution: SolutionRef) -> CheckOutcome:
        """The five stages and the integrity checks, in a child process, at every shape and dtype."""
        records = evaluate_problem(self.problem, [solution], self.check_options, self.env, with_baselines=False)
        if not records:
            return CheckOutcome("crashed", "no records (the problem could not be loaded?)")
        wrong = [r for r in records if not r.correct]
        if wrong:
            error = wrong[0].error or "incorrect"
            return CheckOutcome(failure_status(error), error)
        return CheckOutcome("ok")

    def time_pair(self, best: SolutionRef, candidate: SolutionRef) -> PairOutcome:
        result = run_pairwise(self.problem, best, candidate, self.time_options)
        ms = [Measurement.from_dict({**r, "gpu": self.env.get("gpu", "cpu")}) for r in result.records]
        return PairOutcome(result.status, [m for m in ms if m.solution == best.name],
                           [m for m in ms if m.solution == candidate.name], result.message)

    def baselines(self) -> list[Measurement]:
        """The baselines timed once per problem, for the ledger's speedup column (or, to save GPU time,
        those of the newest recorded `ksuite bench` run on this GPU, when given)."""
        if not self.timed:
            return []
        if self.recorded_baselines:
            return self.recorded_baselines
        return evaluate_problem(self.problem, [], self.time_options, self.env, with_baselines=True)
