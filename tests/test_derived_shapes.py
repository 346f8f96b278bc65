"""A KernelBench file without META is checked beyond its own size: smaller, odd sizes of its constants
where the reference runs (harness/derived_shapes.py), in the edge stage; a candidate with the file's size
baked in now fails on CPU, an honest one still passes."""

import json
import textwrap

import pytest
from conftest import KERNELBENCH, RELU_CANDIDATE

from harness.derived_shapes import derived_shapes, proposals, smaller_odd
from harness.jobs.worker import Events, JobRunner
from harness.loader import import_file, load_problem
from harness.spec import SolutionRef

RELU = KERNELBENCH / "level1" / "19_ReLU.py"
BAKED = RELU_CANDIDATE.parent / "relu_size_baked.py"


@pytest.mark.parametrize("value, expected", [(4096, 2047), (4095, 2047), (16, 7), (8, 3), (112, 55)])
def test_sizes_are_halved_and_made_odd(value, expected):
    assert smaller_odd(value) == expected


def test_all_sizes_at_once_then_each_alone_small_constants_kept():
    own = {"batch_size": 16, "dim": 4096, "reduce_dim": 1, "kernel_size": 3}
    assert proposals(own) == [{"batch_size": 7, "dim": 2047, "reduce_dim": 1, "kernel_size": 3},
                              {"batch_size": 7, "dim": 4096, "reduce_dim": 1, "kernel_size": 3},
                              {"batch_size": 16, "dim": 2047, "reduce_dim": 1, "kernel_size": 3}]
    assert proposals({"dim": 1}) == []


def test_shapes_the_reference_rejects_are_dropped_and_the_module_is_restored(tmp_path):
    path = tmp_path / "hinge.py"  # like KernelBench's 100_HingeLoss: a broadcast only the own size allows
    path.write_text(textwrap.dedent("""
        import torch
        class Model(torch.nn.Module):
            def forward(self, p, t):
                return torch.mean(torch.clamp(1 - p * t, min=0))
        batch_size = 64
        width = 64
        def get_inputs():
            return [torch.rand(batch_size, 64), torch.rand(width)]
        def get_init_inputs():
            return []
    """))
    module = import_file(path, "ksuite_test_hinge")
    own = {"batch_size": 64, "width": 64}
    assert derived_shapes(module, own) == ({"batch_size": 31, "width": 64},)
    assert (module.batch_size, module.width) == (64, 64)


def test_a_file_without_meta_gets_the_derived_shapes_as_edge_shapes_one_with_meta_keeps_its_own():
    problem = load_problem(RELU, "ksuite_test_relu")
    assert problem.meta.small_shapes == ({"batch_size": 4, "dim": 64},)
    assert problem.meta.edge_shapes == ({"batch_size": 4, "dim": 31},)
    ours = load_problem(KERNELBENCH.parent / "problems" / "scale_rows.py", "ksuite_test_scale_rows")
    assert ours.meta.edge_shapes == tuple(ours.module.META.get("edge_shapes", ()))


def run_candidate(tmp_path, path):
    job = {"problem_name": "level1/19_ReLU", "problem_path": str(RELU), "impls": [],
           "options": {"interpret": True, "time": False, "done": []}}
    events_path = tmp_path / f"{path.stem}.jsonl"
    runner = JobRunner(job, Events(str(events_path)))
    runner.run_solution(SolutionRef(path.stem, path))
    events = [json.loads(line) for line in events_path.read_text().splitlines()]
    return ([e for e in events if e["event"] == "stage"], [e for e in events if e["event"] == "measurement"])


def test_a_candidate_with_the_size_baked_in_fails_at_a_derived_shape(tmp_path):
    stages, records = run_candidate(tmp_path, BAKED)
    assert [(s["stage"], s["passed"]) for s in stages][-1] == ("edge", False)
    assert all(s["passed"] for s in stages[:-1])  # it passes everything at the file's own size
    assert records and not any(r["correct"] for r in records)
    assert all(r["error"].startswith("edge: output 0 shape (4, 64), expected (4, 31)") for r in records)
    assert all(r["error"].endswith("at 4x31 float32") for r in records), records


def test_an_honest_candidate_passes_at_the_derived_shapes(tmp_path):
    stages, records = run_candidate(tmp_path, RELU_CANDIDATE)
    assert ("edge", True) in [(s["stage"], s["passed"]) for s in stages]
    assert records and all(r["correct"] for r in records), records
