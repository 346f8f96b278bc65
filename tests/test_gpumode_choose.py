"""The solution `ksuite submit gpumode` sends when none is named: the fastest correct one recorded."""

import json

from submit.gpumode.choose import fastest_recorded


def record(solution, size, us, correct=True, problem="vectorsum_v2"):
    return {"problem": problem, "solution": solution, "kind": "solution", "shape": {"size": size},
            "dtype": "float32", "correct": correct, "median_us": us}


def setup(tmp_path, runs: dict[str, list[dict]], files=("a", "b", "c")):
    results, solutions = tmp_path / "results", tmp_path / "solutions"
    (results / "gpu").mkdir(parents=True)
    (solutions / "vectorsum_v2").mkdir(parents=True)
    for name in files:
        (solutions / "vectorsum_v2" / f"{name}.py").write_text("# a solution\n")
    for run, records in runs.items():
        lines = [json.dumps(r) for r in records] + ['{"torn']  # a cut last line is skipped
        (results / "gpu" / f"{run}.jsonl").write_text("\n".join(lines))
    return results, solutions


def test_last_ranking_compares_at_the_largest_shape_all_were_timed_on(tmp_path):
    results, solutions = setup(tmp_path, {"20261130-000000": [
        record("a", 1000, 5.0), record("a", 50_000_000, 70.0),
        record("b", 1000, 9.0), record("b", 50_000_000, 61.0),
        record("c", 1000, 1.0)]})  # c has no large shape: not comparable there
    choice = fastest_recorded("vectorsum_v2", "last", results, solutions)
    assert choice.path.name == "b.py" and choice.run == "20261130-000000"
    assert choice.how == "61.0 us at 50000000"


def test_geometric_mean_ranking_and_a_wrong_record_disqualifies(tmp_path):
    results, solutions = setup(tmp_path, {"20261130-000000": [
        record("a", 10, 4.0), record("a", 20, 4.0),
        record("b", 10, 1.0), record("b", 20, 10.0),  # geomean 3.16
        record("c", 10, 0.5), record("c", 20, 0.5, correct=False)]})
    choice = fastest_recorded("vectorsum_v2", "geom", results, solutions)
    assert choice.path.name == "b.py" and choice.how.startswith("geometric mean 3.2 us over 2 shapes")


def test_the_newest_run_decides_and_a_missing_file_or_other_problem_is_skipped(tmp_path):
    results, solutions = setup(tmp_path, {
        "20261129-000000": [record("a", 10, 1.0)],
        "20261130-000000": [record("gone", 10, 0.1), record("b", 10, 2.0), record("x", 10, 0.01, problem="other")],
    })
    choice = fastest_recorded("vectorsum_v2", "last", results, solutions)
    assert choice is not None and choice.run == "20261129-000000" and choice.path.name == "a.py"


def test_untimed_runs_choose_nothing(tmp_path):
    results, solutions = setup(tmp_path, {"20261130-000000": [record("a", 10, None)]})
    assert fastest_recorded("vectorsum_v2", "last", results, solutions) is None
