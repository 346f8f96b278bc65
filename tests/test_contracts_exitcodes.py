"""One table of exit codes for every command (issue 11, point 7): an unknown problem, solution or run is a
usage error, 2, everywhere; the table in suite/exit_codes.py is the one README shows and submit uses."""

import pytest
from click.testing import CliRunner
from conftest import ROOT, SCALE_ROWS

from submit.gpumode.client import Exit
from submit.gpumode.evaluate import ExitCode
from suite import commands, exit_codes
from suite.cli import cli


@pytest.fixture(autouse=True)
def no_cuda(monkeypatch):
    monkeypatch.setattr(commands, "cuda_available", lambda: False)


UNKNOWN_PROBLEM = [["check", "no_such_problem"], ["bench", "no_such_problem"], ["inspect", "no_such_problem"],
                   ["optimize", "no_such_problem"], ["lint", "no_such_problem"]]
UNKNOWN_RUN = [["report", "no-such-run"], ["compare", "no-such-run"], ["compare", "no-such-run", "nor-this"],
               ["goals", "no-such-run"], ["bench", str(SCALE_ROWS), "--resume", "no-such-run"],
               ["kernelbench", "baseline", "no-such-run"]]
UNKNOWN_SOLUTION = [["check", str(SCALE_ROWS), "fastest"], ["bench", str(SCALE_ROWS), "--solution", "fastest"]]


@pytest.mark.parametrize("args", UNKNOWN_PROBLEM + UNKNOWN_RUN + UNKNOWN_SOLUTION, ids=" ".join)
def test_unknown_names_are_usage_errors_in_every_command(args, results_root):
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == exit_codes.USAGE == 2, result.output
    assert "Traceback" not in result.output
    assert any(word in result.output for word in ("no_such_problem", "no-such-run", "fastest")), result.output


def test_an_empty_results_folder_is_a_usage_error_too(results_root):
    for args in (["report"], ["goals"]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2 and "no recorded runs" in result.output, result.output


def test_a_failed_implementation_is_1_not_2(results_root):
    from conftest import candidate

    result = CliRunner().invoke(cli, ["check", str(SCALE_ROWS), str(candidate("wrong_math"))])
    assert result.exit_code == exit_codes.FAILED == 1, result.output


def test_readme_shows_the_table():
    assert exit_codes.markdown_table() in (ROOT / "README.md").read_text()


def test_submit_uses_the_table():
    assert (Exit.OK, Exit.FAILED, Exit.USAGE) == (exit_codes.OK, exit_codes.FAILED, exit_codes.USAGE)
    assert (Exit.AUTH, Exit.NOT_FOUND, Exit.RATE_LIMITED, Exit.SERVER, Exit.TIMEOUT, Exit.NETWORK, Exit.CONFIG,
            Exit.REJECTED) == tuple(range(3, 11))


def test_gpumode_protocol_codes_are_the_ones_documented():
    assert (ExitCode.CUDA_FAIL, ExitCode.PIPE_FAIL, ExitCode.VALIDATION_FAIL, ExitCode.BAD_SPEC, ExitCode.TIMEOUT) == (
        exit_codes.PROTOCOL_CUDA_FAIL, exit_codes.PROTOCOL_PIPE_FAIL, exit_codes.PROTOCOL_VALIDATION_FAIL,
        exit_codes.PROTOCOL_BAD_SPEC, exit_codes.PROTOCOL_TIMEOUT)


def test_every_code_of_the_table_is_distinct():
    codes = [exit_codes.OK, exit_codes.FAILED, exit_codes.USAGE, *range(3, 11), *range(110, 115),
             exit_codes.INTERRUPTED]
    assert len(set(codes)) == len(codes)
