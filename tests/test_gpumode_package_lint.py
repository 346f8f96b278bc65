"""Packaging a solution into one submission file, and the server's rules as lint refusals."""

import importlib.util

import pytest
from conftest import FIXTURES, SOLUTIONS_DIR

from submit.gpumode.lint import check_text, lint
from submit.gpumode.package import package, write
from submit.gpumode.problem import GpuModeError, import_reference, load

SUBMISSIONS = FIXTURES / "gpumode" / "submissions"
GPUS = ("B200", "H100", "A100", "L4")
HEAD = "#!POPCORN leaderboard vectorsum_v2\n#!POPCORN gpu H100\n"


@pytest.fixture(scope="module")
def packaged(tmp_path_factory):
    text = package(SOLUTIONS_DIR / "vectorsum_v2" / "triton_starter.py", "vectorsum_v2", "H100")
    return write(text, tmp_path_factory.mktemp("pkg") / "submission.py")


def test_package_modelnew_has_header_on_top_and_entry_point(packaged):
    text = packaged.read_text()
    assert text.startswith(HEAD) and "def custom_kernel(data):" in text and "class ModelNew" in text


def test_packaged_kernel_writes_into_the_uninitialised_buffer_and_passes(packaged):
    problem = load("vectorsum_v2")
    ref = import_reference(problem)
    spec = importlib.util.spec_from_file_location("packaged_submission", packaged)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    data = ref.generate_input(size=1025, seed=1001, device="cpu")
    data[1].fill_(float("nan"))  # whatever the buffer held must not leak into the answer
    result = module.custom_kernel(data)
    assert result.data_ptr() == data[1].data_ptr()
    assert ref.check_implementation(data, result) == (True, "")


def test_package_custom_kernel_file_replaces_old_header(tmp_path):
    source = tmp_path / "mine.py"
    source.write_text("#!POPCORN leaderboard other\n" + (SUBMISSIONS / "good_torch.py").read_text())
    text = package(source, "vectorsum_v2", "B200")
    assert text.startswith("#!POPCORN leaderboard vectorsum_v2\n#!POPCORN gpu B200\n") and "other" not in text


def test_package_refuses_file_without_entry(tmp_path):
    source = tmp_path / "nothing.py"
    source.write_text("x = 1\n")
    with pytest.raises(GpuModeError, match="neither custom_kernel"):
        package(source, "vectorsum_v2", "H100")


GOOD = HEAD + "import torch\n\n\ndef custom_kernel(data):\n    return data[0].sum()\n"


@pytest.mark.parametrize("data, filename, expected", [
    (GOOD.replace("return", "# a CUDA Stream here\n    return").encode(), "submission.py", "stream"),
    (GOOD.encode() + b"#" * 1_000_001, "submission.py", "at most"),
    (GOOD.encode(), "submission.txt", "extension"),
    (GOOD.encode() + b"\n# \xff\xfe\n", "submission.py", "UTF-8"),
    (GOOD.replace("vectorsum_v2", "vectoradd"), "submission.py", "header leaderboard"),
    (GOOD.replace("gpu H100", "gpu h100"), "submission.py", "header GPU"),
    (GOOD.replace("import torch", "import requests"), "submission.py", "imports requests"),
    (GOOD.replace("def custom_kernel(data):", "def custom_kernel(data)"), "submission.py", "syntax error"),
])
def test_each_rule_refuses_with_one_line(data, filename, expected):
    data = data if isinstance(data, bytes) else data.encode()
    refusals = check_text(data, filename, "vectorsum_v2", GPUS)
    assert len(refusals) == 1 and expected in refusals[0] and "\n" not in refusals[0]


def test_good_text_passes_static_rules():
    assert check_text(GOOD.encode(), "submission.py", "vectorsum_v2", GPUS) == []


def test_lint_runs_the_compile_step(packaged, tmp_path):
    problem = load("vectorsum_v2")
    assert lint(packaged, "vectorsum_v2", "H100", GPUS, problem.path) == []
    broken = tmp_path / "submission.py"
    broken.write_text(HEAD + (SUBMISSIONS / "raises.py").read_text())
    refusals = lint(broken, "vectorsum_v2", "H100", GPUS, problem.path)
    assert len(refusals) == 1 and "python submission.py" in refusals[0] and "broken on import" in refusals[0]
    assert lint(packaged, "vectorsum_v2", "T4", GPUS, run_script=False)[0].startswith("GPU 'T4'")

