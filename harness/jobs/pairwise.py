"""Side-by-side timing of two implementations in one child process, alternating, so drift cancels.

The optimisation loop asks "is the candidate faster than the current best?". Timed in two children a
minute apart, clock boosts, thermals and a neighbour's load land on one and not the other; timed here,
batch for batch in turn (the order flipped every round), they land on both alike.

Child: `python -m harness.jobs.pairwise JOB.json EVENTS.jsonl`, the same job and event lines as
harness.jobs.worker (plan, start, measurement, end, done). Parent: `run_pairwise` (best and candidate) or
`run_together` (any number of implementations; baselines too, for `ksuite confirm`, which re-times a run's
close calls this way). Without CUDA all are checked at every shape and the records say untimed (median_us
None). A candidate here shares its process with what it is timed against, as the optimiser's candidates
always have: the static check has read its source before any bench or search ran it.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.children.launcher import POLL_S, Child, EventFollower, child_env
from harness.spec import Options, ProblemRef, SolutionRef


@dataclass
class PairResult:
    """Measurement dicts of both implementations; status ok | crashed | timed-out."""

    records: list[dict] = field(default_factory=list)
    status: str = "ok"
    message: str = ""

    def of(self, name: str) -> list[dict]:
        return [r for r in self.records if r.get("solution") == name]


def run_pairwise(problem: ProblemRef, best: SolutionRef, candidate: SolutionRef, options: Options) -> PairResult:
    """Best and candidate, alternating: run_together with the two."""
    return run_together(problem, [best, candidate], options)


def run_together(problem: ProblemRef, impls: list[SolutionRef], options: Options) -> PairResult:
    """Parent side: children from harness.children.launcher (env, event file, timeout, kill the group).
    A baseline (SolutionRef without a path) is built by harness.baselines, as the bench's workers do."""
    result = PairResult()
    with tempfile.TemporaryDirectory(prefix="ksuite-pair-") as tmp:
        job, events, err = Path(tmp) / "job.json", Path(tmp) / "events.jsonl", Path(tmp) / "stderr.txt"
        opts = {**asdict(options), "dtypes": list(options.dtypes), "done": []}
        job.write_text(json.dumps({"problem_name": problem.name, "problem_path": str(Path(problem.path).resolve()),
                                   "impls": [{"name": i.name, "path": None if i.path is None else str(i.path)}
                                             for i in impls],
                                   "options": opts}))
        child = Child("harness.jobs.pairwise", [str(job), str(events)], child_env(options), err)
        follower, started = EventFollower(events), time.monotonic()
        try:
            while child.poll() is None:
                result.records += [e for e in follower.new_events() if e.get("event") == "measurement"]
                if time.monotonic() - started > options.timeout_s:
                    result.status, result.message = "timed-out", f"timed out after {options.timeout_s:g} s"
                    break
                time.sleep(POLL_S)
        finally:  # a timeout or Ctrl-C: the child is in its own session, so end it here
            child.stop()
        result.records += [e for e in follower.new_events() if e.get("event") == "measurement"]
        if result.status == "ok" and child.returncode != 0:
            result.status = "crashed"
            result.message = child.exit_line()
    return result


def time_alternating(timer, fns: dict, rounds_budget_s: float | None = None) -> dict:
    """Per-call times of each callable, one batch of each in turn, order flipped each round; stops when
    every callable's relative standard error is under the timer's target, or twice its budget ends."""
    from dataclasses import replace

    from harness.timing import BATCH, summarize

    timer.prepare(*fns.values())  # one spin before each call, long enough for the slowest launch path
    times = {name: [] for name in fns}
    names, begin = list(fns), time.perf_counter()
    budget = rounds_budget_s if rounds_budget_s is not None else 2 * timer.budget_s
    while min(len(t) for t in times.values()) < timer.max_runs:
        for name in names:
            times[name] += timer.time_batch(fns[name], BATCH)
        names.reverse()
        if min(len(t) for t in times.values()) >= timer.min_runs:
            if all(summarize(t).rse < timer.target_rse for t in times.values()):
                break
            if time.perf_counter() - begin > budget:
                break
    return {name: replace(summarize(t), lead_us=timer.lead_us) for name, t in times.items()}


