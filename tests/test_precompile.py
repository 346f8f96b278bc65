"""The cold-cache precompiles of a bench run: which (solution, dtype) pairs, at which shapes, in which order,
and that a failed or unfinished compile is only counted, never a result."""

import threading

from harness import Options, ProblemRef, SolutionRef
from harness.loader import load_problem
from harness.machine_code import precompile
from suite.registry import Registry


def rmsnorm_plan():
    registry = Registry()
    problem = registry.problem("rmsnorm")
    solutions = [registry.solution(problem, name) for name in ("triton_family", "cuda_rowwise", "triton_starter")]
    return problem, [(problem, solutions)]


def test_each_triton_solution_is_planned_once_per_dtype_at_every_shape_its_worker_calls():
    problem, plan = rmsnorm_plan()
    jobs = precompile.plan_jobs(plan, Options(shapes="all"))
    meta = load_problem(problem.path).meta
    assert [(j.solution.rsplit("/", 1)[-1], j.dtype) for j in jobs] == [
        (name, dtype) for name in ("triton_family.py", "triton_starter.py") for dtype in meta.dtypes]  # no CUDA C++
    keys = {tuple(sorted(s.items())) for s in jobs[0].shapes}
    wanted = list(meta.small_shapes) + list(meta.shapes) + list(meta.large_shapes) + list(meta.edge_shapes)
    assert {tuple(sorted(s.items())) for s in wanted} <= keys
    assert len(keys) == len(jobs[0].shapes)  # each shape once


def test_the_dtypes_asked_for_limit_the_jobs_and_a_problem_that_does_not_load_is_left_to_its_worker(tmp_path):
    _, plan = rmsnorm_plan()
    broken = tmp_path / "broken.py"
    broken.write_text("this is not python\n")
    plan.append((ProblemRef("broken", broken), [SolutionRef("triton_x", tmp_path / "triton_x.py")]))
    jobs = precompile.plan_jobs(plan, Options(dtypes=("float16",)))
    assert {j.dtype for j in jobs} == {"float16"} and all("broken" not in j.problem for j in jobs)


def test_off_under_the_interpreter_and_when_switched_off():
    assert not precompile.enabled(Options(interpret=True), environ={})
    assert not precompile.enabled(Options(), environ={precompile.PRECOMPILE_ENV: "0"})
    assert precompile.enabled(Options(), environ={})
    _, plan = rmsnorm_plan()
    assert precompile.start(plan, Options(interpret=True), {}, 90) is None
    assert precompile.start(plan, Options(), {}, None) is None  # no GPU capability known


def test_jobs_run_in_plan_order_and_failures_are_counted_not_raised():
    _, plan = rmsnorm_plan()
    jobs = precompile.plan_jobs(plan, Options())
    seen, gate = [], threading.Event()

    def fake_compile(job, capability, env, timeout_s):
        seen.append((job.solution, job.dtype, capability, env["OMP_NUM_THREADS"]))
        if len(seen) == 2:
            raise RuntimeError("a harness bug in one compile")
        if len(seen) == len(jobs):
            gate.set()
        return len(seen) != 3  # the third: the candidate does not compile

    pc = precompile.Precompiles(jobs, 90, {"OMP_NUM_THREADS": "1"}, workers=1, compile_one=fake_compile)
    assert gate.wait(10)
    for future in pc.futures:
        future.exception()  # wait for the last one to be marked done
    assert [(s, d) for s, d, _, _ in seen] == [(j.solution, j.dtype) for j in jobs]
    assert {(c, t) for _, _, c, t in seen} == {(90, "1")}
    assert pc.close().startswith(f"precompiled {len(jobs) - 2} of {len(jobs)} Triton (solution, dtype) pairs "
                                 "on the CPU (2 failed, 0 not finished; 0 were already in the cache)")


def test_close_drops_the_jobs_not_started():
    _, plan = rmsnorm_plan()
    jobs = precompile.plan_jobs(plan, Options())
    release = threading.Event()

    def slow_compile(job, capability, env, timeout_s):
        release.wait(10)
        return True

    pc = precompile.Precompiles(jobs, 90, {}, workers=1, compile_one=slow_compile)
    line = pc.close()
    release.set()
    assert f"0 of {len(jobs)}" in line and f"{len(jobs)} not finished" in line
    assert all(f.cancelled() for f in pc.futures[1:])


