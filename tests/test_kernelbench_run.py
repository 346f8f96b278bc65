"""`ksuite kernelbench run` on CPU: KernelBench problems through our harness, candidates found by
KernelBench's naming, records in a run file that `score` reads; the sample problems and their
solutions hold up."""

import json
import shutil

import pytest
from click.testing import CliRunner
from conftest import ROOT

from harness.integrity.static_check import check_file
from harness.jobs.worker import Events, JobRunner
from suite import commands
from suite.cli import cli
from suite.registry import Registry
from suite.results_store import find_run

TREE = ROOT / "problems" / "kernelbench"
SOLUTIONS = ROOT / "solutions" / "kernelbench" / "level1"
SAMPLE_IDS = {1, 19, 21, 22, 23, 36, 40, 47, 88, 94}

# Off by 5e-5 wherever x > 0: outside our exact ReLU tolerance, inside KernelBench's atol of 1e-4.
SLOPPY_RELU = '''import torch
import triton
import triton.language as tl


@triton.jit
def sloppy_relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.where(x > 0, x + 5e-5, 0.0), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        sloppy_relu_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
'''


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(autouse=True)
def no_cuda(monkeypatch):
    monkeypatch.setattr(commands, "cuda_available", lambda: False)


def test_sample_is_ten_level1_problems_each_with_a_solution():
    registry = Registry(kernelbench_dir=TREE)
    problems = registry.problems()
    assert {int(p.path.name.split("_")[0]) for p in problems} == SAMPLE_IDS
    assert all(p.level == 1 for p in problems)
    assert all([s.name for s in registry.solutions(p)] == ["triton_starter"] for p in problems)
    folders = {f"{d.parent.name}/{d.name}" for d in SOLUTIONS.parent.glob("level*/*") if d.is_dir()}
    assert folders == {p.name for p in problems}  # and no solution folder without its problem
    found = {p.name: check_file(registry.solutions(p)[0].path, p.path) for p in problems}
    assert found == {p.name: None for p in problems}  # each does its own work in its own kernels


def test_run_mixed_naming_records_what_kernelbench_tolerance_accepts(tmp_path, results_root):
    (tmp_path / "level1").mkdir()
    (tmp_path / "level1" / "19_ReLU.py").write_text(SLOPPY_RELU)  # one file per problem, their name
    shutil.copy(SOLUTIONS / "23_Softmax" / "triton_starter.py",  # KernelBench's runs/ naming
                tmp_path / "level_1_problem_23_sample_0_kernel.py")
    result = invoke("kernelbench", "run", TREE, "--level", "1", "--ids", "19,23", "--solutions", tmp_path,
                    "--tolerance", "kernelbench")
    assert result.exit_code == 0, result.output
    assert "nothing was timed" in result.output
    records = find_run(None).read()
    cands = {(r.problem, r.solution): r for r in records if r.kind == "solution"}
    assert set(cands) == {("level1/19_ReLU", tmp_path.name), ("level1/23_Softmax", "sample_0")}
    assert all(r.correct and r.median_us is None for r in cands.values())
    assert {r.solution for r in records if r.kind == "baseline"} == {"eager"}  # compile needs CUDA
    assert all(r.env["tolerance"] == "kernelbench" for r in records)

    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"level1": {"19_ReLU.py": {"mean": 1.0}, "23_Softmax.py": {"mean": 1.0}}}))
    score = invoke("kernelbench", "score", records[0].run_id, "--baseline", baseline, "--json")
    assert json.loads(score.output) == {"count": 2, "fast_p": {"0": 1.0, "0.5": 0.0, "0.8": 0.0, "1": 0.0,
                                                                "1.5": 0.0, "2": 0.0},
                                        "geomean_speedup": None, "untimed": 2}
    no_times = CliRunner().invoke(cli, ["kernelbench", "baseline", records[0].run_id])
    assert no_times.exit_code == 2 and "times nothing" in no_times.output


@pytest.mark.parametrize("tolerance, expected", [("ours", (0.0, 0.0)), ("kernelbench", (1e-4, 1e-4))])
def test_tolerance_option_sets_what_every_stage_compares_with(tmp_path, tolerance, expected):
    job = {"problem_name": "level1/19_ReLU", "problem_path": str(TREE / "level1" / "19_ReLU.py"), "impls": [],
           "options": {"interpret": True, "time": False, "tolerance": tolerance, "done": []}}
    runner = JobRunner(job, Events(str(tmp_path / "events.jsonl")))
    assert runner.problem.meta.tolerance("float32") == expected


def test_unknown_id_is_a_one_line_error():
    result = CliRunner().invoke(cli, ["kernelbench", "run", str(TREE), "--ids", "19,2"])
    assert result.exit_code == 2 and result.output.strip() == "error: no level1 problem with id 2"
