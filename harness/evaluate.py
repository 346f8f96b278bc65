"""The harness's one entry point: evaluate a problem's implementations and return finished records."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timezone

from harness import baseline_cache, metrics
from harness.jobs.runner import run_job
from harness.records import Measurement
from harness.spec import BASELINES, Options, ProblemRef, SolutionRef


def baseline_refs(names: tuple[str, ...] = BASELINES) -> list[SolutionRef]:
    return [SolutionRef(name) for name in names]


def evaluate_problem(problem: ProblemRef, solutions: list[SolutionRef], options: Options,
                     env: dict, run_id: str | None = None, with_baselines: bool = True,
                     on_record: Callable[[Measurement], None] = lambda m: None,
                     on_event: Callable[[dict], None] = lambda e: None) -> list[Measurement]:
    """Baselines first (one child), then each solution in its own child. Every finished record goes to
    `on_record` at once, with speedups against the baselines already measured in this run. With
    options.baseline_cache "use", kept baseline timings are records at once (marked cached_from) and the
    child times only the rest (harness/baseline_cache.py)."""
    records: list[dict] = []
    out: list[Measurement] = []
    reuse = baseline_cache.plan(problem, options, env, run_id) if with_baselines else None

    def finish(event: dict) -> None:
        record = {k: v for k, v in event.items() if k != "event"}
        record.update(gpu=env.get("gpu", "cpu"), env=env, run_id=run_id,
                      timestamp=datetime.now(timezone.utc).isoformat(timespec="seconds"))
        records.append(record)
        metrics.add_speedups(records)
        if reuse is not None:
            reuse.keep(record)
        measurement = Measurement.from_dict(record)
        out.append(measurement)
        on_record(measurement)

    jobs: list[tuple[list[SolutionRef], Options]] = [([s], options) for s in solutions]
    if with_baselines and reuse is None:
        jobs.insert(0, (baseline_refs(options.baselines), options))
    elif with_baselines:
        on_event({"event": "baseline-cache", "problem": problem.name, "message": reuse.summary()})
        for event in reuse.cached:
            finish(event)
        names = tuple(n for n in options.baselines if not reuse.covers(n))  # every timing kept: no child
        jobs.insert(0, (baseline_refs(names), replace(options, done=options.done + reuse.done)))
    for impls, opts in jobs:
        if not impls:
            continue
        for event in run_job(problem, impls, opts, on_event):
            finish(event)
    return out
