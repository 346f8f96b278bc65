"""KernelBench scoring: fast_p and the geometric-mean speedup against a baseline-times JSON.

fast_p is the share of attempted problems whose candidate is correct AND faster than the baseline by
more than p (baseline_time / candidate_time > p); fast_0 is the correctness rate (a correct candidate
that was not timed, as on CPU, counts there and nowhere else). The baseline file is KernelBench's own
(`{"level1": {"19_ReLU.py": {"mean": ms, ...}}}`) or one `ksuite kernelbench baseline` wrote, so scores
are comparable with theirs. Candidate results are a list of {level, problem, correct, runtime_ms}
records, the same nesting as the baseline file with `correct` and `mean` per problem, or samples drawn
from one of our runs (submit/kernelbench_records.py). Pure functions; the CLI only prints.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

P_VALUES = (0.0, 0.5, 0.8, 1.0, 1.5, 2.0)


class ScoreError(ValueError):
    """A malformed results or baseline file; one line naming the file or the problem."""


@dataclass(frozen=True)
class Sample:
    level: str
    problem: str
    correct: bool
    runtime_ms: float | None


@dataclass(frozen=True)
class Score:
    count: int
    fast_p: dict[float, float]
    geomean_speedup: float | None
    speedups: dict[tuple[str, str], float]
    untimed: int = 0  # correct samples without a time: in fast_0 only


def problem_key(name: str) -> str:
    """`19_ReLU`, `19_ReLU.py` and `level1/19_ReLU.py` all name the same KernelBench file."""
    name = Path(name).name
    return name if name.endswith(".py") else f"{name}.py"


def read_json(path: Path):
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ScoreError(f"{path}: cannot read JSON ({exc})") from None


def load_baseline(data: dict) -> dict[tuple[str, str], float]:
    """{(level, file name): mean milliseconds} from KernelBench's baseline-times layout."""
    times = {}
    for level, problems in data.items():
        if not isinstance(problems, dict):
            raise ScoreError(f"baseline: level {level!r} must map file names to timing entries")
        for name, entry in problems.items():
            if not isinstance(entry, dict) or not isinstance(entry.get("mean"), (int, float)):
                raise ScoreError(f"baseline: {level}/{name} has no numeric 'mean'")
            times[(level, problem_key(name))] = float(entry["mean"])
    return times


def load_samples(data) -> list[Sample]:
    """Records or the nested layout; runtime may be `runtime_ms` or `mean` (milliseconds)."""
    if isinstance(data, dict):
        data = [{"level": level, "problem": name, **entry} for level, problems in data.items()
                for name, entry in problems.items()]
    samples = []
    for record in data:
        try:
            runtime = record.get("runtime_ms", record.get("mean"))
            samples.append(Sample(str(record["level"]), problem_key(record["problem"]), bool(record["correct"]),
                                  float(runtime) if runtime is not None else None))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ScoreError(f"results: record {record!r} needs level, problem, correct, runtime_ms") from None
    return samples


def speedup(sample: Sample, baseline: dict[tuple[str, str], float]) -> float | None:
    """baseline / candidate for a correct, timed sample; None when it does not count."""
    key = (sample.level, sample.problem)
    if key not in baseline:
        raise ScoreError(f"baseline: no time for {sample.level}/{sample.problem}")
    if not sample.correct or not sample.runtime_ms or sample.runtime_ms <= 0:
        return None
    return baseline[key] / sample.runtime_ms


def score(samples: list[Sample], baseline: dict[tuple[str, str], float], p_values=P_VALUES) -> Score:
    if not samples:
        raise ScoreError("results: no samples to score")
    speedups = {(s.level, s.problem): speedup(s, baseline) for s in samples}
    counted = [v for v in speedups.values() if v is not None]
    correct = sum(1 for s in samples if s.correct)
    fast = {p: (correct if p == 0 else sum(1 for v in counted if v > p)) / len(samples) for p in p_values}
    geomean = math.exp(sum(math.log(v) for v in counted) / len(counted)) if counted else None
    return Score(len(samples), fast, geomean, {k: v for k, v in speedups.items() if v is not None},
                 correct - len(counted))


def score_files(results: Path, baseline: Path, level: str | None = None) -> Score:
    return score_samples(load_samples(read_json(results)), load_baseline(read_json(baseline)), level)


def score_samples(samples: list[Sample], baseline: dict[tuple[str, str], float], level: str | None = None) -> Score:
    if level:
        samples = [s for s in samples if s.level == level]
    return score(samples, baseline)


def render(result: Score) -> str:
    lines = [f"problems: {result.count}"]
    lines += [f"fast_{p:g}: {share:.3f}" for p, share in result.fast_p.items()]
    shown = f"{result.geomean_speedup:.3f}x" if result.geomean_speedup is not None else "n/a (none correct)"
    lines.append(f"geomean speedup (correct only): {shown}")
    if result.untimed:
        lines.append(f"untimed: {result.untimed} correct sample(s) without a time count in fast_0 only")
    return "\n".join(lines)
