"""The local evaluation protocol: specs, secret seeds, the stopping rule, results lines and exit codes."""

import io
import os

import pytest
import torch
from conftest import FIXTURES

from submit.gpumode import evaluate as ev
from submit.gpumode.local import parse_results, run_local, score_ns
from submit.gpumode.problem import PROBLEMS_DIR, load

SUBMISSIONS = FIXTURES / "gpumode" / "submissions"
FOLDER = PROBLEMS_DIR / "vectorsum_v2"
TINY = [{"size": 1000, "seed": 1}, {"size": 3001, "seed": 2}]


@pytest.fixture(autouse=True)
def short_budget(monkeypatch):
    monkeypatch.setenv("KSUITE_GPUMODE_BUDGET_S", "0.05")
    monkeypatch.delenv("POPCORN_SEED", raising=False)


def in_process(mode, submission, cases=TINY):
    stream = io.StringIO()
    code = ev.evaluate(mode, cases, FOLDER, SUBMISSIONS / f"{submission}.py", ev.Writer(stream))
    return code, parse_results(stream.getvalue())


def test_parse_specs_and_bad_spec():
    assert ev.parse_specs("size: 1023; seed: 4242\n\nsize: 7; seed: 1\n") == [
        {"size": 1023, "seed": 4242}, {"size": 7, "seed": 1}]
    for bad in ("size 1023", "size: ; seed: 1", "size: 3;"):
        with pytest.raises(ev.SpecError):
            ev.parse_specs(bad)


def test_cantor_pairing_and_secret_seed():
    assert [ev.cantor(0, 0), ev.cantor(1, 0), ev.cantor(0, 1), ev.cantor(2, 3)] == [0, 1, 2, 18]
    assert ev.apply_secret([{"size": 4, "seed": 2}], 3) == [{"size": 4, "seed": 18}]
    assert ev.apply_secret([{"size": 4, "seed": 2}], None) == [{"size": 4, "seed": 2}]


def test_stats_in_nanoseconds():
    s = ev.stats([1.0, 2.0, 3.0])
    assert s["runs"] == 3 and s["mean"] == 2.0 and s["best"] == 1.0 and s["worst"] == 3.0
    assert s["err"] == pytest.approx(s["std"] / 3**0.5)


def test_test_mode_pass_and_fail_lines():
    code, r = in_process("test", "good_torch")
    assert code == 0 and r["test-count"] == "2" and r["test.1.status"] == "pass" and r["check"] == "pass"
    assert r["test.0.spec"] == "size: 1000; seed: 1"
    code, r = in_process("test", "shape_one")
    assert code == ev.ExitCode.VALIDATION_FAIL and r["test.0.status"] == "fail" and "shape" in r["test.0.error"]
    assert r["check"] == "fail"


def test_benchmark_mode_reports_at_least_three_runs():
    code, r = in_process("benchmark", "good_torch")
    assert code == 0 and r["benchmark-count"] == "2"
    assert r["timer"] == ("cuda-events" if torch.cuda.is_available() else "perf_counter")
    for key in ("runs", "mean", "std", "err", "best", "worst"):
        assert f"benchmark.1.{key}" in r
    assert int(r["benchmark.0.runs"]) >= 3
    assert float(r["benchmark.0.best"]) <= float(r["benchmark.0.mean"]) <= float(r["benchmark.0.worst"])


def test_benchmark_mode_checks_once_and_leaderboard_rechecks_fresh_inputs():
    assert in_process("benchmark", "memoizing")[0] == 0  # one check: the cached answer is still right
    code, r = in_process("leaderboard", "memoizing")
    assert code == ev.ExitCode.VALIDATION_FAIL and r["benchmark.0.status"] == "fail" and r["check"] == "fail"
    assert in_process("benchmark", "wrong_float16")[0] == ev.ExitCode.VALIDATION_FAIL


def test_main_exit_codes_for_pipe_spec_and_profile(tmp_path, monkeypatch):
    args = [str(FOLDER), str(SUBMISSIONS / "good_torch.py")]
    monkeypatch.delenv("POPCORN_FD", raising=False)
    casefile = tmp_path / "cases.txt"
    casefile.write_text("size: 10; seed: 1\n")
    assert ev.main(["test", str(casefile), *args]) == ev.ExitCode.PIPE_FAIL
    casefile.write_text("size 10 seed 1\n")
    for mode, expected in (("test", ev.ExitCode.BAD_SPEC), ("profile", ev.ExitCode.VALIDATION_FAIL)):
        read_fd, write_fd = os.pipe()  # main's writer owns (and closes) the write end
        monkeypatch.setenv("POPCORN_FD", str(write_fd))
        assert ev.main([mode, str(casefile), *args]) == expected
        os.close(read_fd)


def test_score_follows_ranking_by():
    assert score_ns([1.0, 4.0], "last") == 4.0
    assert score_ns([1.0, 4.0], "mean") == 2.5
    assert score_ns([1.0, 4.0], "geom") == pytest.approx(2.0)
    assert score_ns([], "last") is None


def test_child_process_run_with_secret_seed_and_timeout():
    problem = load("vectorsum_v2")
    run = run_local(problem, SUBMISSIONS / "good_torch.py", "leaderboard", cases=TINY[:1], secret=5)
    assert run.passed and run.results["benchmark.0.spec"] == f"size: 1000; seed: {ev.cantor(1, 5)}"
    hung = run_local(problem, SUBMISSIONS / "sleeps.py", "test", cases=TINY[:1], timeout_s=1)
    assert hung.exit_code == ev.ExitCode.TIMEOUT and not hung.passed
