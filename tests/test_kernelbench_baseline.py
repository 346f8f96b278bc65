"""`ksuite kernelbench baseline` and `score` on our run files: KernelBench's baseline-times JSON, exactly,
from recorded eager and torch.compile timings, read back by the scorer."""

import json

import pytest
from click.testing import CliRunner

from harness.records import Measurement
from submit.kernelbench import load_baseline
from submit.kernelbench_records import summary_rows
from suite.cli import cli
from suite.results_store import RunFile

GPU = "NVIDIA H200"
ENTRY_KEYS = {"mean", "std", "min", "max", "num_trials", "hardware", "device"}


def timed(problem, solution, kind, mean_us, shape=None, correct=True):
    return Measurement(problem=problem, solution=solution, kind=kind, shape=shape or {"n": 1024},
                       dtype="float32", correct=correct, median_us=mean_us * 0.99, iqr_us=1.0, runs=120,
                       rse=0.001, mean_us=mean_us, std_us=0.123456, min_us=mean_us * 0.9, max_us=mean_us * 1.5,
                       gpu=GPU, run_id="20260101-000000")


RECORDS = [
    timed("level1/19_ReLU", "eager", "baseline", 200.0),
    timed("level1/19_ReLU", "compile", "baseline", 150.0),
    timed("level1/19_ReLU", "triton_starter", "solution", 100.0),  # 2x eager, 1.5x compile
    timed("level1/19_ReLU", "eager", "baseline", 9.0, shape={"n": 8}),  # a smaller shape: not KernelBench's
    timed("level1/2_Standard_matrix_multiplication_", "eager", "baseline", 1234.5678),
    timed("level1/2_Standard_matrix_multiplication_", "triton_starter", "solution", 2000.0),  # 0.62x eager
    timed("level1/10_3D_tensor_matrix_multiplication", "eager", "baseline", 50.0),
    timed("level1/10_3D_tensor_matrix_multiplication", "triton_starter", "solution", 1.0, correct=False),
    timed("rmsnorm", "eager", "baseline", 10.0),  # one of our own problems: no KernelBench name
    # a CUDA C++ candidate skipped on a machine without CUDA: not attempted, so not scored
    Measurement("level1/88_MinGPTNewGelu", "cuda_gelu", "solution", {"n": 1024}, "float32", None,
                error="skipped: no CUDA device"),
]


@pytest.fixture
def run_file(results_root):
    run = RunFile.create("nvidia-h200", "20260101-000000")
    for r in RECORDS:
        run.append(r)
    return run


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_baseline_files_have_kernelbench_names_keys_and_units(run_file, tmp_path):
    result = invoke("kernelbench", "baseline", run_file.run_id, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    eager = json.loads((tmp_path / "baseline_time_torch.json").read_text())
    compiled = json.loads((tmp_path / "baseline_time_torch_compile_inductor_default.json").read_text())
    assert list(eager) == ["level1"]
    assert list(eager["level1"]) == ["2_Standard_matrix_multiplication_.py", "10_3D_tensor_matrix_multiplication.py",
                                     "19_ReLU.py"]  # numeric id order, as KernelBench lists them
    assert all(set(e) == ENTRY_KEYS for e in eager["level1"].values())
    assert eager["level1"]["19_ReLU.py"] == {"mean": 0.2, "std": 0.000123, "min": 0.18, "max": 0.3,
                                             "num_trials": 120, "hardware": GPU, "device": "cuda:0"}
    assert eager["level1"]["2_Standard_matrix_multiplication_.py"]["mean"] == 1.23  # ms, 3 significant digits
    assert compiled == {"level1": {"19_ReLU.py": {**eager["level1"]["19_ReLU.py"], "mean": 0.15, "min": 0.135,
                                                  "max": 0.225}}}
    assert load_baseline(eager)[("level1", "19_ReLU.py")] == 0.2  # our scorer reads what we wrote


def test_default_folder_is_beside_the_run(run_file):
    result = invoke("kernelbench", "baseline", run_file.run_id)
    assert result.exit_code == 0, result.output
    assert (run_file.path.parent / "kernelbench" / run_file.run_id / "baseline_time_torch.json").is_file()


def test_score_our_run_against_the_written_json_or_the_run_itself(run_file, tmp_path):
    invoke("kernelbench", "baseline", run_file.run_id, "--out", tmp_path)
    by_file = json.loads(invoke("kernelbench", "score", run_file.path, "--baseline",
                                tmp_path / "baseline_time_torch.json", "--json").output)
    by_name = json.loads(invoke("kernelbench", "score", run_file.run_id, "--baseline", "eager", "--json").output)
    assert by_file == by_name
    assert by_name["count"] == 3 and by_name["fast_p"]["0"] == pytest.approx(2 / 3)
    assert by_name["fast_p"]["1"] == pytest.approx(1 / 3) and by_name["fast_p"]["2"] == 0.0  # 2x is not > 2
    assert by_name["geomean_speedup"] == pytest.approx((2.0 * 1.23 / 2.0) ** 0.5)  # as written: 3 digits


def test_summary_has_a_row_per_problem_with_kernelbench_speedups(run_file):
    rows = {row[0]: row for row in summary_rows(run_file.read())}
    assert list(rows) == ["level1/2_Standard_matrix_multiplication_.py", "level1/10_3D_tensor_matrix_multiplication.py",
                          "level1/19_ReLU.py", "level1/88_MinGPTNewGelu.py"]
    assert rows["level1/19_ReLU.py"][1:8] == ["triton_starter", "ok", "0.1", "0.2", "0.15", "2.00x", "1.50x"]
    assert rows["level1/10_3D_tensor_matrix_multiplication.py"][2] == "FAIL"
    assert rows["level1/88_MinGPTNewGelu.py"][2:4] == ["skip", "-"]


def test_score_names_a_problem_the_baseline_lacks(run_file):
    result = CliRunner().invoke(cli, ["kernelbench", "score", run_file.run_id, "--baseline", "compile"])
    assert result.exit_code == 2
    assert result.output.strip() == "error: baseline: no time for level1/2_Standard_matrix_multiplication_.py"
