"""Several GPUs on one host (issue 15): `bench --gpus` spreads (problem, shape, dtype) groups over one
pinned worker per GPU and writes the records a one-GPU run writes. On CPU the GPUs are fake
(KSUITE_FAKE_GPUS) and the workers run the harness under Triton's interpreter, or a stub job."""

import os
import sys

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, SCALE_ROWS, SCALE_ROWS_SHAPES, candidate

from harness import Measurement, Options, ProblemRef, SolutionRef
from suite import commands
from suite.cli import cli
from suite.compare_gpus import compare_gpus, runs_by_gpu
from suite.distribute import local_gpus, spread
from suite.distribute.groups import split_plan
from suite.distribute.local_gpus import Device, GpuChoiceError, choose, run_queue
from suite.distribute.merge import keys_of
from suite.distribute.optimize import run_spread as optimize_spread
from suite.results_store import ResultsError, RunFile, find_run

sys.path.insert(0, str(FIXTURES))
import distribute_stubs  # noqa: E402

TWO = [Device(0, "fake-gpu", "0"), Device(1, "fake-gpu", "1")]
PROBLEM = ProblemRef("scale_rows", SCALE_ROWS)
OPTIONS = Options(shapes="small", dtypes=("float32",), time=False, interpret=True, baselines=("eager",))


@pytest.fixture(autouse=True)
def no_cuda(monkeypatch):
    monkeypatch.setattr(commands, "cuda_available", lambda: False)
    monkeypatch.setenv(local_gpus.FAKE_GPUS_ENV, "2")


def bench(*extra):
    return CliRunner().invoke(cli, ["bench", str(SCALE_ROWS), "--solution", str(candidate("honest_triton")),
                                    "--baselines", "eager", "--dtype", "float32", *extra])


def test_two_gpus_record_what_one_gpu_records(results_root):
    """The real harness in both: the merged run has the one-GPU run's keys, each record naming its GPU,
    and the two groups (one per shape) went one to each GPU."""
    one = bench()
    assert one.exit_code == 0, one.output
    single = find_run(None).read()
    two = bench("--gpus", "all")
    assert two.exit_code == 0, two.output
    spread_run = find_run(None).read()
    assert len(single) == 2 * len(SCALE_ROWS_SHAPES)
    assert keys_of(spread_run) == keys_of(single)
    assert {r.env["device_index"] for r in spread_run} == {0, 1}
    for r in spread_run:  # a shape's baseline and candidate were timed side by side on one device
        same_shape = [o for o in spread_run if o.shape == r.shape]
        assert {o.env["device_index"] for o in same_shape} == {r.env["device_index"]}
    assert all("device_index" not in r.env for r in single)
    assert [(r.correct, r.speedup_vs_best_baseline) for r in sorted(spread_run, key=lambda r: r.key)] == \
        [(r.correct, r.speedup_vs_best_baseline) for r in sorted(single, key=lambda r: r.key)]


def test_each_worker_is_pinned_to_its_own_gpu():
    seen = []
    run_queue(list(range(4)), TWO, distribute_stubs.says_where, lambda item, device, kind, data: seen.append(data))
    assert sorted(item for item, *_ in seen) == [0, 1, 2, 3]
    assert all(visible == env for _, visible, env, _ in seen)
    by_gpu = {visible: {pid for _, v, _, pid in seen if v == visible} for _, visible, _, _ in seen}
    assert set(by_gpu) == {"0", "1"} and len(by_gpu["0"] | by_gpu["1"]) == 2  # one process per GPU


def groups_run(tmp_path, job, resume=False, run=None):
    run = run or RunFile.create("cpu-interpreter", "20261201-000000", tmp_path)
    plan = [(PROBLEM, [SolutionRef("honest", candidate("honest_triton"))])]
    outcome = spread.run_spread(plan, OPTIONS, {"gpu": "cpu"}, run, TWO, resume=resume, quiet=True, job=job)
    return run, outcome


def expected_keys():
    plan = [(PROBLEM, [SolutionRef("honest", candidate("honest_triton"))])]
    return {(g.problem.name, name, tuple(sorted(g.shape.items())), g.dtype)
            for g in split_plan(plan, OPTIONS, True, set()) for name, _ in g.impls}


def test_a_worker_killed_mid_job_has_its_job_run_once_more(tmp_path):
    run, outcome = groups_run(tmp_path, distribute_stubs.dies_once)
    records = run.read()
    assert keys_of(records) == expected_keys() and all(r.correct for r in records)
    assert len(outcome.records) == len(expected_keys())  # the record sent before the kill is not measured again


def test_a_worker_that_dies_again_leaves_failed_records_and_a_cut_run_resumes(tmp_path):
    run, _ = groups_run(tmp_path, distribute_stubs.always_dies)
    records = run.read()
    assert keys_of(records) == expected_keys()
    failed = [r for r in records if r.correct is False]
    assert {tuple(r.shape.values()) for r in failed} == {(8, 32)} and len(failed) == 2
    assert all("killed by SIGKILL" in r.error and "worker for GPU" in r.error for r in failed)
    kept = [line for line in run.path.read_text().splitlines(keepends=True) if '"correct": false' not in line]
    run.path.write_text("".join(kept[:1]) + kept[1][:20])  # cut: one record kept, the next one torn
    _, outcome = groups_run(tmp_path, distribute_stubs.fake_group, resume=True, run=run)
    assert keys_of(run.read()) == expected_keys() and all(r.correct for r in run.read())
    assert len(outcome.records) == len(expected_keys()) - 1 and outcome.skipped == 1


