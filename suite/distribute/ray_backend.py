"""`ksuite bench --ray ADDRESS | local`: each group a Ray task asking for one GPU; the driver writes results/.

Why Ray and not a scheduler of ours: placement, GPU accounting (Ray sets CUDA_VISIBLE_DEVICES per task)
and noticing a dead worker across hosts are Ray's job; we only submit one task per (problem, shape,
dtype) group and ray.wait for them. Each task returns its group's records when the group ends (the
unit a GPU runs); the driver appends them at once, into results/<gpu-slug>/ of the GPU that measured
them, so a cluster of several GPU kinds keeps one folder per kind, one run id in each. A task whose
worker died (WorkerCrashedError, a lost node) is submitted once more, then its group recorded as
failed with the cause. Options that depend on the machine (interpreter or GPU, the speed-of-light
ceilings, CUDA C++ builds) are settled inside the task, on the machine that runs it.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from dataclasses import replace

from harness import Measurement, Options, ProblemRef, SolutionRef
from suite.bench import BenchOutcome, record_line
from suite.distribute.groups import GroupJob, split_plan
from suite.distribute.local_gpus import Device
from suite.distribute.merge import RunFiles, failure_records, record_key
from suite.distribute.spread import bench_group
from suite.resume import stale_implementations

INSTALL_HINT = "--ray needs Ray: pip install 'kernelsuite[ray]'"
CPU_TASKS_ENV = "KSUITE_RAY_CPU_TASKS"  # tests only: tasks ask for num_cpus=1 instead of a GPU


class RayMissing(Exception):
    """Ray is not installed; the message is the one line to print."""


def import_ray():
    try:
        import ray
    except ImportError:
        raise RayMissing(INSTALL_HINT) from None
    return ray


def connect(ray, address: str) -> None:
    """`local`: a Ray instance on this machine (its CPUs and GPUs); else the cluster at ADDRESS."""
    if ray.is_initialized():
        return
    quiet = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    if address == "local":
        ray.init(**quiet)
    else:
        ray.init(address=address, **quiet)


def on_this_machine(options: Options) -> Options:
    """The options a task runs with here: timed on a GPU (with this GPU's ceilings and CUDA builds),
    or checked through the interpreter on a machine without one."""
    import torch

    if not torch.cuda.is_available():
        return replace(options, interpret=True, time=False, copy_bandwidth=None, matmul_rate=None)
    calibration = this_gpus_calibration()
    return replace(options, interpret=False, time=True, copy_bandwidth=calibration["copy_bandwidth_Bps"],
                   matmul_rate=calibration["matmul_flops"])


def this_gpus_calibration() -> dict:
    """The speed-of-light ceilings of the task's GPU: cached under its results/<gpu-slug>/ on that host, or
    measured now (what `ksuite calibrate` does)."""
    from harness.calibrate import calibrate
    from harness.environment import fingerprint, gpu_slug
    from suite.results_store import load_calibration, save_calibration

    found = load_calibration(gpu_slug())
    if not found:
        found = {**calibrate(), "env": fingerprint()}
        save_calibration(gpu_slug(), found)
    return found


def run_task(job: GroupJob, worker=bench_group) -> dict:
    """Inside the Ray task: the group on this task's GPU; its records and the machine that measured them."""
    import torch

    from harness.environment import fingerprint
    from suite.bench import prebuilt

    options = on_this_machine(job.options)
    if not options.interpret:
        options = prebuilt([(job.group.problem, list(job.group.solutions))], options, _Quiet())
    ids = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    name = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    device = Device(int(ids.split(",")[0]) if ids.split(",")[0].isdigit() else -1, name, ids)
    env = {**fingerprint(), "host": socket.gethostname()}
    records: list[dict] = []
    worker(replace(job, options=options, env=env), device,
           lambda kind, data: records.append(data) if kind == "record" else None)
    return {"records": records}


class _Quiet:
    def write(self, line, file=None) -> None:
        print(line, file=sys.stderr)


def remote_task(ray):
    """The Ray task: one GPU (or, for CPU tests, one CPU), no Ray retries (the driver retries once)."""
    resources = {"num_cpus": 1} if os.environ.get(CPU_TASKS_ENV) == "1" else {"num_gpus": 1}
    return ray.remote(max_retries=0, **resources)(run_task)


def run_ray(plan: list[tuple[ProblemRef, list[SolutionRef]]], options: Options, env: dict, run, address: str,
            with_baselines: bool = True, resume: bool = False, quiet: bool = False, verbose: bool = False,
            worker=bench_group) -> BenchOutcome:
    """run_bench's contract with Ray tasks. `worker` runs inside each task (tests pass a stub)."""
    ray = import_ray()
    connect(ray, address)
    outcome, started, files = BenchOutcome(), time.perf_counter(), RunFiles(run)
    stale = stale_implementations(run, plan) if resume and run.path.is_file() else set()
    done = {k for k in files.done_keys() if (k[0], k[1]) not in stale} if resume else set()
    outcome.skipped = len(done)
    on_gpus = os.environ.get(CPU_TASKS_ENV) != "1"
    groups = split_plan(plan, replace(options, interpret=False) if on_gpus else options, with_baselines, done)
    task = remote_task(ray)
    pending = {}
    for g in groups:
        job = GroupJob(g, options, env, run.run_id, with_baselines)
        pending[task.remote(job, worker)] = job
    say = (lambda line: None) if quiet else (lambda line: print(line, file=sys.stderr))
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        job = pending.pop(ready[0])
        try:
            result = ray.get(ready[0])
        except Exception as exc:  # noqa: BLE001 - a dead worker or node, or a task that raised
            cause = f"crashed: the Ray task for this group failed: {type(exc).__name__}: {_first_line(exc)}"
            if job.attempt < 1:
                say(f"  {job.group.label}: {cause}; running it once more")
                pending[task.remote(replace(job, attempt=1), worker)] = replace(job, attempt=1)
                continue
            say(f"  {job.group.label}: {cause}; recorded as failed")
            for m in failure_records(job, cause):
                _write(files, m, outcome, verbose)
            continue
        for data in result["records"]:
            _write(files, Measurement.from_dict(data), outcome, verbose)
            job = replace(job, received=job.received + (record_key(data),))
    outcome.wall_s = time.perf_counter() - started
    return outcome


def _write(files: RunFiles, m: Measurement, outcome: BenchOutcome, verbose: bool) -> None:
    from harness.environment import gpu_slug

    files.for_slug(gpu_slug(m.gpu)).append(m)
    outcome.records.append(m)
    if verbose:
        print(record_line(m), file=sys.stderr)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else "no message"
