"""CUDA C++ solutions in the harness: skipped without a device, one build cache, one-line build failures.

The CPU torch wheel has no CUDA_HOME, so nothing here links an extension; the compile-error test points
torch at the nvcc on PATH (when there is one) and feeds it a broken .cu, which fails before linking.
"""

import json
import os
import shutil
from dataclasses import asdict
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from conftest import SCALE_ROWS, SCALE_ROWS_DTYPES, SCALE_ROWS_SHAPES, candidate

from harness import cuda_build
from harness.children.launcher import child_env
from harness.jobs.runner import run_job
from harness.jobs.worker import Events, JobRunner
from harness.spec import Options, ProblemRef, SolutionRef
from suite import commands
from suite.cli import cli

CUDA_CANDIDATE = '''"""A CUDA C++ candidate for scale_rows: builds its extension when ModelNew is constructed."""
import functools

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = "torch::Tensor scale_rows(torch::Tensor x, torch::Tensor w);"
CUDA_SOURCE = r"""
__global__ void scale_kernel(const float* x, const float* w, float* y, int n, int dim) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * w[i % dim];
}
torch::Tensor scale_rows(torch::Tensor x, torch::Tensor w) {
  auto y = torch::empty_like(x);
  int n = x.numel(), dim = w.numel();
  scale_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), w.data_ptr<float>(), y.data_ptr<float>(), n, dim);
  return y;
}
"""


@functools.cache
def _extension():
    return load_inline(name="ksuite_test_scale_rows", cpp_sources=CPP_SOURCE, cuda_sources=CUDA_SOURCE,
                       functions=["scale_rows"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))
        _extension()

    def forward(self, x):
        return _extension().scale_rows(x, self.weight)
'''

BROKEN_CANDIDATE = '''"""A CUDA C++ candidate whose kernel does not compile (a missing semicolon)."""
from pathlib import Path

import torch.nn as nn
from torch.utils.cpp_extension import load


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        load(name="ksuite_test_broken", sources=[str(Path(__file__).with_name("broken.cu"))], verbose=False)
'''
PROBLEM = ProblemRef("scale_rows", SCALE_ROWS)
BROKEN_CU = "__global__ void scale_kernel(float* y) { y[0] = 1.0f }\n"


@pytest.fixture
def cuda_candidate(tmp_path) -> Path:
    path = tmp_path / "cuda_scale.py"
    path.write_text(CUDA_CANDIDATE)
    return path


@pytest.fixture
def broken_candidate(tmp_path) -> Path:
    (tmp_path / "broken.cu").write_text(BROKEN_CU)
    path = tmp_path / "cuda_broken.py"
    path.write_text(BROKEN_CANDIDATE)
    return path


@pytest.fixture
def extensions_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "torch_extensions"
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(folder))
    return folder


def test_cuda_solutions_are_told_apart_from_triton_ones(cuda_candidate, broken_candidate, tmp_path):
    (tmp_path / "bad.py").write_text("def (:\n")
    assert cuda_build.is_cuda_solution(cuda_candidate) and cuda_build.is_cuda_solution(broken_candidate)
    assert not cuda_build.is_cuda_solution(candidate("honest_triton"))
    assert not cuda_build.is_cuda_solution(tmp_path / "bad.py")
    assert not cuda_build.is_cuda_solution(None)


