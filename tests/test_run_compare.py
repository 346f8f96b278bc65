"""`ksuite compare BASE NEW`: the same implementation, shape and dtype across two runs (GPUs or days)."""

import json

from click.testing import CliRunner

from harness import Measurement
from suite.cli import cli
from suite.results_store import RunFile
from suite.run_compare import compare


def m(solution="k", us=100.0, iqr=1.0, correct=True, shape=None, gpu="NVIDIA H200"):
    return Measurement(problem="rmsnorm", solution=solution, kind="solution", shape=shape or {"batch_size": 8},
                       dtype="float16", correct=correct, median_us=us, iqr_us=iqr, pct_sol=50.0, gpu=gpu)


def statuses(base, new, threshold=0.05):
    return {r.implementation: r.status for r in compare(base, new, threshold)}


def test_a_change_counts_only_beyond_the_threshold_and_the_runs_spread():
    base = [m("a", 100), m("b", 100), m("c", 100, iqr=30), m("d", 100)]
    new = [m("a", 104), m("b", 110), m("c", 120, iqr=30), m("d", 80)]
    assert statuses(base, new) == {"a": "same", "b": "slower", "c": "same", "d": "faster"}


def test_correctness_changes_and_missing_rows_are_reported():
    base = [m("wrong_now"), m("fixed", correct=False), m("gone")]
    new = [m("wrong_now", correct=False), m("fixed"), m("new")]
    assert statuses(base, new) == {"wrong_now": "now wrong", "fixed": "fixed", "gone": "gone", "new": "new"}


def test_rows_match_on_shape_and_dtype_not_just_the_name():
    rows = compare([m("a", shape={"batch_size": 8})], [m("a", shape={"batch_size": 16})])
    assert sorted(r.status for r in rows) == ["gone", "new"]


def test_cli_exits_1_on_a_regression_and_prints_both_gpus(results_root):
    base, new = RunFile.create("nvidia-h100", "20261101-000000"), RunFile.create("nvidia-h200", "20261130-000000")
    base.append(m("a", 100, gpu="NVIDIA H100"))
    base.append(m("b", 100, gpu="NVIDIA H100"))
    new.append(m("a", 50))
    new.append(m("b", 150))
    result = CliRunner().invoke(cli, ["compare", "20261101-000000", "20261130-000000"])
    assert result.exit_code == 1, result.output
    assert "base 20261101-000000 (NVIDIA H100) -> new 20261130-000000 (NVIDIA H200)" in result.output
    assert "1 faster, 1 slower" in result.output
    as_json = CliRunner().invoke(cli, ["compare", "20261101-000000", "20261130-000000", "--format", "json"])
    rows = {r["implementation"]: r for r in json.loads(as_json.stdout)}
    assert rows["a"]["ratio"] == 0.5 and rows["b"]["status"] == "slower"


def test_cli_unknown_run_is_one_line(results_root):
    result = CliRunner().invoke(cli, ["compare", "nope", "nope2"])
    assert result.exit_code == 2 and result.output.startswith("Error: no run 'nope'")
