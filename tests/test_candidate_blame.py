"""A candidate that cannot be built is the candidate's failure, named by its file and line, never a
"harness error"; -v shows its own traceback (issue 11, point 6)."""

import pytest
from click.testing import CliRunner
from conftest import SCALE_ROWS, candidate

from harness.blame import CandidateError, construct
from suite import commands
from suite.cli import cli
from suite.results_store import find_run

HONEST_INIT = """    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))
"""
RAISING_INIT = """    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))
        raise ValueError(f"unsupported dim {dim}")
"""
NO_ARGS_INIT = """    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(32))
"""


@pytest.fixture(autouse=True)
def no_cuda(monkeypatch):
    monkeypatch.setattr(commands, "cuda_available", lambda: False)


def honest_with(tmp_path, name: str, init: str):
    """The honest Triton candidate with another constructor: it passes the source check, then fails to build."""
    source = candidate("honest_triton").read_text()
    assert HONEST_INIT in source
    path = tmp_path / f"{name}.py"
    path.write_text(source.replace(HONEST_INIT, init))
    return path


def line_of(path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_construct_names_the_raising_line(tmp_path):
    from harness.loader import load_candidate_class

    path = honest_with(tmp_path, "init_raises", RAISING_INIT)
    with pytest.raises(CandidateError) as info:
        construct(load_candidate_class(path, "ksuite_test_blame"), [32])
    line = line_of(path, "raise ValueError")
    assert str(info.value) == f"init_raises.py:{line}: ModelNew.__init__ raised ValueError: unsupported dim 32"
    assert "Traceback (most recent call last)" in info.value.traceback and "unsupported dim" in info.value.traceback


def test_check_blames_a_raising_init_and_verbose_shows_its_traceback(tmp_path):
    path = honest_with(tmp_path, "init_raises", RAISING_INIT)
    line = line_of(path, "raise ValueError")
    result = CliRunner().invoke(cli, ["check", str(SCALE_ROWS), str(path)])
    assert result.exit_code == 1, result.output
    assert f"error: init_raises.py:{line}: ModelNew.__init__ raised ValueError: unsupported dim" in result.output
    assert "harness error" not in result.output and "Traceback" not in result.output
    verbose = CliRunner().invoke(cli, ["check", str(SCALE_ROWS), str(path), "-v"])
    assert "Traceback (most recent call last)" in verbose.output
    assert f'{path}", line {line}, in __init__' in verbose.output


def test_bench_records_a_constructor_that_does_not_fit(tmp_path, results_root):
    path = honest_with(tmp_path, "no_args", NO_ARGS_INIT)
    result = CliRunner().invoke(cli, ["bench", str(SCALE_ROWS), "--solution", str(path), "--no-baselines",
                                      "--verbose"])
    assert result.exit_code == 1, result.output
    errors = {r.error for r in find_run(None).read()}
    line = line_of(path, "def __init__(self)")
    assert len(errors) == 1
    error = errors.pop()
    assert error.startswith(f"no_args.py:{line}: ModelNew(*get_init_inputs()) does not fit the problem's "
                            "constructor arguments [32]: TypeError:"), error
    assert "harness error" not in result.output
    assert "Traceback (most recent call last)" in result.output  # --verbose
