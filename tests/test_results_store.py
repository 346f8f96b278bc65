"""Run files: append/read round trip, torn and corrupt lines, resume keys, finding runs, calibration."""

import json
import os

import pytest

from harness.records import Measurement
from suite.results_store import (
    ResultsError,
    RunFile,
    find_run,
    load_calibration,
    new_run_id,
    save_calibration,
)


def measurement(solution="mine", shape=None, dtype="float16", **fields) -> Measurement:
    defaults = dict(problem="softmax", solution=solution, kind="solution",
                    shape={"batch_size": 64, "dim": 256} if shape is None else shape, dtype=dtype, correct=True)
    return Measurement(**{**defaults, **fields})


FULL = measurement(
    error=None, median_us=12.5, iqr_us=0.25, runs=120, rse=0.004, setup_s=1.5, bytes=65536.0, flops=81920.0,
    gbps=5.24, tflops=None, sol_us=10.0, pct_sol=80.0, speedup_vs_best_baseline=1.7, best_baseline="fused",
    speedup_vs={"eager": 3.1, "fused": 1.7}, max_abs_err=float("inf"), rel_l2_err=1e-4,
    source_hash="abcdef012345", gpu="NVIDIA H200", env={"gpu": "NVIDIA H200", "torch": "2.13.0", "sm_count": 132},
    run_id="20260101-000000", timestamp="2026-01-01T00:00:00+00:00")


def test_round_trip_gives_equal_measurements(tmp_path):
    run = RunFile.create("nvidia-h200", "r1", root=tmp_path)
    written = [FULL, measurement("eager", kind="baseline", correct=False, error="smoke: raised"),
               measurement(shape={}, dtype="", correct=False, error="crashed: killed by SIGSEGV")]
    for m in written:
        run.append(m)
    assert run.path == tmp_path / "nvidia-h200" / "r1.jsonl"
    assert run.run_id == "r1"
    assert run.read() == written
    assert all(isinstance(m, Measurement) for m in run.read())


def test_each_record_is_one_line(tmp_path):
    run = RunFile(tmp_path / "r.jsonl")
    run.append(FULL)
    run.append(FULL)
    lines = run.path.read_text().splitlines()
    assert len(lines) == 2
    assert json.loads(lines[0])["problem"] == "softmax"


def test_unknown_keys_from_a_newer_writer_are_ignored(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({**FULL.to_dict(), "future_field": 1}) + "\n")
    assert RunFile(path).read() == [FULL]


def test_torn_last_line_is_ignored(tmp_path):
    run = RunFile(tmp_path / "r.jsonl")
    run.append(FULL)
    run.append(measurement("other"))
    with open(run.path, "a") as f:
        f.write(json.dumps(measurement("torn").to_dict())[:40])  # killed mid-write: no newline
    assert [m.solution for m in run.read()] == ["mine", "other"]
    assert ("softmax", "torn") not in {k[:2] for k in run.done_keys()}


def test_appending_after_a_torn_line_keeps_new_records(tmp_path):
    run = RunFile(tmp_path / "r.jsonl")
    run.append(FULL)
    with open(run.path, "a") as f:
        f.write('{"problem": "softmax", "solu')
    run.append(measurement("resumed1"))
    run.append(measurement("resumed2"))
    assert [m.solution for m in run.read()] == ["mine", "resumed1", "resumed2"]


CORRUPT_LINES = [
    pytest.param('{"problem": "softmax", "solu', id="partial-json"),
    pytest.param("not json at all", id="text"),
    pytest.param('{"solution": "x"}', id="missing-fields"),
    pytest.param('[1, 2, 3]', id="json-array"),
]


@pytest.mark.parametrize("line", CORRUPT_LINES)
def test_corrupt_middle_line_names_file_and_line(tmp_path, line):
    run = RunFile(tmp_path / "r.jsonl")
    run.append(FULL)
    with open(run.path, "a") as f:
        f.write(line + "\n")
    run.append(FULL)
    with pytest.raises(ResultsError, match=rf"{run.path}:2\b"):
        run.read()


def test_blank_lines_are_skipped(tmp_path):
    path = tmp_path / "r.jsonl"
    line, other = json.dumps(FULL.to_dict()), json.dumps(measurement("other").to_dict())
    path.write_text(f"{line}\n\n{other}\n")
    assert len(RunFile(path).read()) == 2


