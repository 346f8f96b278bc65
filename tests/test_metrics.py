"""Speedups against each baseline and the best one; cost model, rates and speed of light."""

import pytest
import torch
from conftest import SCALE_ROWS

from harness.loader import load_problem
from harness.metrics import add_speedups, rates, speed_of_light_us, work

SHAPE = {"batch_size": 8, "dim": 32}


def rec(solution, median_us, kind="solution", correct=True, shape=SHAPE, dtype="float16", problem="p"):
    return {"problem": problem, "solution": solution, "kind": kind, "shape": dict(shape), "dtype": dtype,
            "correct": correct, "median_us": median_us}


def by_name(records):
    return {r["solution"]: r for r in records}


def test_best_baseline_and_per_baseline_ratios():
    out = by_name(add_speedups([
        rec("eager", 100.0, "baseline"), rec("fused", 50.0, "baseline"), rec("compile", 80.0, "baseline"),
        rec("mine", 25.0),
    ]))
    mine = out["mine"]
    assert mine["best_baseline"] == "fused"
    assert mine["speedup_vs_best_baseline"] == pytest.approx(2.0)
    assert mine["speedup_vs"] == pytest.approx({"eager": 4.0, "fused": 2.0, "compile": 3.2})
    # baselines get the same numbers: the best one is 1.0x itself
    assert out["fused"]["speedup_vs_best_baseline"] == pytest.approx(1.0)
    assert out["eager"]["speedup_vs_best_baseline"] == pytest.approx(0.5)


@pytest.mark.parametrize("failed", [
    {"correct": False},          # wrong results: a fast wrong baseline must not set the bar
    {"correct": None},           # not checked
    {"median_us": None},         # not timed
    {"median_us": 0.0},          # no time
])
def test_failed_baselines_are_ignored(failed):
    fast_but_bad = {**rec("compile", 1.0, "baseline"), **failed}
    out = by_name(add_speedups([rec("eager", 100.0, "baseline"), fast_but_bad, rec("mine", 50.0)]))
    assert out["mine"]["best_baseline"] == "eager"
    assert out["mine"]["speedup_vs_best_baseline"] == pytest.approx(2.0)
    assert "compile" not in out["mine"]["speedup_vs"]


def test_groups_are_per_problem_shape_and_dtype():
    other_shape = {"batch_size": 5, "dim": 48}
    records = [
        rec("eager", 100.0, "baseline"), rec("mine", 50.0),
        rec("eager", 10.0, "baseline", shape=other_shape), rec("mine", 20.0, shape=other_shape),
        rec("eager", 1.0, "baseline", dtype="bfloat16"),
        rec("eager", 1.0, "baseline", problem="q"),
    ]
    out = add_speedups(records)
    assert out[1]["speedup_vs_best_baseline"] == pytest.approx(2.0)
    assert out[3]["speedup_vs_best_baseline"] == pytest.approx(0.5)


def test_shape_key_order_does_not_split_a_group():
    records = [rec("eager", 100.0, "baseline", shape={"batch_size": 8, "dim": 32}),
               rec("mine", 50.0, shape={"dim": 32, "batch_size": 8})]
    assert add_speedups(records)[1]["speedup_vs_best_baseline"] == pytest.approx(2.0)


def test_no_baselines_no_speedup():
    out = add_speedups([rec("mine", 50.0), rec("eager", 10.0, "baseline", correct=False)])
    assert out[0].get("speedup_vs_best_baseline") is None
    assert out[0].get("best_baseline") is None
    assert out[0]["speedup_vs"] == {}


def test_untimed_records_are_left_alone():
    out = add_speedups([rec("eager", 100.0, "baseline"), rec("mine", None, correct=False)])
    assert "speedup_vs_best_baseline" not in out[1]


def test_speed_of_light_memory_and_compute_bound():
    assert speed_of_light_us(2e9, None, "memory", 1e12, None) == pytest.approx(2000.0)
    # compute-bound: the larger of the two floors
    assert speed_of_light_us(1e6, 1e12, "compute", 1e12, 1e15) == pytest.approx(1000.0)
    # memory-bound problems ignore flops
    assert speed_of_light_us(1e6, 1e12, "memory", 1e12, 1e15) == pytest.approx(1.0)
    assert speed_of_light_us(1e6, 1e12, "compute", None, None) is None


def test_rates():
    gbps, tflops = rates(2e9, 4e12, 1e6)  # 2 GB and 4 TFLOP in one second
    assert gbps == pytest.approx(2.0) and tflops == pytest.approx(4.0)
    assert rates(1e9, None, 1e6)[1] is None


def test_work_uses_the_problem_cost_model():
    problem = load_problem(SCALE_ROWS, "ksuite_test_metrics_problem")
    nbytes, flops = work(problem, SHAPE, "float16", [], [])
    assert nbytes == (2 * 8 * 32 + 32) * 2
    assert flops == 8 * 32


def test_work_without_cost_model_counts_inputs_and_outputs(tmp_path):
    path = tmp_path / "plain.py"
    path.write_text("import torch\nn = 4\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                    "        return x\ndef get_inputs():\n    return [torch.randn(n)]\n"
                    "def get_init_inputs():\n    return []\n")
    problem = load_problem(path, "ksuite_test_metrics_plain")
    x, y = torch.ones(10, dtype=torch.float16), torch.ones(3, dtype=torch.float32)
    nbytes, flops = work(problem, {"n": 4}, "float16", [x, 7], [y])
    assert nbytes == 10 * 2 + 3 * 4
    assert flops is None
