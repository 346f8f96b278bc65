"""GPU MODE problem folder vectorsum_v2 and the folder loader: faithful to the leaderboard, errors one line."""

import importlib.util

import pytest
import torch
from conftest import PROBLEMS_DIR

from submit.gpumode.problem import GpuModeError, import_reference, load

TESTS = [(1023, 4242), (1024, 5236), (1025, 1001), (2048, 5531), (4096, 9173)]
BENCHMARKS = [(1638400, 93246), (3276800, 6256), (6553600, 8841), (13107200, 6252), (26214400, 82135),
              (52428800, 12345)]


@pytest.fixture(scope="module")
def problem():
    return load("vectorsum_v2")


@pytest.fixture(scope="module")
def ref(problem):
    return import_reference(problem)


def test_task_yml_lists_exact_cases(problem):
    assert [(c["size"], c["seed"]) for c in problem.tests] == TESTS
    assert [(c["size"], c["seed"]) for c in problem.benchmarks] == BENCHMARKS
    assert problem.ranking_by == "last"
    assert problem.gpus == ("B200", "H100", "A100", "L4")


def test_task_yml_matches_kernelbench_form_meta(problem):
    spec = importlib.util.spec_from_file_location("vs_meta", PROBLEMS_DIR / "vectorsum_v2.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    meta = module.META["gpumode"]
    assert meta["tests"] == problem.tests and meta["benchmarks"] == problem.benchmarks
    assert meta["ranking_by"] == problem.ranking_by and meta["leaderboard"] == problem.name


def test_generate_input_is_seeded_scaled_and_shifted(ref):
    x, out = ref.generate_input(size=4096, seed=7, device="cpu")
    x2, _ = ref.generate_input(size=4096, seed=7, device="cpu")
    x3, _ = ref.generate_input(size=4096, seed=8, device="cpu")
    assert x.dtype == torch.float32 and x.shape == (4096,) and torch.equal(x, x2) and not torch.equal(x, x3)
    assert out.shape == (1,) and out.dtype == torch.float32
    # scale in [0.1, 10), offset in [-100, 100): the spread is never the unit normal's
    assert 0.05 < x.std().item() < 11 and abs(x.mean().item()) < 101


def test_reference_is_float64_sum_as_float32_scalar(ref):
    data = ref.generate_input(size=1025, seed=1001, device="cpu")
    result = ref.ref_kernel(data)
    assert result.shape == () and result.dtype == torch.float32
    assert result.item() == data[0].to(torch.float64).sum().to(torch.float32).item()


def test_check_passes_right_and_fails_wrong_shape_value_nan(ref):
    data = ref.generate_input(size=2048, seed=5531, device="cpu")
    right = data[0].to(torch.float64).sum().to(torch.float32)
    assert ref.check_implementation(data, right) == (True, "")
    ok, message = ref.check_implementation(data, right.reshape(1))
    assert not ok and "shape" in message
    assert not ref.check_implementation(data, right * (1 + 1e-4))[0]
    assert not ref.check_implementation(data, torch.tensor(float("nan")))[0]


def _folder(tmp_path, task="tests: []\n", reference="def generate_input(): pass\n"):
    folder = tmp_path / "p"
    folder.mkdir()
    if task is not None:
        (folder / "task.yml").write_text(task)
    if reference is not None:
        (folder / "reference.py").write_text(reference)
    return folder


@pytest.mark.parametrize("task, reference, names", [
    (None, "", "task.yml"),
    ("tests: []\n", None, "reference.py"),
    ("tests: [1, 2]\n", "", "task.yml"),
    ("tests: {a: [\n", "", "task.yml"),
    ("ranking_by: best\n", "", "task.yml"),
])
def test_malformed_folder_is_one_line_naming_the_file(tmp_path, task, reference, names):
    with pytest.raises(GpuModeError) as err:
        load(_folder(tmp_path, task, reference))
    assert names in str(err.value) and "\n" not in str(err.value)


def test_reference_missing_functions_names_them(tmp_path):
    problem = load(_folder(tmp_path))
    with pytest.raises(GpuModeError, match="reference.py: missing ref_kernel, check_implementation"):
        import_reference(problem)


def test_unknown_problem_name():
    with pytest.raises(GpuModeError, match="no such GPU MODE problem"):
        load("no_such_board")