def test_a_problem_s_precompiles_not_started_are_dropped_when_its_solutions_begin():
    """Its worker compiles those kernels itself by then; the cores go to the problems still ahead."""
    jobs = [precompile.Job(problem, f"{problem}_{k}.py", "float16", []) for problem in ("a.py", "b.py")
            for k in range(2)]
    release, running, ran = threading.Event(), threading.Event(), []

    def slow_compile(job, capability, env, timeout_s):
        ran.append(job.solution)
        running.set()
        release.wait(10)
        return True

    pc = precompile.Precompiles(jobs, 90, {}, workers=1, compile_one=slow_compile)
    assert running.wait(10)
    pc.drop("a.py")  # a.py's first job is running: it goes on; its second had not started
    release.set()
    for future in pc.futures:
        if not future.cancelled():
            future.result()
    assert ran == ["a.py_0.py", "b.py_0.py", "b.py_1.py"]
    assert "precompiled 3 of 4 Triton (solution, dtype) pairs on the CPU (0 failed, 0 not finished, 1 dropped " \
           "as their problem's solutions began; 0 were already in the cache)" in pc.close()


def test_a_job_that_compiled_is_not_started_again_on_the_same_cache(tmp_path):
    """A warm run starts no child for kernels its cache holds (each child imports torch and draws every
    shape's inputs on the host); a changed solution, or another cache folder, compiles again."""
    _, plan = rmsnorm_plan()
    jobs = precompile.plan_jobs(plan, Options(dtypes=("float16",)))
    env = {"TRITON_CACHE_DIR": str(tmp_path / "triton")}
    started = []

    def fake_compile(job, capability, env, timeout_s):
        started.append(job.solution)
        return job is not jobs[-1]  # the last one fails: no marker, tried again next run

    def run(jobs, env):
        pc = precompile.Precompiles(jobs, 90, env, workers=1, compile_one=fake_compile)
        for future in pc.futures:
            future.result()
        return pc.close()

    assert len(jobs) == 2
    assert run(jobs, env).startswith("precompiled 1 of 2 Triton (solution, dtype) pairs on the CPU "
                                     "(1 failed, 0 not finished; 0 were already in the cache)")
    assert started == [j.solution for j in jobs]
    started.clear()
    line = run(jobs, env)
    assert started == [jobs[-1].solution] and "1 were already in the cache" in line
    assert precompile.marker(jobs[0], 90, env) != precompile.marker(jobs[0], 80, env)  # another target
    assert precompile.marker(jobs[0], 90, {}) is None  # no cache folder named: nothing marked
    started.clear()
    run(jobs, {"TRITON_CACHE_DIR": str(tmp_path / "other")})
    assert started == [j.solution for j in jobs]


def test_a_compile_leaves_the_kernels_in_the_triton_cache_the_workers_read(tmp_path):
    """The real child (no GPU needed: offline_compile.py compiles for sm_90 and launches nothing)."""
    import os

    problem, plan = rmsnorm_plan()
    job = precompile.plan_jobs(plan, Options(dtypes=("float16",)))[0]
    small = precompile.Job(job.problem, job.solution, job.dtype, job.shapes[:1])
    env = {**os.environ, "TRITON_CACHE_DIR": str(tmp_path / "triton"), **precompile.CHILD_ENV}
    env.pop("TRITON_INTERPRET", None)
    assert precompile._compile(small, 90, env, 300.0)
    assert list((tmp_path / "triton").rglob("*.cubin"))


FOREIGN = """import torch
import torch.nn as nn

batch_size, dim = 16, 4096


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
"""


def test_shapes_too_large_to_draw_on_the_host_and_problems_without_a_cost_model_are_left_to_their_workers(
        monkeypatch, tmp_path):
    problem, plan = rmsnorm_plan()
    meta = load_problem(problem.path).meta
    large = max(meta.large_shapes, key=lambda s: meta.bytes_fn(s, 4))
    monkeypatch.setattr(precompile, "MAX_SHAPE_BYTES", meta.bytes_fn(large, 4) - 1)
    jobs = precompile.plan_jobs(plan, Options())
    assert jobs and all(large not in j.shapes for j in jobs)
    foreign = tmp_path / "19_ReLU.py"  # a KernelBench file: no META, so no cost model
    foreign.write_text(FOREIGN)
    solution = tmp_path / "triton_x.py"
    solution.write_text("")
    assert precompile.plan_jobs([(ProblemRef("19_ReLU", foreign), [SolutionRef("triton_x", solution)])],
                                Options()) == []


def test_the_bench_drops_a_problem_s_precompiles_as_its_solutions_begin():
    from suite.bench import solutions_starting

    class Compiles:
        dropped: list = []

        def drop(self, problem):
            self.dropped.append(problem)

    class Builds:
        def options_for(self, options, paths):
            return Options(extra_env={"failures of": ",".join(paths)})

    problem, _ = rmsnorm_plan()[1][0]
    assert solutions_starting(problem, ["s.py"], None, None) is None
    compiles = Compiles()
    assert solutions_starting(problem, ["s.py"], None, compiles)(Options()) == Options()
    assert compiles.dropped == [str(problem.path)]
    assert solutions_starting(problem, ["s.py"], Builds(), compiles)(Options()).extra_env == {"failures of": "s.py"}

