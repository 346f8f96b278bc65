"""Warm workers: `python -m harness.jobs.worker --serve` children started before their job arrives.

Starting a worker (importing torch, triton and the harness, creating the CUDA context) costs seconds; a
job often costs less. So the pool keeps SPARES workers pre-started and warm, and hands the oldest the next
job while it starts another. Two, not one: on the H200 (cold `ksuite bench cross_entropy layernorm`,
2026-12-01) a candidate's job took 3-8 s and a worker's start about as long, so a single spare was often
still starting when its job came. Four, not two: in the warm `make bench` runs of 2026-12-02 (20261202-004333,
-063052, `scripts/run_timeline.py`) the third candidate of most problems took 7-9 s where the others took 2-4:
the first two took the ready spares, and the third's spare had been started only one job earlier.
KSUITE_SPARES sets the number. Isolation is kept per candidate, as GPU MODE keeps it per submission:
- a job with a candidate (a solution file: untrusted code) goes to a worker no job has touched, which
  exits after it; no two candidate jobs, and no candidate and a later baseline, ever share a process, so
  the integrity checks (patched timers, monkeypatching, leaked threads, streams, memory) see a fresh one;
- a job of baselines only (eager, fused, compile, liger: trusted code) may reuse a worker that ran only
  baseline jobs;
- a worker that crashed, hung (timed out), exited mid-job or reported a CUDA error (an illegal address,
  a poisoned context: the worker exits) is never reused; the runner records the failure for the
  implementation it was running and starts the rest in the next worker.
One job runs at a time (one GPU: timing never shares it); the spares wait idle beside it.
KSUITE_WARM_WORKERS=0 turns reuse and pre-starting off (a fresh child per job, started when it arrives).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
import time
from itertools import count
from pathlib import Path

from harness.children.launcher import Child

WARM_ENV = "KSUITE_WARM_WORKERS"
SPARES = 4  # workers pre-started ahead of the jobs (see above); KSUITE_SPARES overrides
SPARES_ENV = "KSUITE_SPARES"
EXIT_GRACE_S = 5.0  # a worker done with a candidate job exits by itself; then it is killed


def warm_workers_on() -> bool:
    return os.environ.get(WARM_ENV, "1") != "0"


def spares_wanted() -> int:
    """SPARES, or KSUITE_SPARES where it is a whole number (0 or more)."""
    text = os.environ.get(SPARES_ENV, "").strip()
    return int(text) if text.isdigit() else SPARES


class Worker:
    """One serving worker: `jobs` counts what it was given, `trusted_only` whether all were baselines."""

    def __init__(self, env: dict, folder: Path, number: int):
        self.env_key = _key(env)
        self.child = Child("harness.jobs.worker", ["--serve"], env, folder / f"worker-{number}.log", stdin=True)
        self.jobs = 0
        self.trusted_only = True

    def send_job(self, job_path: Path, events_path: Path, trusted: bool) -> None:
        self.jobs += 1
        self.trusted_only = self.trusted_only and trusted
        self.child.send(json.dumps({"job": str(job_path), "events": str(events_path), "trusted": trusted}))


class WorkerPool:
    """`prestart`: keep `spares` workers starting ahead of the jobs (None: on a CUDA run, not under the
    interpreter, where a CPU test's two cores are better spent on the job)."""

    def __init__(self, prestart: bool | None = None, spares: int | None = None):
        self.prestart, self.depth = prestart, spares_wanted() if spares is None else spares
        self.folder = Path(tempfile.mkdtemp(prefix="ksuite-workers-"))
        self.numbers = count()
        self.spares: list[Worker] = []  # pre-started, never given a job, oldest first
        self.reusable: Worker | None = None  # ran baseline jobs only, still alive
        self.started: list[Worker] = []  # every worker started, in order (tests read it)

    def take(self, env: dict, trusted: bool, prestart: bool) -> Worker:
        """A worker for one job: for baselines one that ran only baselines, else the oldest spare or a new
        one; then, with `prestart`, new spares start warming up until there are `spares` of them."""
        key = _key(env)
        for stale in [w for w in self.spares if w.env_key != key or not w.child.alive()]:
            stale.child.stop()
            self.spares.remove(stale)
        worker = None
        if trusted and self.reusable is not None and self.reusable.env_key == key and self.reusable.child.alive():
            worker, self.reusable = self.reusable, None
        elif self.spares:
            worker = self.spares.pop(0)
        if worker is None:
            worker = self._start(env)
        while prestart and len(self.spares) < self.depth:
            self.spares.append(self._start(env))
        return worker

    def give_back(self, worker: Worker, done: bool) -> None:
        """After its job: kept for the next baseline job if it ran only baselines and finished (`done`),
        else retired: after a finished candidate job it exits by itself (a profile is dumped then),
        after a crash, a hang or an interrupt it is killed at once."""
        if done and worker.trusted_only and worker.child.alive():
            if self.reusable is not None and self.reusable is not worker:
                self.reusable.child.stop()
            self.reusable = worker
            return
        deadline = time.monotonic() + EXIT_GRACE_S
        while done and worker.child.alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        worker.child.stop()

    def close(self) -> None:
        """Stop every worker still alive: the spares, the reusable one, and one an interrupt caught between
        its start and its job's end."""
        for worker in self.started:
            if worker.child.alive():
                worker.child.stop()
        self.spares, self.reusable = [], None
        shutil.rmtree(self.folder, ignore_errors=True)

    def _start(self, env: dict) -> Worker:
        worker = Worker(env, self.folder, next(self.numbers))
        self.started.append(worker)
        return worker


def _key(env: dict) -> tuple:
    return tuple(sorted(env.items()))


_SHARED: list[WorkerPool] = []


def shared_pool() -> WorkerPool:
    """The process's pool, closed (its workers stopped) at exit."""
    if not _SHARED:
        _SHARED.append(WorkerPool())
        atexit.register(_SHARED[0].close)
    return _SHARED[0]