def test_builds_persist_in_one_cache_unless_the_user_chose_one(monkeypatch, tmp_path):
    monkeypatch.delenv("TORCH_EXTENSIONS_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    chosen = cuda_build.with_extensions_dir({})["TORCH_EXTENSIONS_DIR"]
    assert Path(chosen).parent == tmp_path / "kernelsuite" / "torch_extensions"
    assert child_env(Options(interpret=True))["TORCH_EXTENSIONS_DIR"] == chosen  # the workers get it too
    assert cuda_build.with_extensions_dir({"TORCH_EXTENSIONS_DIR": "/mine"})["TORCH_EXTENSIONS_DIR"] == "/mine"


def test_without_a_device_a_cuda_solution_is_skipped_not_failed(cuda_candidate):
    events = []
    records = list(run_job(PROBLEM, [SolutionRef("cuda_scale", cuda_candidate)],
                           Options(interpret=True, time=False, dtypes=("all",)), events.append))
    assert sorted((tuple(r["shape"].items()), r["dtype"]) for r in records) == sorted(
        (tuple(s.items()), d) for s in SCALE_ROWS_SHAPES for d in SCALE_ROWS_DTYPES)
    assert all(r["correct"] is None and r["error"] == cuda_build.SKIP_REASON for r in records)
    assert [e["message"] for e in events if e["event"] == "skip"] == [cuda_build.SKIP_REASON]
    assert not [e for e in events if e["event"] in ("start", "stage", "error", "crash")]


def test_check_and_bench_on_cpu_stay_green_and_say_so(cuda_candidate, monkeypatch, results_root):
    monkeypatch.setattr(commands, "cuda_available", lambda: False)
    result = CliRunner().invoke(cli, ["check", str(SCALE_ROWS), str(cuda_candidate)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert f"scale_rows / cuda_scale: skipped: {cuda_build.SKIP_REASON}" in result.output
    result = CliRunner().invoke(cli, ["bench", str(SCALE_ROWS), "--solution", str(cuda_candidate), "--no-baselines"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert f"cuda_scale: skipped: {cuda_build.SKIP_REASON}" in result.output
    rows = [line.split() for line in result.output.splitlines() if line.split()[:1] == ["scale_rows"]]
    assert rows and all(row[1] == "cuda_scale" and row[5] == "skip" for row in rows), result.output


def test_a_cpu_build_of_torch_is_named_as_the_reason(broken_candidate, monkeypatch):
    monkeypatch.setattr(torch.version, "cuda", None)
    built = []
    message = cuda_build.construct(lambda: built.append(1), broken_candidate)
    assert message == (f"{cuda_build.shown(broken_candidate)}: CUDA C++ build needs a CUDA build of torch "
                       f"(this one is {torch.__version__})") and not built


def test_a_missing_compiler_is_one_line_naming_the_file(broken_candidate, monkeypatch):
    from torch.utils import cpp_extension

    monkeypatch.setattr(torch.version, "cuda", "13.0")  # as on a GPU machine
    monkeypatch.setattr(cpp_extension, "CUDA_HOME", None)
    built = []
    message = cuda_build.construct(lambda: built.append(1), broken_candidate)
    shown = cuda_build.shown(broken_candidate)
    assert message == f"{shown}: CUDA C++ build needs nvcc: none on PATH and CUDA_HOME unset"
    assert not built  # nothing was attempted
    monkeypatch.setattr(cpp_extension, "CUDA_HOME", "/no/such/cuda")
    message = cuda_build.construct(lambda: built.append(1), broken_candidate)
    assert message.endswith("CUDA C++ build needs nvcc: none at /no/such/cuda/bin/nvcc") and not built


@pytest.mark.skipif(not (shutil.which("nvcc") and shutil.which("ninja")), reason="needs nvcc and ninja on PATH")
def test_a_compile_error_is_one_line_with_the_first_error_and_the_log(broken_candidate, extensions_dir, monkeypatch):
    from torch.utils import cpp_extension

    monkeypatch.setattr(torch.version, "cuda", "13.0")  # as on a GPU machine
    monkeypatch.setattr(cpp_extension, "CUDA_HOME", str(Path(shutil.which("nvcc")).parent.parent))
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")  # no device to ask
    from harness.loader import load_candidate_class

    cls = load_candidate_class(broken_candidate, "ksuite_test_broken_candidate")
    message = cuda_build.construct(lambda: cls(4), broken_candidate)
    assert "\n" not in message
    assert message.startswith(f"{cuda_build.shown(broken_candidate)}: CUDA C++ build failed: broken.cu(1): error: ")
    log = Path(message.rsplit("(full log: ", 1)[1].rstrip(")"))
    assert log.is_file() and log.is_relative_to(extensions_dir)
    assert "FAILED" in log.read_text() and "nvcc" in log.read_text()


def test_first_error_picks_the_compiler_or_linker_line():
    ninja = ("[1/2] c++ -Werror=return-type -c /x/main.cpp -o main.o\nFAILED: k.so\n"
             "/usr/bin/ld: main.o: in function `f':\n/usr/bin/ld: main.o: undefined reference to `g'\n"
             "collect2: error: ld returned 1 exit status\nninja: build stopped: subcommand failed.\n")
    assert cuda_build.first_error(ninja) == "ld: main.o: undefined reference to `g'"
    assert cuda_build.first_error("/tmp/a/b/main.cpp:3:1: error: 'x' was not declared") == \
        "main.cpp:3:1: error: 'x' was not declared"
    assert cuda_build.first_error("c++ a.o -lc10_cuda -o k.so\n/usr/bin/ld: cannot find -lc10_cuda: No such file") == \
        "ld: cannot find -lc10_cuda: No such file"


def test_prebuild_runs_a_child_per_solution_and_reports_a_line_each(cuda_candidate, extensions_dir):
    options = Options(interpret=False, extra_env={"CUDA_HOME": "/no/such/cuda"}, timeout_s=120)
    lines = []
    updated = cuda_build.prebuild_for([(SCALE_ROWS, cuda_candidate), (SCALE_ROWS, candidate("honest_triton"))],
                                      options, echo=lines.append)
    failures = json.loads(updated.extra_env[cuda_build.FAILURES_ENV])
    assert list(failures) == [os.path.abspath(cuda_candidate)]  # the Triton solution needs no build
    assert lines == [failures[os.path.abspath(cuda_candidate)]]
    assert lines[0].startswith(f"{cuda_build.shown(cuda_candidate)}: CUDA C++ build needs ")  # nvcc, or CUDA torch
    assert cuda_build.Build("/a/b.py", "cached", 0.42).line() == "cached /a/b.py in 0.4 s"


def test_the_worker_records_a_build_failure_for_every_shape_without_rebuilding(cuda_candidate, tmp_path,
                                                                                monkeypatch):
    """On a CUDA machine a failure from bench's prebuild reaches the worker, which records it as is."""
    message = f"{cuda_build.shown(cuda_candidate)}: CUDA C++ build failed: cuda.cu(3): error: nope (full log: x)"
    monkeypatch.setenv(cuda_build.FAILURES_ENV, json.dumps({os.path.abspath(cuda_candidate): message}))
    options = asdict(Options(interpret=False, time=False, dtypes=("all",)))
    job = {"problem_path": str(SCALE_ROWS), "problem_name": "scale_rows",
           "options": {**options, "dtypes": list(options["dtypes"]), "done": []}}
    events_path = tmp_path / "events.jsonl"
    runner = JobRunner(job, Events(str(events_path)))
    monkeypatch.setattr(cuda_build, "construct", lambda *a: pytest.fail("built again"))
    runner.run_solution(SolutionRef("cuda_scale", cuda_candidate))
    events = [json.loads(line) for line in events_path.read_text().splitlines()]
    records = [e for e in events if e["event"] == "measurement"]
    assert len(records) == len(runner.timed) * len(runner.dtypes) > 0
    assert all(r["correct"] is False and r["error"] == message for r in records)
    assert [e["message"] for e in events if e["event"] == "error"] == [message]



def test_a_problem_s_solutions_wait_for_their_own_builds_only(cuda_candidate, tmp_path, monkeypatch):
    """bench starts every CUDA C++ build at once and runs on: a problem's solutions wait for their own
    builds (a CUTLASS one takes 88 s on the H200), not for the others', and each build's line is said once."""
    import threading

    slow = tmp_path / "slow_cuda.py"
    slow.write_text(cuda_candidate.read_text())
    release = threading.Event()

    def fake_build(problem, solution, env, timeout_s):
        if solution == str(slow):
            release.wait(30)
            return cuda_build.Build(solution, "failed", 1.0, "slow_cuda.py: CUDA C++ build failed: nope")
        return cuda_build.Build(solution, "built", 0.5)

    monkeypatch.setattr(cuda_build, "build_in_child", fake_build)
    lines: list[str] = []
    builds = cuda_build.Prebuilds([(SCALE_ROWS, cuda_candidate), (SCALE_ROWS, slow),
                                   (SCALE_ROWS, candidate("honest_triton"))], {}, 60, lines.append)
    try:
        options = builds.options_for(Options(), [cuda_candidate, candidate("honest_triton")])
        assert not builds.futures[str(slow)].done()  # still building: nobody waited for it
        builds.settle(0.05)  # waits no longer than told for a build still compiling
        assert builds.pending([slow]) and not builds.pending([cuda_candidate, None])
        assert options.extra_env == {} and lines == [f"built {cuda_build.shown(cuda_candidate)} in 0.5 s"]
        release.set()
        options = builds.options_for(Options(), [slow])
        failures = json.loads(options.extra_env[cuda_build.FAILURES_ENV])
        assert failures == {str(slow): "slow_cuda.py: CUDA C++ build failed: nope"}
        assert builds.wait() and len(lines) == 2  # each line once
    finally:
        release.set()
        builds.close()


def test_the_solutions_options_are_asked_for_after_the_baselines_ran(monkeypatch):
    """evaluate_problem: the baselines' job runs before bench waits for the solutions' builds."""
    from harness import evaluate

    order: list[str] = []
    monkeypatch.setattr(evaluate, "run_job", lambda problem, impls, opts, on_event: order.append(
        ",".join(i.name for i in impls) + ("+built" if opts.extra_env.get("built") else "")) or iter(()))
    evaluate.evaluate_problem(ProblemRef("scale_rows", SCALE_ROWS), [SolutionRef("a"), SolutionRef("b")],
                              Options(baselines=("eager",)), {},
                              solution_options=lambda o: order.append("wait") or Options(extra_env={"built": "1"}))
    assert order == ["eager", "wait", "a+built", "b+built"]


def test_a_problem_whose_builds_still_compile_runs_after_the_others_once():
    """bench: a problem whose CUDA C++ builds are still compiling at its turn goes after the others (the GPU
    runs their work meanwhile), once: at its second turn it waits for them; with no builds the order stays."""
    from types import SimpleNamespace

    from suite import bench
    from suite.bench import in_build_order

    slow, fast = Path("slow_cuda.py"), Path("fast_cuda.py")
    plan = [(ProblemRef(name, SCALE_ROWS), [SolutionRef(f"{name}_sol", path)])
            for name, path in (("attention", slow), ("matmul", fast), ("softmax", None))]
    settled: list = []
    builds = SimpleNamespace(pending=lambda paths: slow in paths,  # never done: the second turn runs anyway
                             settle=settled.append)
    lines: list[str] = []
    bar = SimpleNamespace(write=lambda line, file=None: lines.append(line))
    assert [p.name for p, _ in in_build_order(plan, builds, bar)] == ["matmul", "softmax", "attention"]
    assert lines == ["attention: its CUDA C++ builds are still compiling; it runs after the others"]
    assert settled == [bench.BUILD_SETTLE_S]  # once, before the first problem: cached builds land within it
    assert [p.name for p, _ in in_build_order(plan, None, bar)] == ["attention", "matmul", "softmax"]


def test_a_short_run_timeout_does_not_cut_a_cuda_build(cuda_candidate, monkeypatch):
    """--timeout bounds a candidate's run; nvcc gets at least BUILD_TIMEOUT_MIN_S (CUTLASS's attention takes
    90-130 s cold), a longer --timeout where one is given."""
    limits = []

    def fake_build(problem, solution, env, timeout_s):
        limits.append(timeout_s)
        return cuda_build.Build(solution, "built", 0.5)

    monkeypatch.setattr(cuda_build, "build_in_child", fake_build)
    for timeout_s in (60, 900):
        builds = cuda_build.start_prebuilds([(SCALE_ROWS, cuda_candidate)], Options(timeout_s=timeout_s),
                                            echo=lambda line: None)
        builds.wait()
        builds.close()
    cuda_build.prebuild_for([(SCALE_ROWS, cuda_candidate)], Options(timeout_s=60), echo=lambda line: None)
    assert limits == [cuda_build.BUILD_TIMEOUT_MIN_S, 900, cuda_build.BUILD_TIMEOUT_MIN_S]

