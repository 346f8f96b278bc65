"""scripts/issue_table.py: the issues' opening rows are valid benches, and each row's numbers come out right."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import issue_table  # noqa: E402


@pytest.mark.parametrize("row", issue_table.ROWS, ids=lambda r: f"{r[1]}-{r[2]}-{r[3]}")
def test_every_row_is_a_shape_of_its_problem_with_existing_solutions(row):
    _, problem, shape, dtype, named, _ = row
    solution = issue_table.solution_for(problem, named)
    for name in (solution, issue_table.STARTER):
        assert (ROOT / "solutions" / problem / f"{name}.py").is_file(), name
    assert issue_table.workload_set(problem, shape) in ("tuning", "heldout", "neither")


def test_rows_never_tuned_on_say_so():
    # rmsnorm 16384x2048 is in neither set of the workload; the vectorsum_v2 benchmark size is a tuning shape
    assert issue_table.workload_set("rmsnorm", "16384x2048") == "neither"
    assert issue_table.workload_set("vectorsum_v2", "3276800") == "tuning"


def record(name, kind, median, correct=True, error=None):
    return {"solution": name, "kind": kind, "median_us": median, "correct": correct, "error": error}


def test_summary_takes_the_fastest_baseline_and_ratios_over_it():
    records = [record("eager", "baseline", 50.0), record("compile", "baseline", 40.0),
               record("liger", "baseline", None, error="not installed"),
               record("triton_family", "solution", 32.0), record("triton_starter", "solution", 50.0)]
    row = issue_table.summarize(records, "triton_family")
    assert (row["best_baseline"], row["baseline_us"]) == ("compile", 40.0)
    assert (row["solution_x"], row["starter_x"]) == (1.25, 0.8)
    assert row["error"] == ""


def test_summary_names_a_solution_that_failed_and_gives_it_no_ratio():
    records = [record("eager", "baseline", 50.0), record("triton_family", "solution", 30.0, correct=False,
                                                          error="stage 2: mismatch")]
    row = issue_table.summarize(records, "triton_family")
    assert row["solution_us"] == "" and row["solution_x"] == ""
    assert "triton_family: stage 2: mismatch" in row["error"] and "triton_starter: no timing" in row["error"]


def test_dry_run_lists_every_row_and_runs_nothing(capsys):
    before = issue_table.run_files()
    assert issue_table.main(["--dry-run", "--issue", "10"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == sum(1 for r in issue_table.ROWS if r[0] == 10)
    assert all("suite bench" in line and "--solution triton_starter" in line for line in lines)
    assert issue_table.run_files() == before
