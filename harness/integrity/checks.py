"""Checks that catch the known ways a kernel passes a benchmark without doing the work honestly."""

from __future__ import annotations

import torch


def _storage_span(t: torch.Tensor) -> tuple[int, int]:
    storage = t.untyped_storage()
    return storage.data_ptr(), storage.data_ptr() + storage.nbytes()


def aliasing_problem(outputs: list, inputs: list) -> str | None:
    """An output that shares memory with an input is a view or an in-place write, not a result."""
    tensors_in = [x for x in inputs if isinstance(x, torch.Tensor) and x.numel()]
    for i, out in enumerate(outputs):
        if not out.numel():
            continue
        lo, hi = _storage_span(out)
        for j, x in enumerate(tensors_in):
            xlo, xhi = _storage_span(x)
            if lo < xhi and xlo < hi:
                return f"output {i} aliases input {j} (shares its memory)"
    return None


def snapshot(inputs: list, device: str | None = None) -> list:
    """Copies of the inputs, for the mutation check; on `device` (the host, when the device is short)."""
    return [(x.clone() if device is None else x.to(device, copy=True)) if isinstance(x, torch.Tensor) else x
            for x in inputs]


def _unchanged(now: torch.Tensor, was: torch.Tensor, chunk: int = 1 << 22) -> bool:
    """Bitwise equal (NaN equal to NaN), a chunk at a time: no full-size temporaries at large shapes."""
    if now.shape != was.shape:
        return False
    a, b = now.detach().reshape(-1), was.reshape(-1)
    for start in range(0, a.numel(), chunk):
        x, y = a[start:start + chunk].to(b.device), b[start:start + chunk]
        same = x == y
        if x.is_floating_point():
            same |= torch.isnan(x) & torch.isnan(y)
        if not bool(same.all()):
            return False
    return True


def mutation_problem(inputs: list, before: list) -> str | None:
    """Inputs must come back unchanged unless the problem declares in-place semantics."""
    for j, (now, was) in enumerate(zip(inputs, before)):
        if isinstance(now, torch.Tensor) and not _unchanged(now, was):
            return f"input {j} was modified by the call"
    return None


def subclass_problem(outputs: list) -> str | None:
    """Tensor subclasses can defer or fake their values; a result must be a plain tensor."""
    for i, out in enumerate(outputs):
        if type(out) is not torch.Tensor:
            return f"output {i} is a {type(out).__name__}, not a plain torch.Tensor"
    return None


def device_problem(outputs: list, device: str) -> str | None:
    for i, out in enumerate(outputs):
        if out.device.type != torch.device(device).type:
            return f"output {i} is on {out.device}, inputs are on {device}"
    return None


def implausible_speed(median_us: float | None, sol_us: float | None, margin: float = 0.9) -> str | None:
    """Faster than the speed-of-light floor means the timer missed work (or the work was skipped)."""
    if median_us is None or sol_us is None:
        return None
    if median_us < margin * sol_us:
        return (f"implausible: {median_us:.2f} us is below the speed-of-light floor {sol_us:.2f} us "
                "(work outside the timed stream, or skipped)")
    return None
