"""Compile the Triton solutions of a run for this GPU on spare CPU cores, ahead of the workers that need them.

On a cold cache each Triton solution spends seconds in Triton's compiler inside its worker, one problem
after another, while the GPU waits: the stages took 4-7 s a solution in a cold `make bench` on the H200
and 2 s warm (runs 20261202-003559 and -004333). The kernels a candidate launches at a shape are those
offline_compile.py makes without running them, for the same target, and Triton keeps each compiled kernel
in its cache folder, which every child of a run shares (harness/cache_dirs.py). Compiled here first, the
worker's launch finds it there. Nothing here decides anything: a compile that fails or times out is
dropped (the worker meets the same failure and records it in its own words), so a run's records are the
same with or without this; only its wall time changes. KSUITE_PRECOMPILE=0 turns it off.

A job that compiled leaves a marker in the Triton cache folder (MARK_DIR, keyed on the problem's and the
solution's source, the dtype, the shapes and the target), so a run on a warm cache starts no child for it:
on the H200 each child imports torch and draws every shape's inputs on the host, seconds of CPU beside the
workers' launch paths, for kernels the cache already holds. The marker lives and goes with the cache it
speaks for; where the environment names no Triton cache folder, nothing is marked.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

PRECOMPILE_ENV = "KSUITE_PRECOMPILE"
TIMEOUT_S = 180.0  # one (solution, dtype): its child imports torch, builds CPU inputs and compiles every shape
# a child's torch ops run on CPU tensors (inputs, a host-side reshape): one thread each, so the workers'
# launch paths keep their cores; and no GPU, so a solution that asks the device (its multiprocessor count)
# opens no CUDA context beside the workers' timing, and sees the CPU stand-in `ksuite inspect` sees
CHILD_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
# a child draws each shape's inputs on the host: shapes past this many bytes (the problem's cost model, in
# the checked dtype) are left to their worker, and so is a problem without a cost model (a foreign
# KernelBench file: its one size can be gigabytes, as 36_RMSNorm_'s 7.5 GB)
MAX_SHAPE_BYTES = 1 << 31
MARK_DIR = "ksuite-precompiled"  # under TRITON_CACHE_DIR: one empty file per job whose kernels are there


@dataclass(frozen=True)
class Job:
    """One child: a Triton solution's kernels at every shape its worker will call, in one dtype."""

    problem: str
    solution: str
    dtype: str
    shapes: list = field(hash=False)


def stage_shapes(problem, options) -> list[dict]:
    """Every shape a worker calls a solution at: the sweep (small shapes and the timed ones), the
    stability stage's shape and the edge shapes (harness/correctness.run_stages), up to MAX_SHAPE_BYTES."""
    from harness.jobs.worker import timed_shapes
    from harness.loader import unique_shapes

    meta = problem.meta
    if meta.bytes_fn is None:
        return []
    sweep, _ = timed_shapes(problem, options)
    stability = [(meta.shapes or meta.small_shapes)[0]] if meta.stability else []
    return [s for s in unique_shapes(list(sweep) + stability + list(meta.edge_shapes))
            if meta.bytes_fn(s, 4) <= MAX_SHAPE_BYTES]


def plan_jobs(plan: list, options) -> list[Job]:
    """The jobs of a bench plan ([(ProblemRef, [SolutionRef])]), in its order: each Triton solution (a
    file that is not CUDA C++) once per dtype the run checks. A problem that does not load is left out
    (its worker says why)."""
    from harness import cuda_build
    from harness.dtype_choice import DtypeChoiceError, select_dtypes
    from harness.loader import LoadError, load_problem

    jobs: list[Job] = []
    for problem_ref, solutions in plan:
        files = [s.path for s in solutions if s.path and not cuda_build.is_cuda_solution(s.path)]
        if not files:
            continue
        try:
            problem = load_problem(Path(problem_ref.path), "ksuite_precompile_problem")
            dtypes = select_dtypes(list(problem.meta.dtypes), tuple(options.dtypes))
        except (LoadError, DtypeChoiceError):
            continue
        shapes = stage_shapes(problem, options)
        if not shapes:
            continue
        jobs += [Job(str(problem_ref.path), str(path), dtype, shapes) for path in files for dtype in dtypes]
    return jobs