def test_a_record_measured_again_supersedes_the_earlier_one(tmp_path):
    run = RunFile(tmp_path / "r.jsonl")
    for m in (FULL, measurement("other"), measurement(median_us=9.0, source_hash="fedcba987654")):
        run.append(m)
    assert [(m.solution, m.median_us) for m in run.read()] == [("other", None), ("mine", 9.0)]


def test_missing_run_file_is_a_results_error(tmp_path):
    with pytest.raises(ResultsError, match="no such run file"):
        RunFile(tmp_path / "nope.jsonl").read()


def test_done_keys_for_resume(tmp_path):
    run = RunFile(tmp_path / "r.jsonl")
    assert run.done_keys() == set()  # no file yet: nothing done
    run.append(measurement("a", shape={"dim": 256, "batch_size": 64}))
    run.append(measurement("a", dtype="bfloat16"))
    run.append(measurement("b", correct=False, error="crashed"))
    keys = run.done_keys()
    assert keys == {
        ("softmax", "a", (("batch_size", 64), ("dim", 256)), "float16"),
        ("softmax", "a", (("batch_size", 64), ("dim", 256)), "bfloat16"),
        ("softmax", "b", (("batch_size", 64), ("dim", 256)), "float16"),
    }


def _run(root, slug, run_id, mtime):
    run = RunFile.create(slug, run_id, root=root)
    run.append(measurement(run_id=run_id))
    os.utime(run.path, (mtime, mtime))
    return run


def test_find_run_newest_by_id_and_by_path(tmp_path):
    old = _run(tmp_path, "nvidia-h200", "20260101-000000", 1_000_000)
    new = _run(tmp_path, "nvidia-b200", "20260102-000000", 2_000_000)
    other = _run(tmp_path, "nvidia-h200", "20260103-000000", 1_500_000)
    assert find_run(None, root=tmp_path).path == other.path  # the newest id, though not the newest file date
    assert find_run(None, "nvidia-b200", root=tmp_path).path == new.path
    assert find_run(None, "nvidia-h200", root=tmp_path).path == other.path
    assert find_run("20260101-000000", root=tmp_path).path == old.path
    assert find_run("20260102-000000", "nvidia-h200", root=tmp_path).path == new.path  # id wins over slug
    assert find_run(str(old.path), root=tmp_path / "elsewhere").path == old.path


def test_find_run_errors_are_results_errors(tmp_path):
    with pytest.raises(ResultsError, match="no recorded runs"):
        find_run(None, root=tmp_path)
    _run(tmp_path, "nvidia-h200", "r1", 1_000_000)
    with pytest.raises(ResultsError, match="no run 'r2'"):
        find_run("r2", root=tmp_path)
    with pytest.raises(ResultsError, match="no recorded runs"):
        find_run(None, "nvidia-b200", root=tmp_path)


def test_run_ids_sort_by_time():
    run_id = new_run_id()
    assert len(run_id) == 15 and run_id[8] == "-" and run_id.replace("-", "").isdigit()


def test_calibration_round_trip_and_corrupt_file(tmp_path):
    assert load_calibration("nvidia-h200", root=tmp_path) is None
    data = {"copy_bandwidth_Bps": 4.1e12, "matmul_flops": 7.9e14}
    path = save_calibration("nvidia-h200", data, root=tmp_path)
    assert path == tmp_path / "nvidia-h200" / "calibration.json"
    assert load_calibration("nvidia-h200", root=tmp_path) == data
    path.write_text("{truncated")
    with pytest.raises(ResultsError, match="calibration.json"):
        load_calibration("nvidia-h200", root=tmp_path)


def test_calibration_file_is_not_a_run(tmp_path):
    save_calibration("nvidia-h200", {"copy_bandwidth_Bps": 1.0}, root=tmp_path)
    with pytest.raises(ResultsError, match="no recorded runs"):
        find_run(None, root=tmp_path)


def test_results_root_fixture_redirects_defaults(results_root):
    """The tmp-results fixture the CLI tests rely on really redirects every default."""
    run = RunFile.create("cpu-interpreter", "r1")
    assert run.path.parent.parent == results_root
    run.append(FULL)
    assert find_run(None).path == run.path
    save_calibration("cpu-interpreter", {"x": 1})
    assert load_calibration("cpu-interpreter") == {"x": 1}
