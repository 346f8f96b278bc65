"""Every Triton solution compiles for sm_90 at its problem's first large shape, on this machine without a
GPU (harness/machine_code/offline_compile.py). The interpreter, which the other tests use, runs code that Triton's
compiler rejects (a Python construct inside a kernel, a layout the backend cannot lower, an unsupported
dtype mix); this finds those before a GPU call does."""

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

from harness.cuda_build import is_cuda_solution
from harness.loader import load_problem
from harness.machine_code.offline_compile import compile_launches
from suite.registry import PROBLEMS_DIR, Registry


def triton_solutions() -> list:
    pairs = []
    for registry in (Registry(), Registry(kernelbench_dir=PROBLEMS_DIR / "kernelbench")):
        for problem in registry.problems():
            pairs += [(problem, s) for s in registry.solutions(problem) if not is_cuda_solution(s.path)]
    return pairs


PAIRS = triton_solutions()


def test_there_are_solutions_to_compile():
    assert len(PAIRS) >= 20


def compile_at_first_large_shape(problem, solution):
    meta = load_problem(problem.path, f"ksuite_compile_{problem.name.replace('/', '_')}").meta
    return compile_launches(problem.path, solution.path, meta.sweep("large")[0], meta.dtypes[0], 90)


@pytest.fixture(scope="module")
def compiled(request):
    """The selected pairs' compiles, started together: each runs in a child process of its own (most of its time
    is that child importing torch), so as many go at once as the machine has cores, and each test waits for its
    own. The threads read the problem file and wait on the children; none runs Triton's interpreter."""
    wanted = [item.callspec.params for item in request.session.items
              if item.originalname == "test_triton_solution_compiles_for_hopper"]
    pool = ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1)))
    futures = {(p["problem"].name, p["solution"].name): pool.submit(compile_at_first_large_shape,
                                                                     p["problem"], p["solution"]) for p in wanted}
    yield futures
    pool.shutdown(cancel_futures=True)


@pytest.mark.parametrize("problem, solution", PAIRS, ids=[f"{p.name}/{s.name}" for p, s in PAIRS])
def test_triton_solution_compiles_for_hopper(problem, solution, compiled):
    launches = compiled[(problem.name, solution.name)].result()  # its error, if it failed, raised here
    assert launches, "launched no Triton kernel"
    assert all(".target sm_90" in launch.ptx and launch.cubin for launch in launches)


def test_code_only_the_interpreter_accepts_is_caught():
    from conftest import SCALE_ROWS

    from harness.loader import load_candidate_class
    from harness.machine_code.offline_compile import OfflineCompileError

    fixture = Path(__file__).parent / "fixtures" / "compile" / "interpreter_only.py"
    model = load_candidate_class(fixture, "ksuite_test_interpreter_only")(32)
    x = torch.randn(4, 32)
    assert torch.allclose(model(x), x * model.weight)  # right, under this process's interpreter
    # Triton 3.6's words, or 3.2's (which refuses the helper as a global it cannot read)
    caught = r"interpreter_only\.py: (RuntimeError: Unsupported function referenced|CompilationError: .*doubled)"
    with pytest.raises(OfflineCompileError, match=caught):
        compile_launches(SCALE_ROWS, fixture, {"batch_size": 8, "dim": 32}, "float32", 90)
