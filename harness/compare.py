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


CHUNK = 1 << 25  # elements compared at a time (256 MB in float64): a large output costs no full-size temporaries


def float64_chunks(c: torch.Tensor, r: torch.Tensor):
    """Matching flat pieces of c and r in float64, each on r's device (the reference may live on the host)."""
    c, r = c.detach().reshape(-1), r.detach().reshape(-1)
    for start in range(0, r.numel(), CHUNK):
        yield (c[start:start + CHUNK].to(device=r.device, dtype=torch.float64),
               r[start:start + CHUNK].to(torch.float64))


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
        t = _tally(c, r, atol, rtol)
        if t["nan_where_finite"]:
            failures.append(f"output {i}: {t['nan_where_finite']} NaN elements (unwritten or overflowed)")
        if t["unmatched_nonfinite"]:
            failures.append(f"output {i}: non-finite reference values not matched")
        max_abs = float("inf") if t["nonfinite"] else t["max_abs"]
        rel_l2 = t["sq_diff"] ** 0.5 / ((t["sq_ref"] ** 0.5) or 1.0)
        worst_abs, worst_l2 = max(worst_abs, max_abs), max(worst_l2, rel_l2)
        if t["bad"]:
            failures.append(f"output {i}: {t['bad']} of {t['finite']} elements outside atol={atol:g} rtol={rtol:g}")
    return Comparison(not failures, worst_abs, worst_l2, "; ".join(failures))


def _tally(c: torch.Tensor, r: torch.Tensor, atol: float, rtol: float) -> dict:
    """The comparison's counts and sums over the positions where the reference is finite, chunk by chunk."""
    t = dict(nan_where_finite=0, unmatched_nonfinite=False, nonfinite=False, max_abs=0.0, sq_diff=0.0,
             sq_ref=0.0, bad=0, finite=0)
    for c64, r64 in float64_chunks(c, r):
        finite = torch.isfinite(r64)
        t["nan_where_finite"] += int((torch.isnan(c64) & finite).sum())
        same = (c64 == r64) | (torch.isnan(c64) & torch.isnan(r64))
        t["unmatched_nonfinite"] |= bool((~finite & ~same).any())
        cf, rf = c64[finite], r64[finite]
        diff = cf - rf
        if diff.numel():
            t["max_abs"] = max(t["max_abs"], float(diff.abs().max()))
        t["nonfinite"] |= not bool(torch.isfinite(cf).all())
        t["sq_diff"] += float(diff.square().sum())
        t["sq_ref"] += float(rf.square().sum())
        t["bad"] += int((~torch.isclose(cf, rf, atol=atol, rtol=rtol)).sum())
        t["finite"] += int(finite.sum())
    return t
