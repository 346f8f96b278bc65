""""The newest run" is the one with the newest run id, never the newest file date, which git does not keep
(issue 11, point 2): report, goals, compare, submit's choice, optimize's baselines and inspect's GPU."""

import json
import os

import pytest
from click.testing import CliRunner

from harness.records import Measurement
from suite.cli import cli
from suite.results_store import (
    ResultsError,
    RunFile,
    calibrated_gpus_newest_first,
    find_run,
    previous_run,
    run_order_key,
    runs_newest_first,
)

OLD, MID, NEW = "20261101-000000", "20261115-120000", "20261130-000000"


def record(us, run_id, solution="k", kind="solution", problem="rmsnorm", **fields):
    return Measurement(problem, solution, kind, {"batch_size": 8}, "float16", True, median_us=us, iqr_us=0.1,
                       run_id=run_id, timestamp=f"{run_id[:4]}-{run_id[4:6]}-{run_id[6:8]}T00:00:00+00:00",
                       gpu="NVIDIA H200", **fields)


def make_run(run_id, *records, slug="nvidia-h200", name=None) -> RunFile:
    run = RunFile.create(slug, name or run_id)
    for r in records:
        run.append(r)
    return run


def touch_older_than(newer: RunFile, *older: RunFile) -> None:
    """A fresh clone (or a `touch`): the old runs' files look newer than the new one's."""
    os.utime(newer.path, (1_000_000, 1_000_000))
    for run in older:
        os.utime(run.path, None)


@pytest.fixture
def three_runs(results_root):
    runs = [make_run(OLD, record(100.0, OLD)), make_run(MID, record(100.0, MID)), make_run(NEW, record(150.0, NEW))]
    touch_older_than(runs[2], runs[0], runs[1])
    return runs


def test_find_run_picks_the_newest_id_whatever_the_file_dates(three_runs):
    assert find_run(None).run_id == NEW
    assert find_run(None, "nvidia-h200").run_id == NEW
    assert [p.stem for p in runs_newest_first()] == [NEW, MID, OLD]


def test_a_file_not_named_by_its_id_is_ordered_by_its_records(three_runs):
    copy = make_run(OLD, record(90.0, OLD), name="copied-from-a-colleague")
    os.utime(copy.path, None)
    assert find_run(None).run_id == NEW
    assert run_order_key(copy.path)[0] == OLD
    assert [p.stem for p in runs_newest_first()][-2:] in ([OLD, copy.run_id], [copy.run_id, OLD])


def test_previous_run_is_the_one_just_before_by_id(three_runs):
    assert previous_run(three_runs[2]).run_id == MID
    assert previous_run(three_runs[1]).run_id == OLD
    with pytest.raises(ResultsError, match="no earlier run"):
        previous_run(three_runs[0])


def test_report_prints_the_newest_run_by_id(three_runs):
    result = CliRunner().invoke(cli, ["report", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert {row["run_id"] for row in json.loads(result.output)} == {NEW}


def test_compare_with_one_run_takes_the_run_before_it_as_base(three_runs):
    """NEW is 50 % slower than MID: with its file dated oldest, base and new must still not swap."""
    result = CliRunner().invoke(cli, ["compare", NEW])
    assert result.exit_code == 1, result.output
    assert f"base {MID} (NVIDIA H200) -> new {NEW} (NVIDIA H200)" in result.output
    assert "1 slower" in result.output


def test_compare_of_the_first_run_alone_is_a_usage_error(three_runs):
    result = CliRunner().invoke(cli, ["compare", OLD])
    assert result.exit_code == 2 and "no earlier run" in result.output, result.output


def test_goals_judges_the_newest_run_by_id(three_runs):
    result = CliRunner().invoke(cli, ["goals"])
    assert f"run {NEW}" in result.output, result.output


def test_optimize_reuses_the_baselines_of_the_newest_run_by_id(results_root):
    from suite.optimize.command import recorded_baselines

    old = make_run(OLD, record(50.0, OLD, "compile", "baseline", flush="clean"), slug="gpu-x")
    new = make_run(NEW, record(40.0, NEW, "compile", "baseline", flush="clean"), slug="gpu-x")
    stray = make_run(OLD, record(60.0, OLD, "compile", "baseline", flush="clean"), slug="gpu-x", name="zz-copy")
    touch_older_than(new, old, stray)
    assert [m.median_us for m in recorded_baselines("rmsnorm", "gpu-x")] == [40.0]


def test_submit_chooses_from_the_newest_run_by_id(tmp_path):
    from submit.gpumode.choose import fastest_recorded

    results, solutions = tmp_path / "results", tmp_path / "solutions"
    (results / "gpu").mkdir(parents=True)
    (solutions / "vectorsum_v2").mkdir(parents=True)
    for name in ("a", "b"):
        (solutions / "vectorsum_v2" / f"{name}.py").write_text("# a solution\n")

    def write(stem, run_id, solution):
        line = {"problem": "vectorsum_v2", "solution": solution, "kind": "solution", "shape": {"size": 1000},
                "dtype": "float32", "correct": True, "median_us": 5.0, "run_id": run_id}
        (results / "gpu" / f"{stem}.jsonl").write_text(json.dumps(line) + "\n")

    write(NEW, NEW, "b")
    write("zz-old-copy", OLD, "a")  # its name sorts after every id; its records say it is older
    choice = fastest_recorded("vectorsum_v2", "last", results, solutions)
    assert choice.path.stem == "b" and choice.run == NEW


def test_inspect_uses_the_gpu_with_the_newest_run(results_root):
    for slug, run_id in (("nvidia-h100", NEW), ("nvidia-h200", OLD)):
        (results_root / slug).mkdir(parents=True)
        (results_root / slug / "calibration.json").write_text("{}")
        make_run(run_id, record(1.0, run_id), slug=slug)
    os.utime(results_root / "nvidia-h100" / "calibration.json", (1_000_000, 1_000_000))
    assert calibrated_gpus_newest_first() == ["nvidia-h100", "nvidia-h200"]