def enabled(options, environ=os.environ) -> bool:
    """On a CUDA run (never under the interpreter: nothing there is compiled), unless switched off."""
    return not options.interpret and environ.get(PRECOMPILE_ENV, "1") != "0"


def _compile(job: Job, capability: int, env: dict, timeout_s: float) -> bool:
    from harness.machine_code.offline_compile import OfflineCompileError, compile_at_shapes

    try:
        compile_at_shapes(Path(job.problem), Path(job.solution), job.shapes, job.dtype, capability, timeout_s,
                          env=env)
    except OfflineCompileError:
        return False
    return True


def marker(job: Job, capability: int, env: dict) -> Path | None:
    """The file that says this job's kernels are in the Triton cache `env` names; None where it names none."""
    folder = env.get("TRITON_CACHE_DIR")
    if not folder:
        return None
    key = hashlib.sha256()
    for part in (Path(job.problem).read_bytes(), Path(job.solution).read_bytes(),
                 json.dumps([job.dtype, job.shapes, capability], sort_keys=True).encode()):
        key.update(part)
    return Path(folder) / MARK_DIR / key.hexdigest()


class Precompiles:
    """The jobs, started at once in the background on `workers` threads (each waits on its child), in
    order, so the first problems' solutions are compiled first; a job whose marker is there is not
    started. `close` drops those not started and says how many compiled."""

    def __init__(self, jobs: list[Job], capability: int, env: dict, workers: int,
                 compile_one: Callable[[Job, int, dict, float], bool] = _compile, timeout_s: float = TIMEOUT_S):
        self.started = time.perf_counter()
        marks = {id(job): marker(job, capability, env) for job in jobs}
        self.cached = [job for job in jobs if marks[id(job)] is not None and marks[id(job)].exists()]
        cached = {id(job) for job in self.cached}
        self.jobs = [job for job in jobs if id(job) not in cached]

        def run(job: Job) -> bool:
            ok = compile_one(job, capability, env, timeout_s)
            if ok and marks[id(job)] is not None:
                marks[id(job)].parent.mkdir(parents=True, exist_ok=True)
                marks[id(job)].touch()
            return ok

        self.pool = ThreadPoolExecutor(max(1, workers)) if self.jobs else None
        self.futures = [self.pool.submit(run, job) for job in self.jobs]
        self.dropped = 0

    def drop(self, problem: str) -> None:
        """Cancel this problem's jobs not started: its worker is at its solutions and compiles what it
        launches itself, in a second or two, where a child would import torch first. In the H200's cold
        `make bench` of 2026-12-03 (run 151440) the last precompile ended at 417 s, with the run: the queue ran
        behind the GPU, taking cores from the compiles the GPU was waiting for."""
        for job, future in zip(self.jobs, self.futures):
            if job.problem == str(problem) and future.cancel():
                self.dropped += 1

    def summary(self) -> str:
        done = [f for f in self.futures if f.done() and not f.cancelled()]
        compiled = sum(1 for f in done if f.exception() is None and f.result())
        total = len(self.jobs) + len(self.cached)
        dropped = f", {self.dropped} dropped as their problem's solutions began" if self.dropped else ""
        return (f"precompiled {compiled} of {total} Triton (solution, dtype) pairs on the CPU "
                f"({len(done) - compiled} failed, {len(self.jobs) - len(done) - self.dropped} not finished"
                f"{dropped}; {len(self.cached)} were already in the cache) in "
                f"{time.perf_counter() - self.started:.0f} s")

    def close(self) -> str:
        """Cancel what has not started; running children end within their timeout. The summary line."""
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
        return self.summary()


def start(plan: list, options, env: dict, capability: int | None, cpu_count: int | None = None) -> Precompiles | None:
    """Precompiles for a bench plan on a quarter of the CPU cores (CUDA C++ builds take up to half, and
    the workers' launch paths and torch.compile's own compile workers need the rest), or None where
    nothing is to be done."""
    if not enabled(options) or not capability:
        return None
    jobs = plan_jobs(plan, options)
    if not jobs:
        return None
    env = {**{k: v for k, v in env.items() if k != "TRITON_INTERPRET"}, **CHILD_ENV}
    return Precompiles(jobs, capability, env, max(1, (cpu_count or os.cpu_count() or 2) // 4))
