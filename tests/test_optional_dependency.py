"""A solution that needs what this machine lacks (CUTLASS's headers for solutions/matmul/cuda_cutlass.py)
says so through its module's unavailable(): the harness skips it with that reason, in one line, as it
leaves out Liger where Liger is not installed; it neither fails it nor builds it."""

import json

from conftest import SCALE_ROWS, candidate

from harness.jobs.worker import Events, JobRunner
from harness.spec import SolutionRef


def run_in_process(tmp_path, solution_path):
    job = {"problem_name": "scale_rows", "problem_path": str(SCALE_ROWS), "impls": [],
           "options": {"interpret": True, "time": False, "done": [], "dtypes": ["float32"]}}
    events_path = tmp_path / "events.jsonl"
    JobRunner(job, Events(str(events_path))).run_solution(SolutionRef("needs_headers", solution_path))
    return [json.loads(line) for line in events_path.read_text().splitlines()]


def test_a_solution_missing_an_optional_dependency_is_skipped_naming_it(tmp_path):
    path = tmp_path / "needs_headers.py"
    reason = "CUTLASS headers not found: set KSUITE_CUTLASS_DIR"
    path.write_text(candidate("honest_triton").read_text() + f'\n\ndef unavailable():\n    return "{reason}"\n')
    events = run_in_process(tmp_path, path)
    assert [e["message"] for e in events if e["event"] == "skip"] == [reason]
    records = [e for e in events if e["event"] == "measurement"]
    assert records and all(r["correct"] is None and r["error"].startswith("CUTLASS headers") for r in records)
    assert not [e for e in events if e["event"] == "stage"]  # nothing was checked


def test_cuda_cutlass_names_what_it_lacks(monkeypatch, tmp_path):
    from conftest import SOLUTIONS_DIR

    from harness.loader import import_file

    module = import_file(SOLUTIONS_DIR / "matmul" / "cuda_cutlass.py", "ksuite_test_cuda_cutlass")
    monkeypatch.setenv("KSUITE_CUTLASS_DIR", str(tmp_path))  # a folder without the headers
    monkeypatch.setattr(module, "ROOT", tmp_path)
    assert module.unavailable().startswith("CUTLASS headers not found")
    for part in ("cutlass/cutlass.h", "cute/tensor.hpp", "cutlass/util/packed_stride.hpp"):
        (tmp_path / part).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / part).write_text("")
    assert module.unavailable() is None and module.include_dirs() == [str(tmp_path)]
