"""One watched call of a candidate before the correctness stages: did it do the work itself, and is the
work finished when the call returns?

The stages compare answers; this probe looks at how the answer was made. It fails a candidate that
launched no kernel of its own (torch did the work), returns an output that torch computed while its own
kernels did nothing towards it, launched on another stream, keeps working after it
returned (its output changes once the device or a thread catches up), leaves Python threads running, or
(on CUDA) holds on to more device memory with every call. A call that raises or returns a wrong answer is
not this probe's business: the stages report that with their own words.
"""

from __future__ import annotations

import gc
import threading
import time

import torch

from harness.compare import as_tensor_list
from harness.integrity import dispatch_check

SETTLE_S = 0.02  # long enough for a helper thread or a side stream to land its deferred writes
JOIN_S = 1.0  # how long to wait for threads the call left behind
LEAK_CALLS = 4


def probe(candidate: torch.nn.Module, make_inputs, device: str) -> str | None:
    """Warm up once (compiles, lazy state), then one watched call. `make_inputs()` gives fresh inputs."""
    if _call(candidate, make_inputs()) is None:
        return None  # it raises: the smoke stage will say so
    threads_before = set(threading.enumerate())
    inputs = make_inputs()
    with dispatch_check.watch() as activity:
        outs = _call(candidate, inputs)
    if outs is None:
        return None
    snapshot = [o.clone() for o in outs]  # on CUDA: queued on the current stream, before any synchronize
    _join_new_threads(threads_before)
    problem = (_deferred_problem(outs, snapshot, device) or _thread_problem(threads_before)
               or dispatch_check.foreign_stream_problem(activity) or dispatch_check.no_kernel_problem(activity)
               or dispatch_check.provenance_problem(activity, outs))
    if problem is None and device != "cpu":
        del inputs, outs, snapshot, activity  # one call's tensors at a time: the leak check draws its own
        problem = _leak_problem(candidate, make_inputs)
    return problem


def _call(candidate, inputs) -> list | None:
    try:
        with torch.no_grad():
            return as_tensor_list(candidate(*inputs))
    except Exception:  # noqa: BLE001 - reported by the stages, not here
        return None


def _deferred_problem(outs: list, snapshot: list, device: str) -> str | None:
    """Compare the output as it was at return with the output once everything has settled."""
    if device != "cpu":
        torch.cuda.synchronize()
    time.sleep(SETTLE_S)
    if device != "cpu":
        torch.cuda.synchronize()
    for i, (now, then) in enumerate(zip(outs, snapshot)):
        if now.shape != then.shape or not torch.equal(now.nan_to_num(), then.nan_to_num()):
            return (f"output {i} changed after the call returned (work on another stream or thread, "
                    "finished outside the timed region)")
    return None


def _new_threads(before: set) -> list:
    return [t for t in threading.enumerate()
            if t not in before and t.is_alive() and not isinstance(t, threading._DummyThread)]


def _join_new_threads(before: set) -> None:
    """Let threads the call started finish (up to JOIN_S), so their late writes show in the comparison."""
    deadline = time.monotonic() + JOIN_S
    for t in _new_threads(before):
        t.join(max(0.0, deadline - time.monotonic()))


def _thread_problem(before: set) -> str | None:
    """A Python thread started by the call and still running after it returned does work off the clock."""
    new = _new_threads(before)
    if new:
        return f"left {len(new)} new Python thread(s) running after the call returned ({new[0].name})"
    return None


def _leak_problem(candidate, make_inputs) -> str | None:
    """Device memory still held after the outputs are dropped, growing with every call: a leak or a cache."""
    inputs = make_inputs()
    sizes = []
    for _ in range(LEAK_CALLS + 1):
        outs = _call(candidate, inputs)
        del outs
        gc.collect()
        torch.cuda.synchronize()
        sizes.append(torch.cuda.memory_allocated())
    growth = sizes[-1] - sizes[0]
    per_call = growth / LEAK_CALLS
    if growth > 0 and all(b > a for a, b in zip(sizes, sizes[1:])):
        return f"device memory grows by {per_call:.0f} bytes per call (a leak, or results kept across calls)"
    return None