class PairRunner:
    """Child side: check both at each timed shape, time them alternating, re-check on fresh inputs."""

    def __init__(self, job: dict, events):
        from harness.jobs.worker import select_dtypes, timed_shapes
        from harness.loader import load_problem
        from harness.timing import CudaTimer

        self.options = Options(**{**job["options"], "dtypes": tuple(job["options"].get("dtypes", ())), "done": ()})
        self.events, self.name = events, job["problem_name"]
        self.device = "cpu" if self.options.interpret else "cuda"
        self.problem = load_problem(job["problem_path"], "ksuite_pair_problem")
        self.dtypes = select_dtypes(list(self.problem.meta.dtypes), self.options.dtypes)
        self.timed = timed_shapes(self.problem, self.options)[1]
        o = self.options
        self.timer = (CudaTimer(o.warmup_ms, o.min_runs, o.max_runs, o.target_rse, o.budget_s, o.flush)
                      if o.time else None)
        self.table_gpus: dict = {}  # solution -> the GPU whose dispatch table it runs (None: no per-GPU tables)

    def record(self, impl: SolutionRef, shape: dict, dtype: str, **fields) -> None:
        from harness.environment import gpu_slug
        from harness.ran_hash import ran_hash
        from harness.spec import file_hash

        if self.table_gpus.get(impl.name):  # the GPU whose dispatch table it ran, as a bench's records say
            fields.setdefault("table_gpu", self.table_gpus[impl.name])
        if impl.kind == "solution" and impl.path is not None:
            fields.setdefault("ran_hash", ran_hash(impl.path, gpu_slug()))
        self.events.emit(event="measurement", problem=self.name, solution=impl.name, kind=impl.kind, shape=shape,
                         dtype=dtype, source_hash=None if impl.path is None else file_hash(impl.path), **fields)

    def run(self, impls: list[SolutionRef]) -> None:
        from harness.baselines import make_baseline
        from harness.correctness import Checker
        from harness.inputs import build_candidate
        from harness.loader import LoadError, dispatch_table_gpu, load_candidate_class

        checkers = {}
        for i, impl in enumerate(impls):
            self.events.emit(event="start", impl=impl.name)
            if impl.kind == "baseline":
                make = (lambda n: lambda s, d: make_baseline(self.problem, n, s, d, self.options.seed,
                                                             self.device))(impl.name)
                checkers[impl.name] = Checker(self.problem, make, self.device, self.options.seed)
                continue
            try:
                cls = load_candidate_class(impl.path, f"ksuite_pair_candidate_{i}")
            except LoadError as exc:
                for shape in self.timed:
                    for dtype in self.dtypes:
                        self.record(impl, shape, dtype, correct=False, error=str(exc))
                continue
            self.table_gpus[impl.name] = dispatch_table_gpu(cls)
            make = (lambda c: lambda s, d: build_candidate(self.problem, c, s, d, self.options.seed, self.device))(cls)
            checkers[impl.name] = Checker(self.problem, make, self.device, self.options.seed)
        for shape in self.timed:
            for dtype in self.dtypes:
                self.measure(shape, dtype, [i for i in impls if i.name in checkers], checkers)
        for impl in impls:
            self.events.emit(event="end", impl=impl.name)

    def measure(self, shape: dict, dtype: str, impls: list[SolutionRef], checkers: dict) -> None:
        import torch

        from harness import metrics
        from harness.compare import as_tensor_list
        from harness.inputs import make_inputs
        from harness.integrity import checks

        live, fields = [], {}
        for impl in impls:
            first = checkers[impl.name].trial(shape, dtype)
            if not first.passed or first.skipped:  # skipped: the device cannot hold the shape
                self.record(impl, shape, dtype, correct=False, error=first.detail, max_abs_err=first.max_abs_err)
                continue
            live.append(impl)
            fields[impl.name] = dict(max_abs_err=first.max_abs_err, rel_l2_err=first.rel_l2_err)
        if not live:
            return
        inputs = make_inputs(self.problem, shape, dtype, checkers[live[0].name].fresh_seed(), self.device)
        models = {i.name: checkers[i.name].setup(shape, dtype).candidate for i in live}
        with torch.no_grad():
            outputs = as_tensor_list(models[live[0].name](*inputs))
        nbytes, flops = metrics.work(self.problem, shape, dtype, inputs, outputs)
        if self.timer is None:
            for impl in live:
                self.record(impl, shape, dtype, correct=True, bytes=nbytes, flops=flops, **fields[impl.name])
            return
        calls = {name: (lambda model: lambda: model(*inputs))(model) for name, model in models.items()}  # noqa: B023
        with torch.no_grad():
            timings = time_alternating(self.timer, calls)
        o = self.options
        sol_us = metrics.speed_of_light_us(nbytes, flops, self.problem.meta.bound, o.copy_bandwidth, o.matmul_rate)
        for impl in live:
            t = timings[impl.name]
            after = checkers[impl.name].trial(shape, dtype)
            error = None if after.passed else f"wrong after timing on fresh inputs: {after.detail}"
            error = error or checks.implausible_speed(t.median_us, sol_us)
            gbps, tflops = metrics.rates(nbytes, flops, t.median_us)
            self.record(impl, shape, dtype, correct=error is None, error=error,
                        flush=getattr(self.timer, "flush_kind", None), lead_us=t.lead_us, median_us=t.median_us,
                        iqr_us=t.iqr_us, runs=t.runs, rse=t.rse, min_us=t.min_us, p10_us=t.p10_us, bytes=nbytes,
                        flops=flops, gbps=gbps, tflops=tflops,
                        sol_us=sol_us, pct_sol=(sol_us / t.median_us * 100.0) if sol_us else None,
                        **fields[impl.name])


def main(job_path: str, events_path: str) -> int:
    from harness.children.launcher import exit_with_parent
    from harness.jobs.worker import open_job

    exit_with_parent()  # like the worker: never outlive the parent on the device
    opened = open_job(PairRunner, job_path, events_path)
    if opened is None:
        return 3
    runner, events, job = opened
    runner.run([SolutionRef(i["name"], None if i["path"] is None else Path(i["path"])) for i in job["impls"]])
    events.emit(event="done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
