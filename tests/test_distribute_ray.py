"""`bench --ray` (issue 15) on a local Ray instance of 2 CPUs: each (problem, shape, dtype) group a task
(KSUITE_RAY_CPU_TASKS: asking for a CPU, there being no GPU), records written by the driver, a task
whose worker is killed run once more and then recorded failed with the cause. `make test` installs Ray
(requirements-dev.txt), so these always run in CI; without Ray they fail at the import, never skip."""

import os
import sys

import pytest
import ray
from conftest import FIXTURES, SCALE_ROWS, SCALE_ROWS_SHAPES, candidate

from harness import Options, ProblemRef, SolutionRef
from suite.distribute import ray_backend
from suite.distribute.groups import split_plan
from suite.distribute.merge import keys_of
from suite.results_store import RunFile

sys.path.insert(0, str(FIXTURES))
import distribute_stubs  # noqa: E402

PLAN = [(ProblemRef("scale_rows", SCALE_ROWS), [SolutionRef("honest", candidate("honest_triton"))])]
OPTIONS = Options(shapes="small", dtypes=("float32",), time=False, interpret=True, baselines=("eager",))


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    os.environ[ray_backend.CPU_TASKS_ENV] = "1"
    path = os.pathsep.join([str(FIXTURES), os.environ.get("PYTHONPATH", "")])  # the stubs, in Ray's workers
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             runtime_env={"env_vars": {"PYTHONPATH": path, "TRITON_INTERPRET": "1", ray_backend.CPU_TASKS_ENV: "1"}})
    yield
    ray.shutdown()
    os.environ.pop(ray_backend.CPU_TASKS_ENV, None)


def bench(tmp_path, worker, resume=False, run=None, with_baselines=True):
    run = run or RunFile.create("cpu-interpreter", "20261201-000000", tmp_path)
    outcome = ray_backend.run_ray(PLAN, OPTIONS, {"gpu": "cpu"}, run, "local", with_baselines, resume=resume,
                                  quiet=True, worker=worker)
    return run, outcome


def expected_keys():
    return {(g.problem.name, name, tuple(sorted(g.shape.items())), g.dtype)
            for g in split_plan(PLAN, OPTIONS, True, set()) for name, _ in g.impls}


def test_ray_tasks_run_the_harness_and_the_driver_writes_the_records(tmp_path):
    run, _ = bench(tmp_path, ray_backend.bench_group, with_baselines=False)  # one harness child per task
    records = run.read()
    assert keys_of(records) == {k for k in expected_keys() if k[1] == "honest"}
    assert len(records) == len(SCALE_ROWS_SHAPES)
    assert all(r.correct for r in records) and all(r.env.get("host") for r in records)


def test_a_killed_ray_worker_has_its_group_run_once_more(tmp_path):
    run, _ = bench(tmp_path, distribute_stubs.dies_once)
    records = run.read()
    assert keys_of(records) == expected_keys() and all(r.correct for r in records)


def test_a_ray_worker_that_dies_again_leaves_failed_records_and_the_run_resumes(tmp_path):
    run, _ = bench(tmp_path, distribute_stubs.always_dies)
    failed = [r for r in run.read() if r.correct is False]
    assert {tuple(r.shape.values()) for r in failed} == {(8, 32)} and len(failed) == 2
    assert all("WorkerCrashedError" in r.error for r in failed)
    assert keys_of(run.read()) == expected_keys()
    run.path.write_text("".join(line for line in run.path.read_text().splitlines(keepends=True)
                                if '"correct": false' not in line))  # as if cut before those groups
    _, outcome = bench(tmp_path, distribute_stubs.fake_group, resume=True, run=run)
    assert keys_of(run.read()) == expected_keys() and all(r.correct for r in run.read())
    assert len(outcome.records) == 2 and outcome.skipped == 2
