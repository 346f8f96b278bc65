"""Dtype-aware comparison of a candidate's output with the float64 reference."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Comparison:
    passed: bool
    max_abs_err: float | None
    rel_l2_err: float | None
    detail: str = ""


def as_tensor_list(out) -> list:
    """Outputs may be one tensor or a tuple/list of tensors."""
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)) and all(isinstance(t, torch.Tensor) for t in out):
        return list(out)
    raise TypeError(f"output is {type(out).__name__}, not a tensor or a tuple of tensors")


def compare(candidate, reference64, expected_dtypes: list, atol: float, rtol: float) -> Comparison:
    """allclose against the float64 reference; NaN never passes; reports max abs and relative L2."""
    try:
        cands = as_tensor_list(candidate)
    except TypeError as exc:
        return Comparison(False, None, None, str(exc))
    refs = as_tensor_list(reference64)
    if len(cands) != len(refs):
        return Comparison(False, None, None, f"{len(cands)} outputs, expected {len(refs)}")
    worst_abs, worst_l2, failures = 0.0, 0.0, []
    for i, (c, r, want) in enumerate(zip(cands, refs, expected_dtypes)):
        if tuple(c.shape) != tuple(r.shape):
            return Comparison(False, None, None,
                              f"output {i} shape {tuple(c.shape)}, expected {tuple(r.shape)}")
        if c.dtype != want:
            return Comparison(False, None, None, f"output {i} dtype {c.dtype}, expected {want}")
        c64 = c.detach().to(device=r.device, dtype=torch.float64)
        r64 = r.detach().to(torch.float64)
        finite = torch.isfinite(r64)
        nan_where_finite = int((torch.isnan(c64) & finite).sum())
        if nan_where_finite:
            failures.append(f"output {i}: {nan_where_finite} NaN elements (unwritten or overflowed)")
        same = (c64 == r64) | (torch.isnan(c64) & torch.isnan(r64))
        if bool((~finite & ~same).any()):
            failures.append(f"output {i}: non-finite reference values not matched")
        diff = (c64 - r64)[finite].abs()
        max_abs = float(diff.max()) if diff.numel() else 0.0
        if not torch.isfinite(c64[finite]).all():
            max_abs = float("inf")
        denom = float(torch.linalg.vector_norm(r64[finite])) or 1.0
        rel_l2 = float(torch.linalg.vector_norm(c64[finite] - r64[finite])) / denom
        worst_abs, worst_l2 = max(worst_abs, max_abs), max(worst_l2, rel_l2)
        ok = torch.isclose(c64[finite], r64[finite], atol=atol, rtol=rtol)
        if not bool(ok.all()):
            bad = int((~ok).sum())
            failures.append(f"output {i}: {bad} of {ok.numel()} elements outside atol={atol:g} rtol={rtol:g}")
    return Comparison(not failures, worst_abs, worst_l2, "; ".join(failures))
