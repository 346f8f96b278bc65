"""Parent side of process isolation: run a job in a child, watch it, turn crashes and hangs into records.

A child that dies (segfault, illegal address, out of memory) or hangs past the timeout while it measures
one (shape, dtype) costs that measurement: the parent records the cause and a fresh child goes on with the
implementation's other shapes (at most MAX_RESTARTS times for one implementation, then its unmeasured
shapes are recorded with the cause). A death anywhere else (loading, the correctness stages) costs the
implementation. Either way the job's other implementations run in a fresh child. The timeout counts
from the implementation's start or its last finished stage or measurement, so a hang is caught in
timeout_s while many shapes (or a baseline's autotuning at each) may take longer in all.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, replace
from pathlib import Path

from harness.children.launcher import POLL_S, EventFollower, child_env
from harness.children.worker_pool import WorkerPool, shared_pool, warm_workers_on
from harness.spec import Options, ProblemRef, SolutionRef

MAX_RESTARTS = 3  # deaths while measuring, per implementation, after which its other shapes are not tried


def run_job(problem: ProblemRef, impls: list[SolutionRef], options: Options,
            on_event: Callable[[dict], None], pool: WorkerPool | None = None) -> Iterator[dict]:
    """Yield every event of every implementation; crashed or hung ones end with failure records. The
    children are warm workers from `pool` (the process's shared one by default): harness/children/worker_pool.py."""
    pool = pool or shared_pool()
    remaining = list(impls)
    done_keys = tuple(options.done)
    restarts: dict = {}
    while remaining:
        restartable = {i.name for i in remaining if restarts.get(i.name, 0) < MAX_RESTARTS}
        finished, failed_impl, settled = yield from _one_child(problem, remaining, replace(options, done=done_keys),
                                                               on_event, pool, restartable)
        done = set(finished)
        if settled is not None:  # died measuring one shape: its other shapes go on in a fresh child
            restarts[failed_impl] = restarts.get(failed_impl, 0) + 1
            done_keys += tuple(settled)
        elif failed_impl:
            done.add(failed_impl)
        if not done and settled is None:
            return
        remaining = [i for i in remaining if i.name not in done]


def _one_child(problem: ProblemRef, impls: list[SolutionRef], options: Options, on_event, pool: WorkerPool,
               restartable: set = frozenset()):
    """Run impls in one child; (finished names, the name it died in or None, and for a death while
    measuring one shape of a restartable implementation, the keys now settled for it, else None)."""
    with tempfile.TemporaryDirectory(prefix="ksuite-job-") as tmp:
        job_path, events_path = Path(tmp) / "job.json", Path(tmp) / "events.jsonl"
        opts = asdict(options)
        opts["dtypes"] = list(options.dtypes)
        opts["done"] = [[name, [list(kv) for kv in shape], dtype] for name, shape, dtype in options.done]
        job_path.write_text(json.dumps({
            "problem_name": problem.name, "problem_path": str(Path(problem.path).resolve()),
            "impls": [{"name": i.name, "path": str(i.path) if i.path else None} for i in impls],
            "options": opts}))
        warm = warm_workers_on()
        trusted = warm and all(i.kind == "baseline" for i in impls)  # a candidate's job: a fresh worker
        prestart = warm and (not options.interpret if pool.prestart is None else pool.prestart)
        worker = pool.take(child_env(options), trusted, prestart)
        child, since = worker.child, worker.child.log_size()
        worker.send_job(job_path, events_path, trusted)
        state = {"plan": None, "current": None, "started_at": time.monotonic(), "finished": [],
                 "recorded": set(), "fatal": None, "done": False, "measuring": None}
        follower = EventFollower(events_path)
        timed_out = False
        try:
            while not state["done"]:
                for event in follower.new_events():
                    yield from _handle(event, state, on_event)
                if state["done"] or child.poll() is not None:
                    break
                if time.monotonic() - state["started_at"] > options.timeout_s:
                    timed_out = True
                    break
                time.sleep(POLL_S)
        finally:  # a timeout, Ctrl-C or a closed generator must never leave the child on the device
            pool.give_back(worker, done=state["done"] and not timed_out)
        for event in follower.new_events():
            yield from _handle(event, state, on_event)
        current = state["current"]
        if timed_out:
            cause = f"timed out after {options.timeout_s:g} s (hang?)"
        elif state["fatal"]:
            cause = state["fatal"]
        else:
            cause = child.exit_line(since)
        if current is None and not state["finished"]:
            if (state["done"] or child.returncode == 0) and not timed_out:
                return [], None, None
            # nothing started: the problem itself could not be loaded, or the child died at import
            for impl in impls:
                yield _failure(problem, impl, {}, "", cause)
            return [i.name for i in impls], None, None
        settled = None
        if current is not None:
            impl = next(i for i in impls if i.name == current)
            measuring = state["measuring"]
            if measuring is not None and measuring[0] == current and current in restartable:  # that shape fails
                _, shape, dtype = measuring
                if measuring not in state["recorded"]:  # (a death after its record costs nothing more)
                    yield _failure(problem, impl, dict(shape), dtype, cause)
                settled = [measuring] + [key for key in state["recorded"] if key[0] == current]
            else:
                yield from _fill_missing(problem, impl, state, cause, options.done)
            on_event({"event": "crash", "impl": current, "message": cause})
        return state["finished"], current, settled


def _handle(event: dict, state: dict, on_event) -> Iterator[dict]:
    kind = event.get("event")
    if kind == "plan":
        state["plan"] = event
    elif kind == "start":
        state["current"], state["started_at"] = event["impl"], time.monotonic()
    elif kind in ("end", "skip"):
        state["finished"].append(event["impl"])
        state["current"] = None
    elif kind == "done":
        state["done"] = True
    elif kind == "fatal":
        state["fatal"] = event.get("message")
    elif kind in ("stage", "integrity"):
        state["started_at"] = time.monotonic()  # progress: the timeout counts from the last step done
    elif kind == "unsupported":  # a baseline's own limit at this shape: nothing to record, nothing missing
        state["recorded"].add((event["impl"], tuple(sorted(event["shape"].items())), event["dtype"]))
    elif kind == "measuring":
        state["measuring"] = (event["impl"], tuple(sorted(event["shape"].items())), event["dtype"])
    elif kind == "measurement":
        state["recorded"].add((event["solution"], tuple(sorted(event["shape"].items())), event["dtype"]))
        state["started_at"] = time.monotonic()
        yield event
    on_event(event)


def _failure(problem: ProblemRef, impl: SolutionRef, shape: dict, dtype: str, cause: str) -> dict:
    return {"event": "measurement", "problem": problem.name, "solution": impl.name, "kind": impl.kind,
            "shape": shape, "dtype": dtype, "correct": False, "error": cause}


def _fill_missing(problem: ProblemRef, impl: SolutionRef, state: dict, cause: str, done: tuple) -> Iterator[dict]:
    """Failure records for what the dead child left unmeasured (never for what a resumed run has)."""
    plan = state["plan"] or {"shapes": [{}], "dtypes": [""]}
    have = state["recorded"] | {tuple(map(_freeze, key)) for key in done}
    for shape in plan["shapes"]:
        for dtype in plan["dtypes"]:
            if (impl.name, tuple(sorted(shape.items())), dtype) not in have:
                yield _failure(problem, impl, shape, dtype, cause)


def _freeze(part):
    """Keys from a resumed run may arrive as lists; compare them as tuples."""
    return tuple(tuple(kv) for kv in part) if isinstance(part, (list, tuple)) else part
