"""`ksuite kernelbench export`: our solutions as KernelBench candidates, in their naming, loadable with
nothing of this repo around them; and the naming `run --solutions` reads back."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT

from harness.records import Measurement
from harness.spec import ProblemRef, SolutionRef
from submit import kernelbench_layout as layout
from submit.kernelbench_export import ExportError, check_self_contained, choose
from suite.cli import cli

TREE = ROOT / "problems" / "kernelbench"

# What KernelBench does with a candidate, in a fresh interpreter where this repo's packages cannot be
# imported (it is pip-installed in the venv, so they are blocked): import the problem and the candidate
# from their files, seed before Model(*init) and again before ModelNew(*init), run both on get_inputs()
# and compare with torch.allclose at atol = rtol = 1e-4.
KERNELBENCH_LOAD = textwrap.dedent("""
    import importlib.util, sys
    import torch

    class NotInKernelBench:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {"harness", "suite", "submit"}:
                raise ImportError(f"{name} is not in KernelBench's environment")

    sys.meta_path.insert(0, NotInKernelBench())

    def load(path, name):
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    for i, (problem_path, candidate_path, small) in enumerate(zip(*[iter(sys.argv[1:])] * 3)):
        ref = load(problem_path, f"ref{i}")
        for assignment in small.split(","):
            key, value = assignment.split("=")
            setattr(ref, key, int(value))
        new = load(candidate_path, f"new{i}")
        torch.manual_seed(42)
        model = ref.Model(*ref.get_init_inputs())
        torch.manual_seed(42)
        model_new = new.ModelNew(*ref.get_init_inputs())
        inputs = ref.get_inputs()
        with torch.no_grad():
            assert torch.allclose(model(*inputs), model_new(*inputs), atol=1e-4, rtol=1e-4), candidate_path
    print("loaded and matched")
""")


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_export_writes_self_contained_files_kernelbench_loads(tmp_path):
    result = invoke("kernelbench", "export", "--ids", "40,94", "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    layer_norm, mse = tmp_path / "out" / "level1" / "40_LayerNorm.py", tmp_path / "out" / "level1" / "94_MSELoss.py"
    assert sorted(p.name for p in (tmp_path / "out" / "level1").iterdir()) == [layer_norm.name, mse.name]
    head = mse.read_text().splitlines()[:2]
    assert head[0].startswith("# KernelBench candidate for level1/94_MSELoss.py, exported by kernelsuite")
    assert "solutions/kernelbench/level1/94_MSELoss/triton_starter.py (sha256 " in head[1]
    assert "chosen: the only solution" in head[1]
    args = [TREE / "level1" / "40_LayerNorm.py", layer_norm, "batch_size=2,features=3,dim1=5,dim2=7",
            TREE / "level1" / "94_MSELoss.py", mse, "batch_size=3,dim=50"]
    done = subprocess.run([sys.executable, "-I", "-c", KERNELBENCH_LOAD, *map(str, args)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "loaded and matched" in done.stdout, done.stderr[-2000:]


def test_runs_naming_is_what_run_reads_back(tmp_path):
    result = invoke("kernelbench", "export", "--ids", "19", "--naming", "runs", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    assert [p.name for p in tmp_path.iterdir()] == ["level_1_problem_19_sample_0_kernel.py"]
    relu = ProblemRef("level1/19_ReLU", TREE / "level1" / "19_ReLU.py", 1)
    exported = tmp_path / "level_1_problem_19_sample_0_kernel.py"
    assert layout.candidates(tmp_path, relu) == [SolutionRef("sample_0", exported)]


def test_a_file_that_needs_this_repo_is_refused(tmp_path):
    leaky = tmp_path / "leaky.py"
    leaky.write_text("import torch\nfrom harness.loader import DTYPES\n\nclass ModelNew(torch.nn.Module):\n    pass\n")
    with pytest.raises(ExportError, match="line 2: imports harness.loader"):
        check_self_contained(leaky)
    nameless = tmp_path / "nameless.py"
    nameless.write_text("import torch\n\nclass Model(torch.nn.Module):\n    pass\n")
    with pytest.raises(ExportError, match="no class ModelNew"):
        check_self_contained(nameless)


def test_best_of_several_solutions_is_the_fastest_correct_in_the_run():
    problem = ProblemRef("level1/19_ReLU", TREE / "level1" / "19_ReLU.py", 1)
    sols = [SolutionRef("a", Path("a.py")), SolutionRef("b", Path("b.py")), SolutionRef("c", Path("c.py"))]

    def rec(name, us, correct=True):
        return Measurement(problem.name, name, "solution", {}, "float32", correct, mean_us=us, gpu="NVIDIA H200")
    records = [rec("a", 30.0), rec("b", 20.0), rec("c", 5.0, correct=False)]
    chosen = choose(problem, sols, records=records, run_id="r1")
    assert chosen.solution.name == "b" and chosen.why == "fastest correct in run r1 on NVIDIA H200, 0.02 ms mean"
    assert choose(problem, sols, name="c").solution.name == "c"
    with pytest.raises(ExportError, match="3 solutions and none timed correct"):
        choose(problem, sols)
