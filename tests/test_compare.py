"""compare(): allclose against the float64 reference, NaN never passes, errors reported."""

import math

import pytest
import torch

from harness.compare import as_tensor_list, compare, compare_pieces
from harness.inputs import poison_like

# (dtype, atol, rtol) as problems declare them, Liger-style
DTYPE_TOLERANCES = [
    (torch.float32, 1e-5, 1e-5),
    (torch.float16, 1e-3, 1e-3),
    (torch.bfloat16, 3e-2, 3e-2),
]
WEIRD_SHAPES = [(1,), (7,), (5, 123), (3, 5, 17), (1, 1)]


def reference(shape, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=torch.float64)


@pytest.mark.parametrize("shape", WEIRD_SHAPES)
@pytest.mark.parametrize("dtype, atol, rtol", DTYPE_TOLERANCES)
def test_correctly_rounded_output_passes(shape, dtype, atol, rtol):
    ref = reference(shape)
    result = compare(ref.to(dtype), ref, [dtype], atol, rtol)
    assert result.passed, result.detail
    assert result.max_abs_err <= atol + rtol * float(ref.abs().max())
    assert result.rel_l2_err < rtol


@pytest.mark.parametrize("shape", WEIRD_SHAPES)
@pytest.mark.parametrize("dtype, atol, rtol", DTYPE_TOLERANCES)
def test_output_off_by_ten_tolerances_fails(shape, dtype, atol, rtol):
    ref = reference(shape) + 3.0  # away from zero, so rtol dominates
    wrong = (ref * (1 + 10 * rtol) + 10 * atol).to(dtype)
    result = compare(wrong, ref, [dtype], atol, rtol)
    assert not result.passed
    assert "outside" in result.detail


@pytest.mark.parametrize("dtype, atol, rtol", DTYPE_TOLERANCES)
def test_one_wrong_element_fails_and_is_counted(dtype, atol, rtol):
    ref = reference((5, 123))
    cand = ref.to(dtype).clone()
    cand[4, 122] += 1.0
    result = compare(cand, ref, [dtype], atol, rtol)
    assert not result.passed
    assert "1 of 615 elements" in result.detail
    assert result.max_abs_err == pytest.approx(1.0, rel=1e-2)


@pytest.mark.parametrize("dtype, atol, rtol", DTYPE_TOLERANCES)
def test_poisoned_unwritten_elements_fail_as_nan(dtype, atol, rtol):
    ref = reference((4, 9))
    cand = torch.empty(4, 9, dtype=dtype)
    poison_like(cand)
    cand[:2] = ref[:2].to(dtype)  # the kernel wrote only the first two rows
    result = compare(cand, ref, [dtype], atol, rtol)
    assert not result.passed
    assert "18 NaN elements" in result.detail
    assert math.isinf(result.max_abs_err)


def test_poison_like_fills_integers_with_a_sentinel():
    t = torch.zeros(3, dtype=torch.int64)
    poison_like(t)
    assert (t != 0).all()


def test_infinite_reference_values_must_be_matched():
    ref = torch.tensor([1.0, float("inf"), float("-inf"), float("nan")], dtype=torch.float64)
    assert compare(ref.float(), ref, [torch.float32], 1e-5, 1e-5).passed
    wrong = torch.tensor([1.0, 1e30, float("-inf"), float("nan")])
    result = compare(wrong, ref, [torch.float32], 1e-5, 1e-5)
    assert not result.passed
    assert "non-finite" in result.detail


def test_nan_where_reference_is_finite_fails_even_with_huge_tolerance():
    ref = torch.ones(8, dtype=torch.float64)
    cand = torch.ones(8)
    cand[3] = float("nan")
    result = compare(cand, ref, [torch.float32], 1e9, 1e9)
    assert not result.passed
    assert "NaN" in result.detail


def test_shape_mismatch_fails_with_both_shapes():
    ref = reference((4, 8))
    result = compare(ref.float().reshape(8, 4), ref, [torch.float32], 1e-5, 1e-5)
    assert not result.passed
    assert "(8, 4)" in result.detail and "(4, 8)" in result.detail


def test_broadcastable_but_wrong_shape_fails():
    ref = reference((4, 8))
    result = compare(ref[:1].float(), ref, [torch.float32], 1e9, 1e9)
    assert not result.passed
    assert "shape" in result.detail


def test_dtype_mismatch_fails():
    ref = reference((4, 8))
    result = compare(ref.float(), ref, [torch.float16], 1e9, 1e9)
    assert not result.passed
    assert "dtype torch.float32" in result.detail and "torch.float16" in result.detail


def test_tuple_outputs_compared_one_by_one():
    a, b = reference((3,), 1), reference((2, 2), 2)
    assert compare((a.float(), b.float()), (a, b), [torch.float32] * 2, 1e-5, 1e-5).passed
    result = compare((a.float(), (b + 1).float()), (a, b), [torch.float32] * 2, 1e-5, 1e-5)
    assert not result.passed
    assert "output 1" in result.detail


