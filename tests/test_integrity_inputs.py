"""Anti-cheat checks and input preparation: aliasing, mutation, tensor subclasses, seeded and strided
inputs, stability transforms, reference and candidate built with the same weights."""

import pytest
import torch
from conftest import SCALE_ROWS

from harness.environment import gpu_slug
from harness.inputs import build_models, make_inputs, to_float64
from harness.integrity import checks
from harness.loader import load_problem
from harness.meta_schema import STABILITY_TRANSFORMS

SHAPE = {"batch_size": 8, "dim": 32}


@pytest.fixture(scope="module")
def problem():
    return load_problem(SCALE_ROWS, "ksuite_test_integrity_problem")


# ---- aliasing, mutation, subclasses, devices, speed ---------------------------------------------------

@pytest.mark.parametrize("make_output", [
    lambda x: x,                     # the input itself
    lambda x: x.view(-1),            # a view
    lambda x: x[2:5],                # a slice of it
    lambda x: x.t(),                 # a transposed view
    lambda x: x.mul_(2),             # an in-place result
], ids=["same", "view", "slice", "transpose", "inplace"])
def test_outputs_sharing_input_memory_are_flagged(make_output):
    x = torch.randn(8, 32)
    assert "aliases input 0" in checks.aliasing_problem([make_output(x)], [x])


def test_strided_input_view_and_fresh_output_do_not_alias():
    wide = torch.randn(8, 64)
    x = wide[:, ::2]
    assert checks.aliasing_problem([x * 2, torch.empty(0)], [x, 3, torch.empty(0)]) is None


def test_second_input_aliasing_is_named():
    a, b = torch.randn(4), torch.randn(4)
    assert checks.aliasing_problem([b[1:]], [a, b]) == "output 0 aliases input 1 (shares its memory)"


def test_mutated_inputs_are_flagged_and_untouched_ones_pass():
    x, idx = torch.randn(4, 4), torch.arange(4)
    x[0, 0] = float("nan")
    before = checks.snapshot([x, idx, 5])
    assert checks.mutation_problem([x, idx, 5], before) is None  # NaN equals NaN here
    x[1, 1] += 1e-7
    assert checks.mutation_problem([x, idx, 5], before) == "input 0 was modified by the call"
    x.copy_(before[0])
    idx[2] = 0
    assert checks.mutation_problem([x, idx, 5], before) == "input 1 was modified by the call"


class LazyTensor(torch.Tensor):
    pass


def test_tensor_subclass_outputs_are_flagged():
    out = torch.ones(2).as_subclass(LazyTensor)
    assert "LazyTensor" in checks.subclass_problem([torch.ones(1), out])
    assert checks.subclass_problem([torch.ones(1)]) is None


def test_outputs_on_another_device_are_flagged():
    assert "meta" in checks.device_problem([torch.empty(2, device="meta")], "cpu")
    assert checks.device_problem([torch.empty(2)], "cpu") is None


def test_faster_than_speed_of_light_is_implausible():
    assert "implausible" in checks.implausible_speed(5.0, 10.0)
    assert checks.implausible_speed(9.5, 10.0) is None  # within the 10 % margin
    assert checks.implausible_speed(5.0, None) is None  # not calibrated: nothing to compare with


# ---- inputs ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype, torch_dtype", [("float32", torch.float32), ("float16", torch.float16),
                                                ("bfloat16", torch.bfloat16)])
def test_inputs_are_seeded_and_cast(problem, dtype, torch_dtype):
    a = make_inputs(problem, SHAPE, dtype, seed=1, device="cpu")
    b = make_inputs(problem, SHAPE, dtype, seed=1, device="cpu")
    c = make_inputs(problem, SHAPE, dtype, seed=2, device="cpu")
    assert a[0].dtype == torch_dtype and tuple(a[0].shape) == (8, 32)
    assert torch.equal(a[0], b[0])
    assert not torch.equal(a[0], c[0])


def test_strided_inputs_hold_the_same_values_non_contiguously(problem):
    plain = make_inputs(problem, SHAPE, "float16", seed=3, device="cpu")[0]
    strided = make_inputs(problem, SHAPE, "float16", seed=3, device="cpu", strided=True)[0]
    assert not strided.is_contiguous() and strided.stride() == (64, 2)
    assert torch.equal(plain, strided)


@pytest.mark.parametrize("transform", STABILITY_TRANSFORMS)
def test_stability_transforms(problem, transform):
    base = make_inputs(problem, SHAPE, "float32", seed=4, device="cpu")[0]
    x = make_inputs(problem, SHAPE, "float32", seed=4, device="cpu", transform=transform)[0]
    if transform == "large":
        torch.testing.assert_close(x, base * 100)
    elif transform == "tiny":
        torch.testing.assert_close(x, base * 1e-3)
    elif transform == "mixed":
        ratio = (x / base).abs()
        assert (ratio.amax(dim=1) / ratio.amin(dim=1) < 1.001).all()  # one scale per row
        assert ratio.amax() / ratio.amin() > 10  # rows differ in magnitude
        assert ((ratio >= 1e-3 * 0.999) & (ratio <= 1e3 * 1.001)).all()
    else:
        assert (x == x[:, :1]).all()


def test_float64_reference_inputs_keep_the_rounded_values(problem):
    x = make_inputs(problem, SHAPE, "float16", seed=5, device="cpu")[0]
    (x64,) = to_float64([x])
    assert x64.dtype == torch.float64 and torch.equal(x64, x.double())
    assert to_float64([torch.arange(3), 7])[0].dtype == torch.int64


class RenamedWeights(torch.nn.Module):
    """Same creation order as the reference, another parameter name: equal by seeding."""

    def __init__(self, dim):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.randn(dim))


class OnesWeights(torch.nn.Module):
    """Same parameter name, other init: equal because the reference's state dict is copied in."""

    def __init__(self, dim):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(dim))


@pytest.mark.parametrize("cls, name", [(RenamedWeights, "scale"), (OnesWeights, "weight")])
def test_candidate_gets_the_reference_weights(problem, cls, name):
    reference, reference64, cand = build_models(problem, cls, SHAPE, "float16", seed=0, device="cpu")
    assert reference.weight.dtype == torch.float16 and reference64.weight.dtype == torch.float64
    assert getattr(cand, name).dtype == torch.float16
    assert torch.equal(getattr(cand, name), reference.weight)
    assert torch.equal(reference64.weight, reference.weight.double())
    assert not reference.training and not cand.training


@pytest.mark.parametrize("name, slug", [
    ("NVIDIA H200", "nvidia-h200"),
    ("NVIDIA GeForce RTX 4090", "nvidia-geforce-rtx-4090"),
    ("cpu", "cpu-interpreter"),
])
def test_gpu_slug_names_the_results_folder(name, slug):
    assert gpu_slug(name) == slug
