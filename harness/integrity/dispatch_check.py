"""What a candidate actually ran during one call: its own kernel launches, the torch ops it dispatched,
and where the bytes of its output came from.

A file can define a Triton kernel and never launch it, doing the work with torch instead; the answer is
right and the time is torch's. Counting launches at the one path every Triton launch takes (the `run`
of JITFunction, or of the interpreter's InterpretedFunction on CPU) and calls into modules built by
torch.utils.cpp_extension tells the two apart; a TorchDispatchMode names the aten ops that did the work.

A file can also launch a do-nothing kernel and still let torch compute the answer; the watch keeps
what wrote each storage's bytes (harness/integrity/provenance.py), so such an output is named as torch's.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from harness.integrity import provenance

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
    tags: dict = field(default_factory=dict)  # provenance: storage key -> what wrote its bytes
    untracked: str | None = None  # why provenance is unknown (then no verdict is drawn from it)

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


def _watched_launch(kind: str, call, args, kwargs):
    """Run one launch of the candidate's own code, counting it and noting which storages it wrote."""
    act = _record_launch(kind)  # nothing but a list check when not watching
    if act is None:
        return call()
    try:
        snaps = _tracking(act, lambda: provenance.before_launch(act.tags, provenance.launch_tensors(args, kwargs)))
        result = call()
        if snaps is not None:
            _tracking(act, lambda: provenance.after_launch(act.tags, snaps, result if kind == "extension" else None))
        return result
    finally:
        act.depth -= 1


def _tracking(act: Activity, step):
    """One provenance step; a failure (an odd argument, memory for a snapshot) ends tracking, never the call."""
    if act.untracked is not None:
        return None
    try:
        return step() or {}
    except Exception as exc:  # noqa: BLE001 - bookkeeping must never break the candidate's call
        act.untracked = f"provenance not tracked ({type(exc).__name__}: {exc})"
        return None


def _counting(run):
    @functools.wraps(run)
    def counted_run(self, *args, grid=None, warmup=False, **kwargs):
        if warmup:
            return run(self, *args, grid=grid, warmup=warmup, **kwargs)
        return _watched_launch("triton", lambda: run(self, *args, grid=grid, warmup=warmup, **kwargs),
                               args, kwargs)
    return counted_run


def _counting_getitem(getitem):
    """A precompiled kernel launched directly (`compiled[grid](...)`) skips JITFunction.run."""
    @functools.wraps(getitem)
    def counted_getitem(self, grid):
        runner = getitem(self, grid)

        def counted_runner(*args, **kwargs):
            return _watched_launch("triton", lambda: runner(*args, **kwargs), args, kwargs)
        return counted_runner
    return counted_getitem


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
    from triton.compiler.compiler import CompiledKernel

    # Triton 3.2's interpreter has no run() of its class: `kernel[grid]` returns its executor from __getitem__
    saved = [(cls, "run", cls.run) if "run" in vars(cls) else (cls, "__getitem__", cls.__getitem__)
             for cls in _launch_classes()] + [(CompiledKernel, "__getitem__", CompiledKernel.__getitem__)]
    for cls, attr, fn in saved:
        setattr(cls, attr, _counting(fn) if attr == "run" else _counting_getitem(fn))
    hooks = getattr(getattr(triton, "knobs", None), "runtime", None)
    if hooks is not None and hasattr(hooks.launch_enter_hook, "add"):
        hooks.launch_enter_hook.add(_launch_hook)
    return saved


def _unpatch_triton(saved: list) -> None:
    import triton

    for cls, attr, fn in saved:
        setattr(cls, attr, fn)
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
                return _watched_launch("extension", lambda: _fn(*args, **kwargs), args, kwargs)
            try:
                setattr(module, attr, counted)
            except (AttributeError, TypeError):
                pass


class _OpRecorder(TorchDispatchMode):
    def __init__(self, activity: Activity):
        super().__init__()
        self.activity = activity

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        """False: torch would otherwise wrap __torch_dispatch__ in torch._disable_dynamo, whose first call
        imports torch._dynamo (10 s per child process on the H200 image, 2-3x the rest of a check)."""
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        act = self.activity
        if act.depth:
            return func(*args, **kwargs)
        if func.namespace not in TORCH_NAMESPACES:  # a custom op (TORCH_LIBRARY) of an extension
            act.extension_calls += 1
        act.ops[func._schema.name] += 1
        out = func(*args, **kwargs)
        _tracking(act, lambda: provenance.track(act.tags, func, args, kwargs, out,
                                                own=func.namespace not in TORCH_NAMESPACES,
                                                writes_nothing=func._schema.name in HOST_OPS))
        return out


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


def provenance_problem(act: Activity, outputs: list) -> str | None:
    """An output torch computed while the candidate's own kernels contributed nothing to it."""
    if act.untracked or act.hook_launches > act.launches:
        return None  # launches whose arguments went unseen: no verdict
    return provenance.output_problem(act.tags, outputs)


def foreign_stream_problem(act: Activity) -> str | None:
    if act.foreign_streams:
        return (f"launched kernels on {len(act.foreign_streams)} stream(s) other than the caller's current one "
                "(work outside the timed stream)")
    return None