def test_wrong_number_of_outputs_fails():
    a = reference((3,))
    result = compare((a.float(),), (a, a), [torch.float32] * 2, 1e-5, 1e-5)
    assert not result.passed
    assert "1 outputs, expected 2" in result.detail


@pytest.mark.parametrize("out", [None, 3.0, [torch.ones(1), "x"]])
def test_non_tensor_output_fails_without_raising(out):
    result = compare(out, torch.ones(1, dtype=torch.float64), [torch.float32], 1e-5, 1e-5)
    assert not result.passed
    assert "not a tensor" in result.detail


def test_as_tensor_list():
    t = torch.ones(2)
    assert as_tensor_list(t) == [t]
    assert len(as_tensor_list((t, t))) == 2
    with pytest.raises(TypeError):
        as_tensor_list({"y": t})


def test_errors_reported_are_max_abs_and_relative_l2():
    ref = torch.tensor([3.0, 4.0], dtype=torch.float64)
    cand = torch.tensor([3.0, 4.5])
    result = compare(cand, ref, [torch.float32], 1.0, 0.0)
    assert result.passed
    assert result.max_abs_err == pytest.approx(0.5)
    assert result.rel_l2_err == pytest.approx(0.5 / 5.0)


def _pieces(refs: list, dim: int, slices: int):
    """A float64 reference handed over a slice at a time, as SlicedReference.pieces does."""
    extent = refs[0].shape[dim]
    start = 0
    for part in zip(*(r.tensor_split(slices, dim=dim) for r in refs)):
        yield start, part[0].shape[dim], extent, list(part)
        start += part[0].shape[dim]


def _spoiled(kind: str, ref: torch.Tensor, dtype) -> torch.Tensor:
    out = ref.to(dtype)
    flat = out.view(-1)
    if kind == "nan":
        flat[5] = float("nan")
    elif kind == "bad":
        flat[3:40:7] += 1.0
    elif kind == "inf":
        flat[-2] = float("inf")
    return out


@pytest.mark.parametrize("dim, slices", [(0, 3), (1, 4), (2, 2)])
@pytest.mark.parametrize("kind", ["exact", "nan", "bad", "inf", "ref_inf_matched", "ref_inf_unmatched"])
def test_compared_a_slice_at_a_time_the_verdict_is_the_whole_comparison_s(dim, slices, kind):
    """The checker compares a sliced float64 reference slice by slice (no whole float64 output held); the
    verdict, detail and errors must be the whole comparison's, for two outputs, any sliced dimension (a
    narrowed row block that is not contiguous too), NaN, wrong values and non-finite references."""
    refs = [reference((6, 10, 4), seed=1), reference((6, 10, 4), seed=2)]  # sliced alike along every dim
    if kind.startswith("ref_inf"):
        refs[1].view(-1)[7] = float("inf")
    outs = [r.to(torch.float16) for r in refs]
    if kind in ("nan", "bad", "inf"):
        outs[1] = _spoiled(kind, refs[1], torch.float16)
    if kind == "ref_inf_unmatched":
        outs[1].view(-1)[7] = 0.0
    whole = compare(outs, refs, [torch.float16] * 2, 1e-3, 1e-3)
    sliced = compare_pieces(outs, _pieces(refs, dim, slices), dim, [torch.float16] * 2, 1e-3, 1e-3)
    assert (sliced.passed, sliced.detail) == (whole.passed, whole.detail)
    assert sliced.max_abs_err == pytest.approx(whole.max_abs_err)
    assert sliced.rel_l2_err == pytest.approx(whole.rel_l2_err)
    assert whole.passed == (kind in ("exact", "ref_inf_matched"))


def test_compared_a_slice_at_a_time_a_wrong_shape_dtype_or_count_is_said_as_before():
    refs = [reference((6, 10)), reference((6, 3))]
    good = [r.to(torch.float32) for r in refs]
    for outs, want in ((good[:1], "1 outputs, expected 2"),
                       ([good[0], good[1][:, :2]], "output 1 shape (6, 2), expected (6, 3)"),
                       ([good[0], good[1].half()], "output 1 dtype torch.float16, expected torch.float32")):
        result = compare_pieces(outs, _pieces(refs, 0, 2), 0, [torch.float32] * 2, 1e-5, 1e-5)
        assert not result.passed and result.detail == want
        assert compare(outs, refs, [torch.float32] * 2, 1e-5, 1e-5).detail == want


def test_a_sliced_reference_that_gives_no_slices_never_passes():
    result = compare_pieces([torch.zeros(3)], iter(()), 0, [torch.float32], 1e-5, 1e-5)
    assert not result.passed and "no slices" in result.detail
