"""What a kernel engineer reaches for: --shape (any shape), --baselines (a filter), --version, a timeout
that does not cost ten minutes per hang, and a warning when compare puts two devices side by side."""

import pytest
from click.testing import CliRunner
from conftest import SCALE_ROWS, candidate

from harness.jobs.runner import _handle
from harness.loader import load_problem
from harness.records import Measurement
from harness.shape_spec import ShapeSpecError, custom_shapes, parse_shape, size_constants
from harness.spec import BASELINES
from suite import commands
from suite.cli import cli
from suite.results_store import RunFile

RMSNORM = ["batch_size", "dim"]


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(autouse=True)
def no_cuda(monkeypatch):
    monkeypatch.setattr(commands, "cuda_available", lambda: False)


def test_a_shape_is_read_against_the_size_constants_in_file_order():
    assert parse_shape("4096x8192", RMSNORM, {}) == {"batch_size": 4096, "dim": 8192}
    assert list(parse_shape("dim=64,batch_size=3", RMSNORM, {})) == RMSNORM  # the file's order, always
    assert parse_shape("dim=64", RMSNORM, {"batch_size": 8, "dim": 32}) == {"batch_size": 8, "dim": 64}
    problem = load_problem(SCALE_ROWS, "ksuite_test_shape_spec")
    assert size_constants(problem) == RMSNORM
    assert custom_shapes(problem, ("16x64",)) == [{"batch_size": 16, "dim": 64}]


@pytest.mark.parametrize("spec, says", [
    ("4096", "1 number for 2 size constants (batch_size x dim)"),
    ("1x2x3", "3 numbers for 2 size constants (batch_size x dim)"),
    ("rows=4", "'rows' is not a size constant (they are batch_size, dim)"),
    ("64xabc", "'abc' is not a whole number"),
    ("0x64", "sizes must be at least 1"),
])
def test_a_shape_that_does_not_fit_says_what_would(spec, says):
    with pytest.raises(ShapeSpecError) as caught:
        parse_shape(spec, RMSNORM, {})
    assert says in str(caught.value)


def test_a_wrong_shape_is_a_usage_error_naming_the_constants():
    result = invoke("check", SCALE_ROWS, candidate("honest_triton"), "--shape", "4096")
    assert result.exit_code == 2
    assert "--shape: shape '4096': 1 number for 2 size constants (batch_size x dim)" in result.output
    assert "Traceback" not in result.output


def test_bench_times_exactly_the_shape_asked_for(results_root):
    result = invoke("bench", SCALE_ROWS, "--solution", candidate("honest_triton"), "--baselines", "eager",
                    "--shape", "16x64")
    assert result.exit_code == 0, result.output
    (run,) = results_root.glob("*/*.jsonl")
    records = RunFile(run).read()
    assert {(r.solution, r.kind) for r in records} == {("honest_triton", "solution"), ("eager", "baseline")}
    assert [r.shape for r in records] == [{"batch_size": 16, "dim": 64}] * 2 and all(r.correct for r in records)


def test_check_runs_its_stages_at_the_shape_asked_for():
    result = invoke("check", SCALE_ROWS, candidate("honest_triton"), "--shape", "batch_size=3,dim=40",
                    "--dtype", "float32")
    assert result.exit_code == 0, result.output
    assert "sweep        pass" in result.output and "the shapes asked for" in result.output


@pytest.mark.parametrize("args", [["--baselines", "compile,nope"], ["--baselines", ""],
                                  ["--baselines", "eager", "--no-baselines"]])
def test_a_baseline_filter_that_cannot_run_is_a_usage_error(args):
    result = invoke("bench", SCALE_ROWS, *args)
    assert result.exit_code == 2, result.output
    if "nope" in args[1]:
        assert "unknown nope" in result.output and all(name in result.output for name in BASELINES)


def test_version():
    result = invoke("--version")
    assert result.exit_code == 0 and result.output.startswith("ksuite, version ")


def test_default_timeout_is_three_minutes_and_counts_from_the_last_step():
    for name in ("check", "bench"):
        timeout = next(p for p in cli.commands[name].params if p.name == "timeout")
        assert timeout.default == 180.0 and "180" in timeout.help
    state = {"plan": None, "current": "x", "started_at": 0.0, "finished": [], "recorded": set(), "fatal": None}
    list(_handle({"event": "stage", "impl": "x"}, state, lambda event: None))
    assert state["started_at"] > 0.0  # a finished stage restarts the clock: a hang is no progress


def _run(path, gpu):
    run = RunFile(path)
    run.append(Measurement("scale_rows", "s", "solution", {"batch_size": 8, "dim": 32}, "float32", True,
                           median_us=10.0, gpu=gpu))
    return run


def test_compare_warns_when_the_two_runs_ran_on_different_devices(tmp_path):
    base, new = _run(tmp_path / "a.jsonl", "NVIDIA H100"), _run(tmp_path / "b.jsonl", "NVIDIA H200")
    result = CliRunner().invoke(cli, ["compare", str(base.path), str(new.path)])
    assert result.exit_code == 0, result.output
    assert "warning: base ran on NVIDIA H100, new on NVIDIA H200" in result.stderr
    same = CliRunner().invoke(cli, ["compare", str(base.path), str(_run(tmp_path / "c.jsonl", "NVIDIA H100").path)])
    assert "warning" not in same.stderr
