"""KernelBench scoring: fast_p and geometric-mean speedup, against KernelBench's baseline JSON layout."""

import json

import pytest
from click.testing import CliRunner

from submit.kernelbench import ScoreError, load_baseline, load_samples, score
from suite.cli import cli

BASELINE = {"level1": {
    "1_Square_matrix_multiplication_.py": {"mean": 2.0, "std": 0.02, "min": 1.9, "max": 2.1, "num_trials": 100,
                                           "hardware": "NVIDIA H100 80GB HBM3", "device": "cuda:0"},
    "19_ReLU.py": {"mean": 1.0}, "23_Softmax.py": {"mean": 3.0}, "40_LayerNorm.py": {"mean": 4.0}}}
RECORDS = [
    {"level": "level1", "problem": "1_Square_matrix_multiplication_", "correct": True, "runtime_ms": 1.0},  # 2x
    {"level": "level1", "problem": "19_ReLU.py", "correct": True, "runtime_ms": 1.6},  # 0.625x
    {"level": "level1", "problem": "level1/23_Softmax.py", "correct": False, "runtime_ms": 0.1},  # wrong: never counts
    {"level": "level1", "problem": "40_LayerNorm", "correct": True, "runtime_ms": 3.2},  # 1.25x
]


def scored(records=RECORDS):
    return score(load_samples(records), load_baseline(BASELINE))


def test_fast_p_counts_correct_and_faster_over_all_attempted():
    result = scored()
    assert result.count == 4
    assert result.fast_p == {0.0: 0.75, 0.5: 0.75, 0.8: 0.5, 1.0: 0.5, 1.5: 0.25, 2.0: 0.0}  # 2x is not > 2


def test_geomean_speedup_over_correct_samples_only():
    assert scored().geomean_speedup == pytest.approx((2.0 * 0.625 * 1.25) ** (1 / 3))
    none_correct = [{**r, "correct": False} for r in RECORDS]
    assert scored(none_correct).geomean_speedup is None and scored(none_correct).fast_p[0.0] == 0.0


def test_nested_layout_like_the_baseline_file():
    nested = {"level1": {"19_ReLU.py": {"correct": True, "mean": 0.5}}}
    assert scored(nested).fast_p[1.5] == 1.0


def test_missing_baseline_and_malformed_records_are_one_line():
    with pytest.raises(ScoreError, match="no time for level2/1_Conv.py"):
        scored([{"level": "level2", "problem": "1_Conv", "correct": True, "runtime_ms": 1}])
    with pytest.raises(ScoreError, match="needs level, problem"):
        load_samples([{"problem": "x"}])
    with pytest.raises(ScoreError, match="numeric 'mean'"):
        load_baseline({"level1": {"x.py": {"std": 1}}})


def test_cli_prints_every_p_and_json(tmp_path):
    (tmp_path / "r.json").write_text(json.dumps(RECORDS))
    (tmp_path / "b.json").write_text(json.dumps(BASELINE))
    args = ["kernelbench", "score", str(tmp_path / "r.json"), "--baseline", str(tmp_path / "b.json")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0 and "fast_1: 0.500" in result.output and "fast_0.8: 0.500" in result.output
    data = json.loads(CliRunner().invoke(cli, [*args, "--json"]).output)
    assert data["fast_p"]["2"] == 0.0 and data["count"] == 4
