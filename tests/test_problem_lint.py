"""`ksuite lint`: degenerate problems are flagged by rule; the shipped problems and the fixture are clean."""

import pytest
from click.testing import CliRunner
from conftest import SCALE_ROWS

from harness.problem_lint import lint_file
from suite.cli import cli

HEADER = '''
import torch
import torch.nn as nn

batch_size = 4
dim = 8


def get_init_inputs():
    return [dim]
'''

DEGENERATE = {
    # sum of a softmax is always 1: a kernel returning ones passes
    "constant_output": '''
class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1).sum(dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]
''',
    # outputs around 1e-7, far under an atol of 1e-2 (KernelBench's level-1 weakness)
    "zeros_pass": '''
class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()

    def forward(self, x):
        return x * 1e-7


def get_inputs():
    return [torch.randn(batch_size, dim)]

META = {"dtypes": ["float16"], "small_shapes": [{"batch_size": 4, "dim": 8}], "tolerances": {"float16": (1e-2, 1e-2)}}
''',
    "ignores_input": '''
class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()

    def forward(self, x, y):
        return x * 2


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]
''',
    "ignores_parameter": '''
class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))
        self.unused = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        return x * self.weight


def get_inputs():
    return [torch.randn(batch_size, dim)]
''',
}


@pytest.mark.parametrize("rule", sorted(DEGENERATE))
def test_degenerate_problem_is_flagged_by_its_rule(tmp_path, rule):
    path = tmp_path / f"{rule}.py"
    path.write_text(HEADER + DEGENERATE[rule])
    findings = lint_file(path)
    rules = [f.rule for f in findings]
    # a constant output ignores its input too; every other problem here has exactly one flaw
    assert rules == ([rule, "ignores_input"] if rule == "constant_output" else [rule]), findings
    assert findings[0].problem == rule and findings[0].shape == {"batch_size": 4, "dim": 8}


def test_ignored_input_is_named_by_position(tmp_path):
    path = tmp_path / "p.py"
    path.write_text(HEADER + DEGENERATE["ignores_input"])
    (finding,) = lint_file(path)
    assert "input 1 ((4, 8))" in finding.detail


def test_fixture_problem_is_clean():
    assert lint_file(SCALE_ROWS) == []


def test_cli_lists_findings_and_exits_1(tmp_path):
    path = tmp_path / "zeros_pass.py"
    path.write_text(HEADER + DEGENERATE["zeros_pass"])
    result = CliRunner().invoke(cli, ["lint", str(path), str(SCALE_ROWS)])
    assert result.exit_code == 1, result.output
    assert "zeros_pass" in result.output and "float16" in result.output
    assert "2 problem(s) linted, 1 flagged" in result.output


def test_cli_on_the_shipped_problems_is_clean():
    result = CliRunner().invoke(cli, ["lint"])
    assert result.exit_code == 0, result.output
    assert "0 flagged" in result.output