def test_gpu_choice():
    assert choose("all", TWO) == TWO and choose("1", TWO) == [TWO[1]] and choose("1,0,1", TWO) == [TWO[1], TWO[0]]
    for text, words in [("2", "has GPUs 0, 1"), ("x", "'all' or GPU indices")]:
        with pytest.raises(GpuChoiceError, match=words):
            choose(text, TWO)
    with pytest.raises(GpuChoiceError, match="different kinds"):
        choose("all", [TWO[0], Device(1, "other", "1")])
    with pytest.raises(GpuChoiceError, match="no CUDA GPU"):
        choose("all", [])


def test_one_gpu_is_todays_path_pinned_to_it(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert commands.where_to_run("1", None) is commands.run_bench
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "1"
    assert commands.where_to_run(None, None) is commands.run_bench


def test_without_ray_the_flag_is_one_line_saying_how_to_install(results_root, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray: ImportError
    result = bench("--ray", "local")
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == ["Error: --ray needs Ray: pip install 'kernelsuite[ray]'"]


def test_optimize_spreads_whole_loops_over_the_gpus():
    lines = []
    results = optimize_spread(("a", "b", "c"), None, TWO, echo=lines.append, job=distribute_stubs.optimize_stub)
    assert sorted(results) == ["a", "b", "c"] and len(lines) == 3 and all(line.startswith("[GPU ") for line in lines)


def test_compare_gpus_reads_percent_of_light_and_rank_order(tmp_path):
    def rec(solution, us, pct):
        return Measurement("rmsnorm", solution, "solution", {"n": 4096}, "float16", True, median_us=us, pct_sol=pct)

    for slug, run_id, rows in [("gpu-a", "20261201-000001", [("eager", 10.0, 40.0), ("triton", 5.0, 80.0)]),
                               ("gpu-b", "20261201-000002", [("eager", 4.0, 50.0), ("triton", 6.0, 33.0)])]:
        run = RunFile.create(slug, run_id, tmp_path)
        for solution, us, pct in rows:
            run.append(rec(solution, us, pct))
    rows, differ = compare_gpus(runs_by_gpu((), None, tmp_path))
    assert differ == [("rmsnorm", "4096", "float16")]
    assert rows[0] == ["rmsnorm", "triton", "4096", "float16", "80", 1, "33", 2, "differs"]
    with pytest.raises(ResultsError, match=r"no runs under .*gpu-c \(GPU folders with runs: gpu-a, gpu-b\)"):
        runs_by_gpu(("gpu-a", "gpu-c"), None, tmp_path)  # a mistyped folder is named, not counted as "found: gpu-a"


def test_compare_gpus_takes_each_problem_from_the_newest_run_that_timed_it(tmp_path):
    """Two machines used for different rounds: gpu-b's newest run is of another problem; its rmsnorm comes from
    the run before, whole (the ranks of one run), and an older rmsnorm run of gpu-a is not mixed in."""
    def rec(problem, solution, us):
        return Measurement(problem, solution, "solution", {"n": 4096}, "float16", True, median_us=us, pct_sol=100 / us)

    for slug, run_id, rows in [("gpu-a", "20261201-000001", [("rmsnorm", "eager", 1.0), ("rmsnorm", "triton", 9.0)]),
                               ("gpu-a", "20261201-000002", [("rmsnorm", "eager", 10.0), ("rmsnorm", "triton", 5.0)]),
                               ("gpu-b", "20261201-000003", [("rmsnorm", "eager", 4.0), ("rmsnorm", "triton", 2.0)]),
                               ("gpu-b", "20261201-000004", [("softmax", "eager", 3.0)])]:
        run = RunFile.create(slug, run_id, tmp_path)
        for problem, solution, us in rows:
            run.append(rec(problem, solution, us))
    rows, differ = compare_gpus(runs_by_gpu((), None, tmp_path))
    assert differ == []
    assert [r[:2] + r[4:] for r in rows] == [["rmsnorm", "triton", "20", 1, "50", 1, ""],
                                             ["rmsnorm", "eager", "10", 2, "25", 2, ""]]


def test_compare_gpus_calls_an_order_within_the_margin_a_tie():
    """At a few microseconds two kernels 1 % apart swap places from run to run: only a swap by more than the
    margin on both GPUs says a kernel won on one generation and lost on the next."""
    from suite.compare_gpus import reversed_pairs

    assert reversed_pairs({"a": {"x": 4.00, "y": 4.04}, "b": {"x": 4.05, "y": 4.00}}, 3.0) == []
    assert reversed_pairs({"a": {"x": 4.0, "y": 4.4}, "b": {"x": 4.6, "y": 4.0}}, 3.0) == [("x", "y")]
    assert reversed_pairs({"a": {"x": 4.0, "y": 4.4}, "b": {"x": 4.05, "y": 4.0}}, 3.0) == []  # a tie on b
