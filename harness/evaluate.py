"""The harness's one entry point: evaluate a problem's implementations and return finished records."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

from harness import metrics
from harness.records import Measurement
from harness.runner import run_job
from harness.spec import BASELINES, Options, ProblemRef, SolutionRef


def baseline_refs(names: tuple[str, ...] = BASELINES) -> list[SolutionRef]:
    return [SolutionRef(name) for name in names]


def evaluate_problem(problem: ProblemRef, solutions: list[SolutionRef], options: Options,
                     env: dict, run_id: str | None = None, with_baselines: bool = True,
                     on_record: Callable[[Measurement], None] = lambda m: None,
                     on_event: Callable[[dict], None] = lambda e: None) -> list[Measurement]:
    """Baselines first (one child), then each solution in its own child. Every finished record goes to
    `on_record` at once, with speedups against the baselines already measured in this run."""
    records: list[dict] = []
    jobs = ([baseline_refs(options.baselines)] if with_baselines else []) + [[s] for s in solutions]
    out: list[Measurement] = []
    for impls in jobs:
        for event in run_job(problem, impls, options, on_event):
            record = {k: v for k, v in event.items() if k != "event"}
            record.update(gpu=env.get("gpu", "cpu"), env=env, run_id=run_id,
                          timestamp=datetime.now(timezone.utc).isoformat(timespec="seconds"))
            records.append(record)
            metrics.add_speedups(records)
            measurement = Measurement.from_dict(record)
            out.append(measurement)
            on_record(measurement)
    return out
