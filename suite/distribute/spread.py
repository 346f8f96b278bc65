"""`ksuite bench --gpus`: the run's groups over the local GPUs, records streamed into one run file.

Why it mirrors suite/bench.run_bench rather than wrapping it: run_bench walks problems in one process;
here the driver hands (problem, shape, dtype) groups to one pinned worker per GPU and writes what they
send back, so the run file holds the same records a one-GPU run writes, each naming its device
(env.device_index, env.device_name). A worker that dies has its group retried once, then failed.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace

from tqdm import tqdm

from harness import Measurement, Options, ProblemRef, SolutionRef, evaluate_problem
from suite.bench import BenchOutcome, event_printer, prebuilt, progress_shown, record_writer
from suite.distribute.groups import GroupJob, split_plan
from suite.distribute.local_gpus import Device, run_queue
from suite.distribute.merge import failure_records, record_key
from suite.results_store import RunFile
from suite.resume import done_keys as resume_done_keys

FORWARDED = ("start", "crash", "fatal", "error", "skip", "baseline-cache")  # what the driver prints


def device_env(env: dict, device: Device) -> dict:
    """The run's fingerprint plus the device that measured a record."""
    return {**env, "device_index": device.index, "device_name": device.name}


def bench_group(job: GroupJob, device: Device, send) -> None:
    """In a worker pinned to `device`: the harness on one group, each record and event sent on."""
    options = replace(job.options_here(), extra_env={**job.options.extra_env, **device.env})
    evaluate_problem(job.group.problem, list(job.group.solutions), options, device_env(job.env, device),
                     run_id=job.run_id, with_baselines=job.with_baselines,
                     on_record=lambda m: send("record", m.to_dict()),
                     on_event=lambda e: send("event", e) if e.get("event") in FORWARDED else None)
    send("done", None)


def once_more(received: dict):
    """The retry rule: a lost group runs once more, skipping what it already sent."""

    def retry(job: GroupJob) -> GroupJob | None:
        if job.attempt >= 1:
            return None
        return replace(job, attempt=job.attempt + 1, received=tuple(received.get(job.group.label, ())))
    return retry


def run_spread(plan: list[tuple[ProblemRef, list[SolutionRef]]], options: Options, env: dict, run: RunFile,
               devices: list[Device], with_baselines: bool = True, resume: bool = False, quiet: bool = False,
               verbose: bool = False, job=bench_group) -> BenchOutcome:
    """run_bench's contract over several GPUs. `job` is the worker's function (tests pass a stub)."""
    outcome = BenchOutcome()
    started = time.perf_counter()
    done, remeasured = resume_done_keys(run, plan) if resume else (set(), [])
    outcome.skipped = len(done)
    groups = split_plan(plan, options, with_baselines, done)
    bar = tqdm(total=len(groups), desc=f"bench on {len(devices)} GPUs", unit="group",
               disable=quiet or not progress_shown(), leave=False)
    if remeasured:
        bar.write(f"measuring again (source changed since recorded): {', '.join(remeasured)}", file=sys.stderr)
    write, show = record_writer(run, outcome, bar, verbose), event_printer(bar, verbose)
    options = prebuilt(plan, options, bar)
    received: dict[str, list] = {}

    def on_message(item: GroupJob, device: Device, kind: str, data) -> None:
        if kind == "record":
            received.setdefault(item.group.label, []).append(record_key(data))
            write(Measurement.from_dict(data))
        elif kind == "event":
            show({**data, "impl": f"[GPU {device.index}] {data['impl']}"} if data.get("impl") else data)
            if data.get("event") == "start":
                bar.set_description(item.group.label)
        if kind == "done":
            bar.update(1)

    def on_lost(item: GroupJob, cause: str) -> None:
        bar.write(f"  {item.group.label}: {cause}; recorded as failed", file=sys.stderr)
        for m in failure_records(replace(item, received=tuple(received.get(item.group.label, ()))), cause):
            write(m)

    jobs = [GroupJob(g, options, env, run.run_id, with_baselines) for g in groups]
    run_queue(jobs, devices, job, on_message, once_more(received), on_lost)
    bar.close()
    outcome.wall_s = time.perf_counter() - started
    return outcome
