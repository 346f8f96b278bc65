"""Child-process entry: check and time the implementations of one job, streaming events to a file.

Run as `python -m harness.jobs.worker JOB.json EVENTS.jsonl`. Every event is flushed as soon as it is known,
so whatever finished before a crash or a hang survives it.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from dataclasses import replace

import torch

from harness import baselines, cuda_build, memory, metrics, shape_spec
from harness.blame import CandidateError
from harness.children.launcher import exit_with_parent
from harness.compare import as_tensor_list
from harness.correctness import Checker, FatalDeviceError, is_fatal, run_stages
from harness.dtype_choice import select_dtypes
from harness.environment import gpu_slug
from harness.inputs import build_candidate, make_inputs
from harness.integrity import checks, static_check
from harness.integrity.dispatch_check import install_launch_counter
from harness.integrity.probe import probe
from harness.loader import (
    DEFAULT_TOLERANCES,
    LoadError,
    dispatch_table_gpu,
    load_candidate_class,
    load_problem,
    unavailable_here,
    unique_shapes,
)
from harness.precision import strict_float32
from harness.ran_hash import ran_hash
from harness.records import StageResult, shape_text
from harness.spec import Options, SolutionRef, file_hash
from harness.timing import CudaTimer


class Events:
    def __init__(self, path: str):
        self.file = open(path, "a", buffering=1)

    def emit(self, **event) -> None:
        self.file.write(json.dumps(event, default=str) + "\n")
        self.file.flush()
        os.fsync(self.file.fileno())


def timed_shapes(problem, options: Options) -> tuple[list[dict], list[dict]]:
    """(shapes the sweep checks, shapes that get a record). On CPU both are the small shapes."""
    meta = problem.meta
    if options.custom_shapes:  # --shape: what the user asked for, on CPU too; smoke still at a small shape
        custom = shape_spec.custom_shapes(problem, tuple(options.custom_shapes))
        return unique_shapes(list(meta.small_shapes) + custom), custom
    if options.interpret:
        return meta.sweep("small"), meta.sweep("small")
    if options.shapes == "small":
        return meta.sweep("small"), meta.sweep("small")
    if options.shapes in ("large", "workload", "tuning", "heldout"):
        timed = meta.sweep(options.shapes)
    else:
        timed = unique_shapes(list(meta.shapes) + list(meta.large_shapes)) or meta.sweep("small")
    return unique_shapes(list(meta.small_shapes) + timed), timed



class JobRunner:
    def __init__(self, job: dict, events: Events):
        self.options = Options(**{**job["options"], "dtypes": tuple(job["options"].get("dtypes", ())),
                                  "done": ()})
        self.done = {(name, tuple(tuple(kv) for kv in shape), dtype) for name, shape, dtype in job["options"]["done"]}
        self.events = events
        self.device = "cpu" if self.options.interpret else "cuda"
        self.problem = load_problem(job["problem_path"])
        if self.options.tolerance == "kernelbench":  # their allclose in every stage, whatever META declares
            self.problem.meta = replace(self.problem.meta, tolerances=dict(DEFAULT_TOLERANCES))
        self.problem_name = job["problem_name"]
        self.dtypes = select_dtypes(list(self.problem.meta.dtypes), self.options.dtypes, str(self.problem.path))
        self.sweep, self.timed = timed_shapes(self.problem, self.options)
        self.shape_sets = {tuple(sorted(s.items())): self.problem.meta.set_of(s, self.options.shapes)
                           for s in self.timed} if not self.options.interpret else {}
        self.recorded: set = set()
        self.stages_s: float | None = None  # the current solution's correctness stages, on its records
        self.table_gpu: str | None = None  # the GPU whose dispatch table the current solution runs, on its records
        o = self.options
        self.timer = (CudaTimer(o.warmup_ms, o.min_runs, o.max_runs, o.target_rse, o.budget_s, o.flush)
                      if o.time else None)
        # the worker's own device buffers, which no record's peak counts: the timer's and cuBLAS's
        self.fixed_bytes = self.timer.held_bytes + memory.library_workspace_bytes() if self.timer else 0

    def record(self, impl: SolutionRef, shape: dict, dtype: str, **fields) -> None:
        self.recorded.add((impl.name, tuple(sorted(shape.items())), dtype))
        if impl.kind == "solution" and self.stages_s is not None:
            fields.setdefault("stages_s", self.stages_s)
        if impl.kind == "solution" and self.table_gpu is not None:
            fields.setdefault("table_gpu", self.table_gpu)
        if impl.kind == "solution" and impl.path:
            fields.setdefault("ran_hash", ran_hash(impl.path, gpu_slug()))
        shape_set = self.shape_sets.get(tuple(sorted(shape.items())), "small" if self.options.interpret else None)
        self.events.emit(event="measurement", problem=self.problem_name, solution=impl.name, kind=impl.kind,
                         shape=shape, dtype=dtype, shape_set=shape_set,
                         source_hash=file_hash(impl.path) if impl.path else file_hash(self.problem.path),
                         **fields)

    def fail_all(self, impl: SolutionRef, error: str) -> None:
        """A failure record for every (shape, dtype) of this implementation not yet recorded."""
        for shape, dtype in self.todo(impl):
            if (impl.name, tuple(sorted(shape.items())), dtype) not in self.recorded:
                self.record(impl, shape, dtype, correct=False, error=error)

    def skip_all(self, impl: SolutionRef, reason: str) -> None:
        """Neither a pass nor a failure (correct None), with the reason, for every (shape, dtype) to do."""
        for shape, dtype in self.todo(impl):
            self.record(impl, shape, dtype, correct=None, error=reason)

    def todo(self, impl: SolutionRef) -> list[tuple[dict, str]]:
        """(shape, dtype) pairs of this implementation not yet recorded (all of them unless resuming)."""
        return [(shape, dtype) for shape in self.timed for dtype in self.dtypes
                if (impl.name, tuple(sorted(shape.items())), dtype) not in self.done]

    def run_solution(self, impl: SolutionRef) -> None:
        self.stages_s = self.table_gpu = None
        if not self.todo(impl):
            return
        if self.options.integrity:
            tampering = static_check.check_tampering(impl.path)  # before the import: patching happens there
            if tampering:
                self.events.emit(event="stage", impl=impl.name, **StageResult(
                    "integrity", False, tampering, self.timed[0], self.dtypes[0]).to_dict())
                return self.fail_all(impl, f"integrity: {tampering}")
            install_launch_counter()  # before the candidate's import, so its CUDA extensions are counted
        try:
            cls = load_candidate_class(impl.path, f"ksuite_candidate_{impl.name}")
        except LoadError as exc:
            self.events.emit(event="error", impl=impl.name, message=str(exc))
            return self.fail_all(impl, str(exc))

        def make(shape, dtype):
            return build_candidate(self.problem, cls, shape, dtype, self.options.seed, self.device)

        self.table_gpu = dispatch_table_gpu(cls)
        reason = unavailable_here(cls)
        if reason:  # an optional dependency this machine lacks (CUTLASS's headers): skipped, not failed
            self.events.emit(event="skip", impl=impl.name, kind=impl.kind, message=reason)
            return self.skip_all(impl, reason)
        if cuda_build.is_cuda_solution(impl.path):  # build (or load the cached build) before any stage
            failure = cuda_build.known_failure(impl.path) or cuda_build.construct(
                lambda: make(self.problem.meta.small_shapes[0], self.dtypes[0]), impl.path)
            if failure:
                self.events.emit(event="error", impl=impl.name, message=failure)
                return self.fail_all(impl, failure)
        checker = Checker(self.problem, make, self.device, self.options.seed)
        stages_started = time.perf_counter()
        if self.options.integrity and not self.integrity_ok(impl, checker):
            return None
        failed = []
        ok = run_stages(checker, self.sweep, self.dtypes, self.options.trials,
                        lambda r: (self.events.emit(event="stage", impl=impl.name, **r.to_dict()),
                                   failed.append(r) if not r.passed else None))
        self.stages_s = time.perf_counter() - stages_started
        if not ok:
            r = failed[0]
            where = f" at {shape_text(r.shape)} {r.dtype}" if r.shape else ""
            return self.fail_all(impl, f"{r.stage}: {r.detail}{where}")
        self.measure_all(impl, checker)

    def integrity_ok(self, impl: SolutionRef, checker: Checker) -> bool:
        """Source check, then one watched call (on a timed shape on CUDA, where deferred work
        is long enough to see). A failure is an 'integrity' stage line and the reason in every record."""
        started = time.perf_counter()
        dtype, small = self.dtypes[0], self.problem.meta.small_shapes[0]
        shape = small if self.device == "cpu" else next(  # the first timed shape the device can hold
            (s for s in self.timed if not checker.refusal(s, dtype)), small)
        problem = static_check.check_file(impl.path, self.problem.path)
        if problem is None and not checker.refusal(shape, dtype):  # no shape fits: the stages say so
            setup = checker.setup(shape, dtype)
            problem = probe(
                setup.candidate,
                lambda: make_inputs(self.problem, shape, dtype, checker.next_probe_seed(), self.device), self.device)
        if problem is None:  # a line of its own, not a stage: how long the probe took (`ksuite check`)
            self.events.emit(event="integrity", impl=impl.name, passed=True, seconds=time.perf_counter() - started)
            return True
        self.events.emit(event="stage", impl=impl.name,
                         **StageResult("integrity", False, problem, shape, dtype).to_dict())
        self.fail_all(impl, f"integrity: {problem}")
        return False

    def run_baseline(self, impl: SolutionRef) -> None:
        def make(shape, dtype):
            return baselines.make_baseline(self.problem, impl.name, shape, dtype, self.options.seed,
                                           self.device)
        self.measure_all(impl, Checker(self.problem, make, self.device, self.options.seed))

    def measure_all(self, impl: SolutionRef, checker: Checker) -> None:
        for shape, dtype in self.todo(impl):
            reason = baselines.unsupported_at(self.problem, impl.name, shape) if impl.kind == "baseline" else None
            if reason:
                self.events.emit(event="unsupported", impl=impl.name, kind=impl.kind, shape=shape, dtype=dtype,
                                 message=reason)
                continue
            # so that the parent, if this child dies here, charges the death to this shape alone
            self.events.emit(event="measuring", impl=impl.name, shape=shape, dtype=dtype)
            try:
                self.measure_one(impl, checker, shape, dtype)
            except FatalDeviceError:
                raise
            except Exception as exc:  # noqa: BLE001 - recorded, then on to the next shape
                if is_fatal(exc):
                    raise FatalDeviceError(f"{type(exc).__name__}: {exc}") from None
                error = str(exc) if isinstance(exc, CandidateError) else \
                    f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                self.record(impl, shape, dtype, correct=False, error=error)

    def recheck_problem(self, impl: SolutionRef, after: StageResult | None) -> str | None:
        """A failed re-check on the timed inputs refilled in place: a 'recheck' stage line and the error."""
        if after is None or after.passed:
            return None
        detail = f"wrong on the timed input tensors refilled in place (a cached answer?): {after.detail}"
        self.events.emit(event="stage", impl=impl.name,
                         **StageResult("recheck", False, detail, after.shape, after.dtype).to_dict())
        return f"recheck: {detail}"

    def measure_one(self, impl: SolutionRef, checker: Checker, shape: dict, dtype: str) -> None:
        """Check at this shape, time, then re-check on the timed input tensors refilled in place (no cached
        answers, whether keyed on shape, address or identity)."""
        started = time.perf_counter()
        first = checker.trial(shape, dtype)  # builds (and for torch.compile, compiles) the model
        if first.skipped:  # the device cannot hold this shape: "needs 31 GB, 28 GB free"
            return self.record(impl, shape, dtype, correct=False, error=first.detail,
                               peak_mem_bytes=self.own_bytes(memory.peak(self.device)))
        if not first.passed:
            return self.record(impl, shape, dtype, correct=False, error=first.detail,
                               max_abs_err=first.max_abs_err, rel_l2_err=first.rel_l2_err,
                               peak_mem_bytes=self.peak(checker, shape, dtype))
        setup = checker.setup(shape, dtype)
        inputs = make_inputs(self.problem, shape, dtype, checker.fresh_seed(), self.device)
        held = memory.allocated(self.device)
        memory.reset_peak(self.device)  # from here: this call, then the timing (the trials noted their own)
        with torch.no_grad():
            outputs = as_tensor_list(setup.candidate(*inputs))
        nbytes, flops = metrics.work(self.problem, shape, dtype, inputs, outputs)
        fields = dict(bytes=nbytes, flops=flops, max_abs_err=first.max_abs_err, rel_l2_err=first.rel_l2_err,
                      call_extra_bytes=call_extra(held, memory.peak(self.device), outputs))
        if self.timer is None:
            after = (checker.recheck_in_place(shape, dtype, inputs, outputs)
                     if self.options.integrity and impl.kind == "solution" else None)
            problem = self.recheck_problem(impl, after)
            return self.record(impl, shape, dtype, correct=problem is None, error=problem,
                               setup_s=time.perf_counter() - started,
                               peak_mem_bytes=self.peak(checker, shape, dtype), **fields)
        model = setup.candidate
        with torch.no_grad():
            self.timer.warmup(lambda: model(*inputs))
            setup_s = time.perf_counter() - started
            timing = self.timer.measure(lambda: model(*inputs))
        after = checker.recheck_in_place(shape, dtype, inputs, outputs)
        sol_us = metrics.speed_of_light_us(nbytes, flops, self.problem.meta.bound, self.options.copy_bandwidth,
                                           self.options.matmul_rate)
        gbps, tflops = metrics.rates(nbytes, flops, timing.median_us)
        problem = self.recheck_problem(impl, after) or checks.implausible_speed(timing.median_us, sol_us)
        self.record(impl, shape, dtype, correct=problem is None, error=problem, flush=self.timer.flush_kind,
                    lead_us=timing.lead_us, median_us=timing.median_us,
                    iqr_us=timing.iqr_us, runs=timing.runs, rse=timing.rse, mean_us=timing.mean_us,
                    std_us=timing.std_us, min_us=timing.min_us, max_us=timing.max_us, p10_us=timing.p10_us,
                    setup_s=setup_s, gbps=gbps, tflops=tflops, sol_us=sol_us,
                    peak_mem_bytes=self.peak(checker, shape, dtype),
                    pct_sol=(sol_us / timing.median_us * 100.0) if sol_us else None, **fields)

    def peak(self, checker: Checker, shape: dict, dtype: str) -> int | None:
        """Peak device bytes of this (shape, dtype): its stage trials and its measurement (None on CPU)."""
        checker.note_peak(shape, dtype)
        return self.own_bytes(checker.peaks.get((tuple(sorted(shape.items())), dtype)))

    def own_bytes(self, allocated: int | None) -> int | None:
        """A peak without the worker's fixed buffers (the timer's 512 MiB of flush buffers, cuBLAS's 32 MiB
        workspace): what the bound of 4x inputs + outputs judges is what one record's trials hold."""
        if allocated is None:
            return None
        return max(0, allocated - self.fixed_bytes)


