"""Problem and candidate files: clear LoadErrors naming the file, and every shipped problem complete."""

import math
import textwrap

import pytest
import torch
from conftest import SCALE_ROWS, candidate, problem_files, syntax_error_candidate

from harness.loader import DTYPES, LoadError, load_candidate_class, load_problem
from harness.meta_schema import STABILITY_TRANSFORMS

GOOD_PROBLEM = """
import torch

batch_size = 4
dim = 8


class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
"""


def write(tmp_path, name: str, source: str):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


BROKEN_PROBLEMS = {
    "no_model": (GOOD_PROBLEM.replace("class Model(", "class Reference("), "no Model"),
    "no_get_inputs": (GOOD_PROBLEM.replace("def get_inputs(", "def make_inputs("), "no get_inputs"),
    "no_get_init_inputs": (GOOD_PROBLEM.replace("def get_init_inputs(", "def init_inputs("), "no get_init_inputs"),
    "model_not_module": (GOOD_PROBLEM.replace("class Model(torch.nn.Module):", "class Model:"), "torch.nn.Module"),
    "syntax_error": (GOOD_PROBLEM.replace("def forward(self, x):", "def forward(self, x)"), "syntax error at line"),
    "import_fails": ("import torch\nimport no_such_module_kernelsuite\n" + GOOD_PROBLEM, "import failed"),
    "raises_at_import": (GOOD_PROBLEM + "\nraise ValueError('bad constant')\n", "bad constant"),
    "meta_unknown_size": (GOOD_PROBLEM + "\nMETA = {'small_shapes': [{'batch_size': 2, 'hidden': 4}]}\n",
                          "hidden"),
    "meta_unknown_size_large": (GOOD_PROBLEM + "\nMETA = {'large_shapes': [{'rows': 2}]}\n", "rows"),
    "meta_unknown_dtype": (GOOD_PROBLEM + "\nMETA = {'dtypes': ['float8']}\n", "float8"),
    "meta_not_dict": (GOOD_PROBLEM + "\nMETA = [('dtypes', ['float16'])]\n", "META must be a dict"),
    "meta_goal_zero": (GOOD_PROBLEM + "\nMETA = {'goal_pct_sol': 0}\n", "goal_pct_sol must be a number"),
    "meta_goal_as_text": (GOOD_PROBLEM + "\nMETA = {'goal_pct_sol': '90 %'}\n", "goal_pct_sol must be a number"),
}


@pytest.mark.parametrize("case", sorted(BROKEN_PROBLEMS))
def test_broken_problem_file_gives_load_error_naming_file(tmp_path, case):
    source, cause = BROKEN_PROBLEMS[case]
    path = write(tmp_path, f"{case}.py", source)
    with pytest.raises(LoadError) as info:
        load_problem(path, f"ksuite_test_{case}")
    message = str(info.value)
    assert str(path) in message
    assert cause in message


def test_missing_problem_file_gives_load_error(tmp_path):
    with pytest.raises(LoadError, match="no such file"):
        load_problem(tmp_path / "nowhere.py")


def test_foreign_file_without_meta_checks_its_own_shape_in_float32(tmp_path):
    loaded = load_problem(write(tmp_path, "plain.py", GOOD_PROBLEM), "ksuite_test_plain")
    assert loaded.meta.dtypes == ("float32",)
    assert list(loaded.meta.small_shapes) == [{"batch_size": 4, "dim": 8}]
    assert loaded.meta.sweep("large") == [{"batch_size": 4, "dim": 8}]
    assert loaded.meta.bytes_fn is None


def test_apply_shape_is_seen_by_get_inputs(tmp_path):
    loaded = load_problem(write(tmp_path, "plain.py", GOOD_PROBLEM), "ksuite_test_shape")
    (x,) = loaded.raw_inputs({"batch_size": 3, "dim": 5})
    assert tuple(x.shape) == (3, 5)


def test_a_constant_a_shape_leaves_out_keeps_the_files_value_not_the_last_shapes(tmp_path):
    loaded = load_problem(write(tmp_path, "plain.py", GOOD_PROBLEM), "ksuite_test_partial_shape")
    loaded.raw_inputs({"batch_size": 3, "dim": 5})
    (x,) = loaded.raw_inputs({"batch_size": 2})
    assert tuple(x.shape) == (2, 8)  # dim is the file's 8 again, not the edge shape's 5


