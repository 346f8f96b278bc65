"""What one forward call puts on the GPU, as a fingerprint: two files with equal fingerprints run the same work.

The table search proposes one tunable step at a time, and some steps change nothing at a bucket's shapes
(rmsnorm's BLOCK_N wherever ONE_PASS holds the row; a split count a short row never reaches): timing one is
timing a kernel against itself. Inside `recording()` each Triton launch is recorded (kernel, grid, warps,
stages, CTAs, shared memory, a hash of its PTX, its other arguments' shapes, strides and scalar values) and so is
each torch operation (its name and arguments), so host-side work a tunable changes counts too. A precompiled
kernel launched directly (`compiled[grid](...)`, which skips JITFunction.run) is recorded the same way from its
CompiledKernel. A call with no Triton launch (a CUDA C++ extension, whose launches torch does not see) has no
fingerprint: nothing is claimed equal.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager


def grid_of(grid, bound_args: dict) -> tuple[int, ...] | None:
    """A launch's grid as numbers; None for a grid function that reads launch metadata we do not have."""
    try:
        grid = grid(bound_args) if callable(grid) else grid
        return tuple(int(g) for g in grid)
    except Exception:  # noqa: BLE001 - a grid lambda that reads launch metadata: leave it out
        return None


def describe(value) -> str:
    """An argument as the GPU work depends on it: a tensor by dtype, shape and strides (never its address)."""
    import torch

    if isinstance(value, torch.Tensor):
        return f"{value.dtype}{tuple(value.shape)}/{tuple(value.stride())}@{value.device.type}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(describe(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}={describe(v)}" for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))) + "}"
    if value is None or isinstance(value, (bool, int, float, str)) or type(value).__module__ == "torch":
        return repr(value)
    return type(value).__name__


class Recording:
    def __init__(self):
        self.launches: list[str] = []
        self.ops: list[str] = []

    def fingerprint(self) -> str | None:
        """A hash of the launches and torch operations in order; None when no Triton kernel was launched."""
        if not self.launches:
            return None
        digest = hashlib.sha256()
        for line in self.launches + ["--"] + self.ops:
            digest.update(line.encode() + b"\n")
        return digest.hexdigest()[:16]


@contextmanager
def recording() -> Iterator[Recording]:
    """Inside, every Triton launch and torch operation is recorded into the yielded Recording and still run.
    Without Triton's compiled path (the interpreter, or no Triton) no launch is seen: fingerprint None."""
    record = Recording()
    try:
        from torch.utils._python_dispatch import TorchDispatchMode
        from triton.runtime.jit import JITFunction
    except ImportError:
        yield record
        return

    class Ops(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            record.ops.append(f"{func}({describe(list(args))},{describe(kwargs or {})})")
            return func(*args, **(kwargs or {}))

    from triton.compiler.compiler import CompiledKernel

    original_run = JITFunction.run
    original_getitem = CompiledKernel.__getitem__

    def note(name: str, kernel, grid, arguments: str) -> None:
        md = kernel.metadata
        ptx = hashlib.sha256(kernel.asm.get("ptx", "").encode()).hexdigest()[:16]
        options = "/".join(str(getattr(md, k, "-")) for k in ("num_warps", "num_stages", "num_ctas", "shared"))
        record.launches.append(f"{name}|{grid}|{options}|{ptx}|{arguments}")

    def run(self, *args, **kwargs):
        kernel = original_run(self, *args, **kwargs)
        if not kwargs.get("warmup"):
            bound = {**dict(zip([p.name for p in self.params], args)), **kwargs}
            # constexprs act through the PTX, launch options through the metadata: the rest, by value
            note(self.fn.__name__, kernel, grid_of(kwargs.get("grid"), bound),
                 describe([bound.get(p.name) for p in self.params if not p.is_constexpr]))
        return kernel

    def getitem(self, grid):
        runner = original_getitem(self, grid)

        def recorded_runner(*args, **kwargs):
            note(getattr(self, "name", "compiled"), self, grid_of(grid, {}), describe(list(args)))
            return runner(*args, **kwargs)
        return recorded_runner

    JITFunction.run = run
    CompiledKernel.__getitem__ = getitem
    try:
        with Ops():
            yield record
    finally:
        JITFunction.run = original_run
        CompiledKernel.__getitem__ = original_getitem
