"""The engine: load a problem and a candidate, check correctness, time, compare with baselines.

Knows nothing about folders, command lines or leaderboards; every candidate runs in a child process.
"""

from harness.evaluate import evaluate_problem
from harness.records import Measurement, StageResult
from harness.spec import BASELINES, Options, ProblemRef, SolutionRef

__all__ = ["BASELINES", "evaluate_problem", "Options", "ProblemRef", "SolutionRef", "Measurement", "StageResult"]
