"""Run a model under torch.profiler and hand back its Chrome trace events, plus the step time measured
without the profiler (so the profile's totals can be reconciled with what the model really takes).

Every module call is wrapped in a record_function range named `ksuite.module::<path>::<class>::<inputs>`
(eager models carry no module hierarchy in the trace otherwise), and every profiled step in
`ksuite.step`. attribute.py reads those names back; the same trace format comes out of a CPU run (only
cpu_op events) and a CUDA run (plus kernel, memcpy and memset events linked to the op that launched them).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from suite.profile.model_spec import LoadedModel, split_outputs

MODULE_PREFIX = "ksuite.module::"
STEP_NAME = "ksuite.step"
MAX_INPUTS_IN_LABEL = 4


@dataclass
class Capture:
    events: list[dict]  # the Chrome trace's traceEvents
    steps: int
    step_us: list[float]  # one measured step time each, without the profiler
    device: str  # cuda | cpu
    mode: str  # forward | train


def _describe(value) -> str | None:
    if isinstance(value, torch.Tensor):
        return "x".join(str(d) for d in value.shape) + ":" + str(value.dtype).removeprefix("torch.")
    return None


def module_label(path: str, module: torch.nn.Module, args: tuple, kwargs: dict) -> str:
    inputs = [d for d in map(_describe, list(args) + list(kwargs.values())) if d][:MAX_INPUTS_IN_LABEL]
    return f"{MODULE_PREFIX}{path or '<model>'}::{type(module).__name__}::{';'.join(inputs)}"


def annotate_modules(model: torch.nn.Module) -> list:
    """Hooks that open a record_function range around every module call; returns the hook handles."""
    handles, open_ranges = [], []
    for path, module in model.named_modules():
        def pre(mod, args, kwargs, path=path):
            rf = torch.autograd.profiler.record_function(module_label(path, mod, args, kwargs))
            rf.__enter__()
            open_ranges.append(rf)

        def post(mod, args, kwargs, out):
            if open_ranges:
                open_ranges.pop().__exit__(None, None, None)
        handles.append(module.register_forward_pre_hook(pre, with_kwargs=True))
        handles.append(module.register_forward_hook(post, with_kwargs=True))
    return handles


def make_step(loaded: LoadedModel, mode: str) -> Callable[[], None]:
    """One step on fixed inputs: a forward without autograd, or forward and backward of the loss."""
    args, kwargs = loaded.make_inputs(0)
    if mode == "forward":
        def step():
            with torch.no_grad():
                loaded.module(*args, **kwargs)
        return step
    if mode != "train":
        raise ValueError(f"unknown mode {mode!r}; use forward or train")

    def train_step():
        loaded.module.zero_grad(set_to_none=True)
        _, loss = split_outputs(loaded.module(*args, **kwargs))
        if loss is None:
            raise ValueError(f"{loaded.name}: --mode train needs a loss, and the model returned none")
        loss.backward()
    return train_step


def time_steps(step: Callable[[], None], runs: int, cuda: bool) -> list[float]:
    """Microseconds per step: CUDA events around each step on a GPU, the wall clock on the CPU."""
    times = []
    for _ in range(runs):
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) * 1e3)
        else:
            t0 = time.perf_counter()
            step()
            times.append((time.perf_counter() - t0) * 1e6)
    return times


def capture(loaded: LoadedModel, mode: str = "forward", warmup: int = 2, steps: int = 3, timed: int = 5,
            progress: Callable[[str], None] = lambda line: None) -> Capture:
    """Warm up, time `timed` steps, then profile `steps` steps; the events of the profiled steps."""
    from torch.profiler import ProfilerActivity, profile, record_function

    cuda = loaded.device.type == "cuda"
    step = make_step(loaded, mode)
    loaded.module.train(mode == "train")
    for i in range(warmup):
        progress(f"warm-up {i + 1}/{warmup}")
        step()
    if cuda:
        torch.cuda.synchronize()
    progress(f"timing {timed} steps without the profiler")
    step_us = time_steps(step, timed, cuda)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    handles = annotate_modules(loaded.module)
    try:
        with profile(activities=activities, record_shapes=True) as prof:
            for i in range(steps):
                progress(f"profiling step {i + 1}/{steps}")
                with record_function(STEP_NAME):
                    step()
                if cuda:
                    torch.cuda.synchronize()
    finally:
        for handle in handles:
            handle.remove()
    progress("reading the trace")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.json"
        prof.export_chrome_trace(str(path))
        events = json.loads(path.read_text()).get("traceEvents", [])
    progress(f"median step {statistics.median(step_us) / 1e3:.2f} ms")
    return Capture(events, steps, step_us, "cuda" if cuda else "cpu", mode)
