"""GPU MODE's protocol on a machine without a GPU, as a user runs it (no TRITON_INTERPRET in the shell):
the tests run through Triton's interpreter, the timed modes say in one line that they need a GPU."""

import shutil

import pytest
import torch
import yaml
from click.testing import CliRunner
from conftest import SOLUTIONS_DIR

from submit.gpumode import local
from submit.gpumode.client import Exit
from submit.gpumode.flow import describe
from submit.gpumode.local import LocalRun, child_env
from submit.gpumode.package import package
from submit.gpumode.problem import PROBLEMS_DIR
from suite.cli import cli

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="what a machine without a GPU does")
STARTER = SOLUTIONS_DIR / "vectorsum_v2" / "triton_starter.py"


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(autouse=True)
def plain_shell(tmp_path, monkeypatch):
    """A user's shell: no interpreter switch, no CPU-bench override, no leaderboard settings."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("TRITON_INTERPRET", "KSUITE_GPUMODE_CPU_BENCH", "POPCORN_API_URL", "POPCORN_CLI_ID",
                 "POPCORN_SEED"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def tiny_folder(tmp_path):
    """vectorsum_v2's folder with two small tests."""
    folder = tmp_path / "vectorsum_v2"
    shutil.copytree(PROBLEMS_DIR / "vectorsum_v2", folder)
    task = yaml.safe_load((folder / "task.yml").read_text())
    task.update(tests=[{"size": 1023, "seed": 4242}, {"size": 2048, "seed": 5531}])
    (folder / "task.yml").write_text(yaml.safe_dump(task))
    return folder


@pytest.fixture
def triton_submission(tmp_path):
    path = tmp_path / "submission.py"
    path.write_text(package(STARTER, "vectorsum_v2", "H100"))
    return path


def test_gpumode_eval_runs_a_triton_submission_through_the_interpreter(tiny_folder, triton_submission):
    result = invoke("gpumode-eval", tiny_folder, triton_submission)
    assert result.exit_code == 0, result.output
    assert "local test: pass (ok)" in result.output and "active drivers" not in result.output


def test_submit_dry_run_passes_its_tests_and_says_timing_needs_a_gpu(tiny_folder, tmp_path):
    result = invoke("submit", "gpumode", tiny_folder, STARTER, "--dry-run", "--out", tmp_path / "out.py")
    assert result.exit_code == 0, result.output
    assert "local test: pass" in result.output and "test None" not in result.output
    assert "local benchmark: skipped (timing needs a GPU" in result.output
    assert "dry run: not sent" in result.output


@pytest.mark.parametrize("mode", ["benchmark", "leaderboard"])
def test_timed_modes_without_a_gpu_are_one_line_and_their_code(tiny_folder, triton_submission, mode):
    result = CliRunner().invoke(cli, ["gpumode-eval", str(tiny_folder), str(triton_submission), "--mode", mode])
    assert result.exit_code == Exit.CONFIG
    assert result.output.strip().splitlines() == [result.output.strip()]
    assert "timing needs a GPU" in result.output and "Traceback" not in result.output


def test_tests_that_never_ran_are_counted_not_printed_as_none():
    run = LocalRun("test", 112, {"test-count": "5", "test.0.spec": "size: 1023; seed: 4242"},
                   "RuntimeError: it broke")
    lines = describe(run)
    assert "None" not in "\n".join(lines)
    assert lines[1:] == ["  test size: 1023; seed: 4242: did not finish", "  4 of 5 tests not run",
                         "  RuntimeError: it broke"]


def test_on_a_gpu_the_child_runs_as_on_the_leaderboard(monkeypatch):
    monkeypatch.setattr(local, "cuda_here", lambda: True)
    assert "TRITON_INTERPRET" not in child_env(None)
    monkeypatch.setattr(local, "cuda_here", lambda: False)
    assert child_env(None)["TRITON_INTERPRET"] == "1"
