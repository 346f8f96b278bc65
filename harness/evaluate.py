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
                     on_event: Callable[[dict], None] = lambda e: None,
                     solution_options: Callable[[Options], Options] | None = None) -> list[Measurement]:
    """Baselines first (one child), then each solution in its own child. Every finished record goes to
    `on_record` at once, with speedups against the baselines already measured in this run. With
    options.baseline_cache "use", kept baseline timings are records at once (marked cached_from) and the
    child times only the rest (harness/baseline_cache.py). `solution_options`, called after the baselines,
    gives the solutions' options (bench: once their CUDA C++ builds are done, carrying any failure)."""
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

    baseline_job: tuple[list[SolutionRef], Options] | None = None
    if with_baselines and reuse is None:
        baseline_job = (baseline_refs(options.baselines), options)
    elif with_baselines:
        on_event({"event": "baseline-cache", "problem": problem.name, "message": reuse.summary()})
        for event in reuse.cached:
            finish(event)
        names = tuple(n for n in options.baselines if not reuse.covers(n))  # every timing kept: no child
        baseline_job = (baseline_refs(names), replace(options, done=options.done + reuse.done))
    if baseline_job and baseline_job[0]:
        for event in run_job(problem, *baseline_job, on_event):
            finish(event)
    solution_opts = solution_options(options) if solution_options and solutions else options
    for solution in solutions:
        for event in run_job(problem, [solution], solution_opts, on_event):
            finish(event)
    return out
