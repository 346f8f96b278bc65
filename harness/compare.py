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


CHUNK = 1 << 20  # elements compared at a time (8 MB in float64): the comparison's temporaries (a few
# chunks at once) stay small beside any output. KernelBench's 1_Square_ at 4096 (64 MiB outputs), 2026-12-01:
# with 256 MB chunks the comparison, not the reference, set the trial's peak (7.3x inputs + outputs); on the
# H200, 2026-12-03, 16 MB chunks (69 MB alive at once) still put softmax's trial at 4096 x 4096 float16 at
# 4.03x, the rest of it 3.0x.


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
    problem = _outputs_problem(cands, [tuple(r.shape) for r in refs], expected_dtypes)
    if problem:
        return Comparison(False, None, None, problem)
    return _verdict([_tally(c, r, atol, rtol) for c, r in zip(cands, refs)], atol, rtol)


def compare_pieces(candidate, pieces, dim: int, expected_dtypes: list, atol: float, rtol: float) -> Comparison:
    """compare() against a float64 reference that comes a slice at a time: `pieces` yields (start, length,
    extent, float64 outputs of that slice along `dim`), each compared with the same rows of the candidate's
    outputs and dropped, so the whole float64 output is never held. The same verdict as compare() on the
    joined reference (a CPU test compares the two)."""
    try:
        cands = as_tensor_list(candidate)
    except TypeError as exc:
        return Comparison(False, None, None, str(exc))
    tallies = None
    for start, length, extent, outs in pieces:  # each slice's outputs cut along dim (SlicedReference.pieces)
        if tallies is None:  # the whole reference's shapes, from the first slice's
            shapes = [tuple(o.shape[:dim]) + (extent,) + tuple(o.shape[dim + 1:]) for o in outs]
            problem = _outputs_problem(cands, shapes, expected_dtypes)
            if problem:
                return Comparison(False, None, None, problem)
            tallies = [None] * len(outs)
        for k, (c, o) in enumerate(zip(cands, outs)):
            tallies[k] = _merged(tallies[k], _tally(c.narrow(dim, start, length), o, atol, rtol))
        del outs
    if tallies is None:  # nothing compared is never a pass
        return Comparison(False, None, None, "the sliced reference gave no slices to compare")
    return _verdict(tallies, atol, rtol)


def _outputs_problem(cands: list, shapes: list, expected_dtypes: list) -> str | None:
    """The candidate's outputs against the reference's count, shapes and the expected dtypes."""
    if len(cands) != len(shapes):
        return f"{len(cands)} outputs, expected {len(shapes)}"
    for i, (c, shape, want) in enumerate(zip(cands, shapes, expected_dtypes)):
        if tuple(c.shape) != tuple(shape):
            return f"output {i} shape {tuple(c.shape)}, expected {tuple(shape)}"
        if c.dtype != want:
            return f"output {i} dtype {c.dtype}, expected {want}"
    return None


def _verdict(tallies: list, atol: float, rtol: float) -> Comparison:
    worst_abs, worst_l2, failures = 0.0, 0.0, []
    for i, t in enumerate(tallies):
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


def _merged(a: dict | None, b: dict) -> dict:
    """Two parts' tallies as one: counts and sums add, the largest difference is the larger, a flag either's."""
    if a is None:
        return b
    return dict(nan_where_finite=a["nan_where_finite"] + b["nan_where_finite"],
                unmatched_nonfinite=a["unmatched_nonfinite"] or b["unmatched_nonfinite"],
                nonfinite=a["nonfinite"] or b["nonfinite"], max_abs=max(a["max_abs"], b["max_abs"]),
                sq_diff=a["sq_diff"] + b["sq_diff"], sq_ref=a["sq_ref"] + b["sq_ref"], bad=a["bad"] + b["bad"],
                finite=a["finite"] + b["finite"])


def _tally(c: torch.Tensor, r: torch.Tensor, atol: float, rtol: float) -> dict:
    """The comparison's counts and sums over the positions where the reference is finite, chunk by chunk.
    Sums stay on the reference's device until the end (one synchronisation per output, not per chunk)."""
    zero = torch.zeros((), dtype=torch.float64, device=r.device)
    nan_where_finite = unmatched = nonfinite = bad = finite_count = zero.to(torch.int64)
    max_abs = sq_diff = sq_ref = zero
    for c64, r64 in float64_chunks(c, r):
        finite = torch.isfinite(r64)
        c_nan = torch.isnan(c64)
        nan_where_finite = nan_where_finite + (c_nan & finite).sum()
        same = (c64 == r64) | (c_nan & torch.isnan(r64))
        unmatched = unmatched + (~finite & ~same).sum()
        del same, c_nan
        nonfinite = nonfinite + (finite & ~torch.isfinite(c64)).sum()
        diff = torch.where(finite, c64 - r64, 0.0)
        sq_diff = sq_diff + diff.square().sum()
        diff = diff.abs_()
        max_abs = torch.maximum(max_abs, torch.where(torch.isnan(diff), 0.0, diff).max())
        # torch.isclose's rule (|c - r| <= atol + rtol |r|; NaN is never close), where r is finite
        bad = bad + (finite & ~(diff <= atol + rtol * r64.abs())).sum()
        sq_ref = sq_ref + torch.where(finite, r64, 0.0).square().sum()
        finite_count = finite_count + finite.sum()
        del diff, finite
    return dict(nan_where_finite=int(nan_where_finite), unmatched_nonfinite=bool(unmatched),
                nonfinite=bool(nonfinite), max_abs=float(max_abs), sq_diff=float(sq_diff), sq_ref=float(sq_ref),
                bad=int(bad), finite=int(finite_count))