def call_extra(held: int | None, peak: int | None, outputs: list) -> int | None:
    """What one call of the implementation held beyond the memory before it and its outputs: its own
    temporaries (eager attention's [heads, seq, seq] scores), which no plan of the harness can bound; None
    on CPU."""
    if held is None or peak is None:
        return None
    return max(0, peak - held - memory.nbytes(outputs))


def open_job(runner_class, job_path: str, events_path: str):
    """A child's start, as harness/jobs/runner.py reads it: the job file, its runner built and the
    'plan' event sent; (runner, events, job), or None after a 'fatal' event when the problem does not load."""
    strict_float32()
    events = Events(events_path)
    with open(job_path) as f:
        job = json.load(f)
    try:
        runner = runner_class(job, events)
    except LoadError as exc:
        events.emit(event="fatal", message=str(exc))
        return None
    events.emit(event="plan", shapes=runner.timed, dtypes=runner.dtypes)
    return runner, events, job


def main(job_path: str, events_path: str) -> int:
    opened = open_job(JobRunner, job_path, events_path)
    if opened is None:
        return 3
    runner, events, job = opened
    for item in job["impls"]:
        impl = SolutionRef(item["name"], item.get("path") and os.path.abspath(item["path"]))
        if impl.kind == "baseline" and impl.name not in baselines.available(runner.problem, runner.options.interpret):
            events.emit(event="skip", impl=impl.name, kind=impl.kind,
                        message=baselines.unavailable_reason(runner.problem, impl.name, runner.options.interpret))
            continue
        if impl.kind == "solution" and runner.device == "cpu" and cuda_build.is_cuda_solution(impl.path):
            runner.skip_all(impl, cuda_build.SKIP_REASON)
            events.emit(event="skip", impl=impl.name, kind=impl.kind, message=cuda_build.SKIP_REASON)
            continue
        events.emit(event="start", impl=impl.name)
        try:
            runner.run_baseline(impl) if impl.kind == "baseline" else runner.run_solution(impl)
        except FatalDeviceError as exc:
            events.emit(event="fatal", impl=impl.name, message=f"device error: {exc}")
            return 4
        except CandidateError as exc:  # the candidate could not be built: its file and line, not ours
            events.emit(event="error", impl=impl.name, message=str(exc), traceback=exc.traceback)
            runner.fail_all(impl, str(exc))
        except Exception as exc:  # noqa: BLE001 - a harness bug must not lose the other records
            events.emit(event="error", impl=impl.name, message=f"{type(exc).__name__}: {exc}",
                        traceback=traceback.format_exc())
            runner.fail_all(impl, f"harness error: {type(exc).__name__}: {exc}")
        memory.release(runner.device)  # the next implementation's memory plan starts from what is free
        events.emit(event="end", impl=impl.name)
    events.emit(event="done")
    return 0


