"""What a candidate actually ran during one call: its own kernel launches, and the torch ops it dispatched.

A file can define a Triton kernel and never launch it, doing the work with torch instead; the answer is
right and the time is torch's. Counting launches at the one path every Triton launch takes (the `run`
of JITFunction, or of the interpreter's InterpretedFunction on CPU) and calls into modules built by
torch.utils.cpp_extension tells the two apart; a TorchDispatchMode names the aten ops that did the work.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field

import torch
from torch.utils._python_dispatch import TorchDispatchMode

# host-side bookkeeping a kernel wrapper may do: allocate, view, fill an accumulator, make contiguous
HOST_OPS = {
    "aten::empty", "aten::empty_like", "aten::empty_strided", "aten::new_empty", "aten::new_empty_strided",
    "aten::zeros", "aten::zeros_like", "aten::new_zeros", "aten::ones", "aten::full", "aten::fill_",
    "aten::zero_", "aten::view", "aten::_unsafe_view", "aten::reshape", "aten::as_strided", "aten::t",
    "aten::transpose", "aten::permute", "aten::expand", "aten::unsqueeze", "aten::squeeze", "aten::slice",
    "aten::select", "aten::detach", "aten::alias", "aten::lift_fresh", "aten::clone", "aten::contiguous",
    "aten::copy_", "aten::_to_copy", "aten::flatten", "aten::unflatten", "aten::split", "aten::chunk",
    "aten::arange", "aten::stride", "aten::size", "aten::numel", "aten::view_as", "aten::_reshape_alias",
}
TORCH_NAMESPACES = {"aten", "prim", "prims", "_c10d_functional", "c10d"}


@dataclass
class Activity:
    """Launches of the candidate's own kernels and the aten ops it dispatched, during one window."""

    launches: int = 0
    hook_launches: int = 0  # seen by triton's launch hook (CUDA); a JIT launch counts in both
    extension_calls: int = 0
    ops: Counter = field(default_factory=Counter)
    foreign_streams: list = field(default_factory=list)
    home_stream: object = None  # the stream current when watching began: launches belong on it
    depth: int = 0  # > 0 while inside a launch: the interpreter's own tensor copies are not the candidate's

    @property
    def own_kernels(self) -> int:
        return self.launches + self.hook_launches + self.extension_calls

    def work_ops(self) -> list[str]:
        return sorted(op for op in self.ops if op not in HOST_OPS)


_ACTIVE: list[Activity] = []


def _record_launch(kind: str) -> Activity | None:
    if not _ACTIVE:
        return None
    act = _ACTIVE[-1]
    if kind == "triton":
        act.launches += 1
        if act.home_stream is not None:
            stream = torch.cuda.current_stream()
            if stream != act.home_stream and stream not in act.foreign_streams:
                act.foreign_streams.append(stream)
    else:
        act.extension_calls += 1
    act.depth += 1
    return act


def _counting(run):
    @functools.wraps(run)
    def counted_run(self, *args, grid=None, warmup=False, **kwargs):
        act = None if warmup else _record_launch("triton")
        try:
            return run(self, *args, grid=grid, warmup=warmup, **kwargs)
        finally:
            if act is not None:
                act.depth -= 1
    return counted_run


def _launch_classes() -> list:
    from triton.runtime.jit import JITFunction

    classes = [JITFunction]
    try:
        from triton.runtime.interpreter import InterpretedFunction
        classes.append(InterpretedFunction)
    except ImportError:  # an older triton without the interpreter
        pass
    return classes


def _patch_triton() -> list:
    """Count Triton launches while watching only, so timing runs the untouched launch path.

    JITFunction.run (and the interpreter's run on CPU) is what `kernel[grid](...)` and autotuners call;
    triton's launch_enter_hook also sees a precompiled kernel launched directly (CUDA only: the
    interpreter calls no hooks). Returns what to restore."""
    import triton

    saved = [(cls, cls.run) for cls in _launch_classes()]
    for cls, run in saved:
        cls.run = _counting(run)
    hooks = getattr(getattr(triton, "knobs", None), "runtime", None)
    if hooks is not None and hasattr(hooks.launch_enter_hook, "add"):
        hooks.launch_enter_hook.add(_launch_hook)
    return saved


def _unpatch_triton(saved: list) -> None:
    import triton

    for cls, run in saved:
        cls.run = run
    hooks = getattr(getattr(triton, "knobs", None), "runtime", None)
    if hooks is not None and hasattr(hooks.launch_enter_hook, "remove"):
        hooks.launch_enter_hook.remove(_launch_hook)


def _launch_hook(*_metadata) -> None:
    if _ACTIVE:
        _ACTIVE[-1].hook_launches += 1


def install_launch_counter() -> None:
    """Wrap the CUDA extension builders, before the candidate is imported, so their modules are counted."""
    _wrap_extension_builders()


def _wrap_extension_builders() -> None:
    """Modules built by load_inline / load get every public function wrapped to count its calls."""
    from torch.utils import cpp_extension

    for name in ("load_inline", "load"):
        builder = getattr(cpp_extension, name)
        if getattr(builder, "_ksuite_counting", False):
            continue

        def counted_builder(*args, _builder=builder, **kwargs):
            module = _builder(*args, **kwargs)
            if module is not None and not isinstance(module, str):
                _wrap_module(module)
            return module
        counted_builder._ksuite_counting = True
        setattr(cpp_extension, name, counted_builder)


def _wrap_module(module) -> None:
    for attr in [a for a in dir(module) if not a.startswith("_")]:
        fn = getattr(module, attr)
        if callable(fn) and not isinstance(fn, type):
            def counted(*args, _fn=fn, **kwargs):
                act = _record_launch("extension")  # nothing but a list check when not watching
                try:
                    return _fn(*args, **kwargs)
                finally:
                    if act is not None:
                        act.depth -= 1
            try:
                setattr(module, attr, counted)
            except (AttributeError, TypeError):
                pass


class _OpRecorder(TorchDispatchMode):
    def __init__(self, activity: Activity):
        super().__init__()
        self.activity = activity

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if self.activity.depth == 0:
            if func.namespace not in TORCH_NAMESPACES:  # a custom op (TORCH_LIBRARY) of an extension
                self.activity.extension_calls += 1
            self.activity.ops[func._schema.name] += 1
        return func(*args, **(kwargs or {}))


class watch:
    """`with watch() as act:` counts own-kernel launches and records aten ops inside the block."""

    def __enter__(self) -> Activity:
        install_launch_counter()
        self.saved = _patch_triton()
        self.activity = Activity()
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            self.activity.home_stream = torch.cuda.current_stream()
        _ACTIVE.append(self.activity)
        self.mode = _OpRecorder(self.activity)
        self.mode.__enter__()
        return self.activity

    def __exit__(self, *exc) -> None:
        self.mode.__exit__(*exc)
        _ACTIVE.remove(self.activity)
        _unpatch_triton(self.saved)


def no_kernel_problem(act: Activity) -> str | None:
    """The call launched nothing of its own: whatever the answer, torch (or nothing) did the work."""
    if act.own_kernels:
        return None
    ops = act.work_ops() or sorted(act.ops)
    listed = ", ".join(ops[:8]) + (" ..." if len(ops) > 8 else "")
    return ("launched no kernel of its own; the work was done by torch ops: " + listed if ops
            else "launched no kernel of its own and dispatched no torch ops")


def foreign_stream_problem(act: Activity) -> str | None:
    if act.foreign_streams:
        return (f"launched kernels on {len(act.foreign_streams)} stream(s) other than the caller's current one "
                "(work outside the timed stream)")
    return None