def test_fixture_problem_meta_is_read():
    meta = load_problem(SCALE_ROWS, "ksuite_test_scale_rows").meta
    assert meta.dtypes == ("float32", "float16")
    assert meta.tolerance("float32") == (1e-5, 1e-5)
    assert meta.strided_inputs is True and meta.deterministic is True
    assert meta.sweep("small") == [{"batch_size": 8, "dim": 32}, {"batch_size": 5, "dim": 48}]
    assert meta.sweep("large") == [{"batch_size": 32, "dim": 128}]
    # all: small, then mid, then large, without repeats
    assert meta.sweep("all") == [{"batch_size": 8, "dim": 32}, {"batch_size": 5, "dim": 48},
                                 {"batch_size": 16, "dim": 64}, {"batch_size": 32, "dim": 128}]
    assert meta.bytes_fn({"batch_size": 8, "dim": 32}, 4) == (2 * 8 * 32 + 32) * 4


@pytest.mark.parametrize("name, cause", [("no_modelnew", "no ModelNew"), ("syntax_error", "syntax error at line 11")])
def test_broken_candidate_gives_load_error_naming_file(tmp_path, name, cause):
    path = syntax_error_candidate(tmp_path) if name == "syntax_error" else candidate(name)
    with pytest.raises(LoadError) as info:
        load_candidate_class(path, f"ksuite_test_cand_{name}")
    assert str(path) in str(info.value)
    assert cause in str(info.value)


def test_candidate_modelnew_not_a_module(tmp_path):
    path = write(tmp_path, "not_module.py", "class ModelNew:\n    pass\n")
    with pytest.raises(LoadError, match="not a torch.nn.Module"):
        load_candidate_class(path, "ksuite_test_not_module")


# ---- every shipped problem loads and declares a complete META -------------------------------------

PROBLEMS = problem_files()


def test_there_are_problems():
    assert len(PROBLEMS) >= 5


@pytest.mark.parametrize("path", PROBLEMS, ids=[p.stem for p in PROBLEMS])
def test_shipped_problem_meta_is_complete(path):
    loaded = load_problem(path, f"ksuite_test_meta_{path.stem}")
    raw = loaded.module.META
    meta = loaded.meta
    assert meta.dtypes and all(d in DTYPES for d in meta.dtypes)
    assert raw.get("small_shapes"), "no small_shapes: the CPU sweep would use the file's full-size constants"
    assert raw.get("large_shapes"), "no large_shapes"
    assert meta.bound in ("memory", "compute")
    assert (meta.goal_pct_sol is not None) == (meta.bound == "memory"), "memory-bound problems declare a goal"
    assert set(meta.stability) <= set(STABILITY_TRANSFORMS)
    declared_tolerances = raw.get("tolerances", {})
    for dtype in meta.dtypes:
        assert dtype in declared_tolerances, f"no tolerance declared for {dtype}"
        atol, rtol = declared_tolerances[dtype]
        assert 0 <= atol < 1 and 0 <= rtol < 1
    assert callable(raw.get("bytes")), "no bytes lambda"
    all_shapes = list(meta.small_shapes) + list(meta.shapes) + list(meta.large_shapes) + list(meta.edge_shapes)
    for shape in all_shapes:
        for dtype in meta.dtypes:
            esize = DTYPES[dtype].itemsize
            nbytes = meta.bytes_fn(shape, esize)
            assert isinstance(nbytes, (int, float)) and math.isfinite(nbytes) and nbytes > 0, (shape, dtype)
            if meta.flops_fn is not None:
                flops = meta.flops_fn(shape, esize)
                assert isinstance(flops, (int, float)) and flops > 0, (shape, dtype)


@pytest.mark.parametrize("path", PROBLEMS, ids=[p.stem for p in PROBLEMS])
def test_shipped_problem_small_shape_inputs_and_weights(path):
    """At the small shape: CPU float32 inputs of interpreter size, a reference that runs, and weights
    that are not constant (all-ones or all-zeros weights hide bugs)."""
    loaded = load_problem(path, f"ksuite_test_small_{path.stem}")
    shape = loaded.meta.small_shapes[0]
    torch.manual_seed(0)
    inputs = loaded.raw_inputs(shape)
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    assert tensors
    assert all(x.device.type == "cpu" for x in tensors)
    assert all(x.dtype == torch.float32 for x in tensors if x.is_floating_point())
    assert sum(x.numel() for x in tensors) <= 1 << 20, "small shape too large for the CPU interpreter"
    model = loaded.module.Model(*loaded.init_inputs(shape))
    for name, param in model.named_parameters():
        assert param.numel() < 2 or param.detach().std() > 0, f"parameter {name} is constant"
    with torch.no_grad():
        model(*inputs)