def run_one(job_path: str, events_path: str) -> int:
    """main, under cProfile when KSUITE_PROFILE_DIR names a folder: where a child's wall time goes."""
    folder = os.environ.get("KSUITE_PROFILE_DIR")
    if not folder:
        return main(job_path, events_path)
    import cProfile

    profiler = cProfile.Profile()
    try:
        return profiler.runcall(main, job_path, events_path)
    finally:
        os.makedirs(folder, exist_ok=True)
        profiler.dump_stats(os.path.join(folder, f"worker-{os.getpid()}-{time.monotonic_ns()}.prof"))


def warm_up() -> None:
    """What every job needs before its first step, paid while a spare waits (on a CUDA run: under the
    interpreter no spare is started, and the job would only wait for it): the CUDA context (triton and
    torch are imported), and the imports of the memory plan's first meta-device trace."""
    if os.environ.get("TRITON_INTERPRET") != "1" and torch.cuda.is_available():
        torch.zeros(1, device="cuda")
        torch.cuda.synchronize()
        memory.warm_up_trace()


def serve() -> int:
    """A warm worker (harness/children/worker_pool.py): one job request a line on stdin. After a candidate's job,
    or any job that did not finish cleanly, it exits; after a baseline job it waits for the next."""
    exit_with_parent()
    warm_up()
    for line in sys.stdin:
        request = json.loads(line)
        code = run_one(request["job"], request["events"])
        if code != 0 or not request.get("trusted"):
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)  # a candidate's leaked threads must not keep the process alive
        torch._dynamo.reset()  # the next problem's baselines compile from a clean slate
        # and what this job left in reference cycles (compiled models and their weights) goes now, not into
        # the peaks of the next baseline job this worker takes (a candidate always gets a fresh worker)
        memory.release("cuda" if torch.cuda.is_available() else "cpu")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        sys.exit(serve())
    exit_with_parent()
    sys.exit(run_one(sys.argv[1], sys.argv[2]))
