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


def test_the_leaderboard_s_gpu_decides_first_and_the_choice_names_its_folder(tmp_path):
    """`--gpu H100`: the newest H100 run decides even when an H200 run is newer; a GPU with no run of its own
    falls back to the newest run of any, and says which folder it came from."""
    results, solutions = setup(tmp_path, {}, files=("a", "b"))
    for folder, run, rows in [
            ("nvidia-h100-80gb-hbm3", "20261205-000000", [record("a", 10, 1.0), record("b", 10, 2.0)]),
            ("nvidia-h200", "20261206-000000", [record("a", 10, 2.0), record("b", 10, 1.0)])]:
        (results / folder).mkdir()
        (results / folder / f"{run}.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    on_h100 = fastest_recorded("vectorsum_v2", "last", results, solutions, gpu="H100")
    assert on_h100.path.name == "a.py" and on_h100.gpu == "nvidia-h100-80gb-hbm3"
    on_h200 = fastest_recorded("vectorsum_v2", "last", results, solutions, gpu="H200")
    assert on_h200.path.name == "b.py" and on_h200.gpu == "nvidia-h200"
    elsewhere = fastest_recorded("vectorsum_v2", "last", results, solutions, gpu="B200")
    assert elsewhere.run == "20261206-000000" and elsewhere.gpu == "nvidia-h200"


def test_the_board_s_own_benchmark_sizes_decide_where_the_run_timed_them(tmp_path):
    """A held-out run reaches past the board's sizes: its last benchmark (50M here) decides, not the run's
    largest shape (134M); ranked by the mean, only the board's sizes count."""
    results, solutions = setup(tmp_path, {"20261205-000000": [
        record("a", 50_000_000, 60.0), record("a", 134_000_000, 150.0), record("a", 1000, 9.0),
        record("b", 50_000_000, 70.0), record("b", 134_000_000, 140.0), record("b", 1000, 1.0)]}, files=("a", "b"))
    board = [{"size": 1000, "seed": 1}, {"size": 50_000_000, "seed": 2}]
    last = fastest_recorded("vectorsum_v2", "last", results, solutions, benchmarks=board)
    assert last.path.name == "a.py" and last.how == "60.0 us at 50000000"
    assert fastest_recorded("vectorsum_v2", "last", results, solutions).path.name == "b.py"  # no board: 134M
    mean = fastest_recorded("vectorsum_v2", "geom", results, solutions, benchmarks=board)
    assert mean.path.name == "b.py" and "over 2 shapes" in mean.how
