"""Each record of a family solution names the GPU whose dispatch table it ran, so a run on a GPU without its own
table says its numbers come from a table tuned elsewhere (README, "One table per GPU")."""

import json

from conftest import ROOT, SCALE_ROWS

from harness.jobs.worker import Events, JobRunner
from harness.loader import dispatch_table_gpu, load_candidate_class
from harness.spec import SolutionRef

TABLED = (
    "import torch\n"
    "DISPATCH_GPU = 'nvidia-h200'\n"
    "DISPATCH_BY_GPU = {}\n"
    "def this_gpu():\n"
    "    return 'cpu-interpreter'\n"
    "class ModelNew(torch.nn.Module):\n"
    "    def __init__(self, dim):\n"
    "        super().__init__()\n"
    "        self.weight = torch.nn.Parameter(torch.randn(dim))\n"
    "    def forward(self, x):\n"
    "        return x * self.weight\n")


def test_the_table_a_solution_runs_is_its_gpu_s_own_else_its_home_gpu_s(tmp_path):
    path = tmp_path / "tabled.py"
    path.write_text(TABLED)
    cls = load_candidate_class(path, "ksuite_test_tabled")
    assert dispatch_table_gpu(cls) == "nvidia-h200"  # no table of this GPU's: DISPATCH, timed on the H200
    own = tmp_path / "own.py"
    own.write_text(TABLED.replace("DISPATCH_BY_GPU = {}", "DISPATCH_BY_GPU = {'cpu-interpreter': {}}"))
    assert dispatch_table_gpu(load_candidate_class(own, "ksuite_test_own")) == "cpu-interpreter"
    plain = tmp_path / "plain.py"
    plain.write_text(TABLED.replace("DISPATCH_GPU = 'nvidia-h200'\n", ""))
    assert dispatch_table_gpu(load_candidate_class(plain, "ksuite_test_plain")) is None
    family = load_candidate_class(ROOT / "solutions" / "rmsnorm" / "triton_family.py", "ksuite_test_rmsnorm")
    assert dispatch_table_gpu(family) == "nvidia-h200"  # Triton's interpreter has no table of its own


def test_a_cuda_file_that_routes_shapes_to_a_family_runs_that_family_s_table(tmp_path):
    """cuda_cutlass_dispatch sends most matmul shapes to triton_tma_persistent: its records name that table's GPU."""
    own_table = TABLED.replace("DISPATCH_BY_GPU = {}", "DISPATCH_BY_GPU = {'cpu-interpreter': {}}")
    (tmp_path / "family.py").write_text(own_table)
    routed = tmp_path / "routed.py"
    routed.write_text(
        "import importlib.util, pathlib, torch\n"
        "def triton_route():\n"
        "    path = pathlib.Path(__file__).with_name('family.py')\n"
        "    spec = importlib.util.spec_from_file_location('ksuite_test_family', path)\n"
        "    module = importlib.util.module_from_spec(spec)\n"
        "    spec.loader.exec_module(module)\n"
        "    return module\n"
        "class ModelNew(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x\n")
    assert dispatch_table_gpu(load_candidate_class(routed, "ksuite_test_routed")) == "cpu-interpreter"
    broken = tmp_path / "broken.py"
    broken.write_text(routed.read_text().replace("family.py", "missing.py"))
    assert dispatch_table_gpu(load_candidate_class(broken, "ksuite_test_broken")) is None  # the stages say why
    matmul = load_candidate_class(ROOT / "solutions" / "matmul" / "cuda_cutlass_dispatch.py", "ksuite_test_dispatch")
    assert dispatch_table_gpu(matmul) == "nvidia-h200"


def test_a_family_solution_s_records_name_that_gpu_and_a_baseline_s_none(tmp_path):
    path = tmp_path / "tabled.py"
    path.write_text(TABLED)
    job = {"problem_name": "scale_rows", "problem_path": str(SCALE_ROWS), "impls": [],
           "options": {"interpret": True, "time": False, "integrity": False, "done": [], "dtypes": ["float32"]}}
    events = tmp_path / "events.jsonl"
    runner = JobRunner(job, Events(str(events)))
    runner.run_solution(SolutionRef("tabled", path))
    runner.run_baseline(SolutionRef("eager"))
    records = [r for r in map(json.loads, events.read_text().splitlines()) if r["event"] == "measurement"]
    assert records and all(r["correct"] for r in records)
    assert {r["solution"]: r.get("table_gpu") for r in records} == {"tabled": "nvidia-h200", "eager": None}


def test_a_paired_re_timing_s_records_name_it_too(tmp_path):
    """`ksuite confirm` writes records of its own (harness/jobs/pairwise.py): the same field, the same rule."""
    from harness.jobs.pairwise import PairRunner

    class Collected:
        def __init__(self):
            self.items = []

        def emit(self, **event):
            self.items.append(event)

    path = tmp_path / "tabled.py"
    path.write_text(TABLED)
    job = {"problem_name": "scale_rows", "problem_path": str(SCALE_ROWS),
           "options": {"interpret": True, "time": False, "trials": 1, "dtypes": ["float32"]}}
    events = Collected()
    runner = PairRunner(job, events)
    runner.timed = runner.timed[:1]
    runner.run([SolutionRef("tabled", path), SolutionRef("eager")])
    records = [e for e in events.items if e["event"] == "measurement"]
    assert {r["solution"]: r.get("table_gpu") for r in records} == {"tabled": "nvidia-h200", "eager": None}
