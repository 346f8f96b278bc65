"""`ksuite goals`: a run's solutions judged against META goal_pct_sol and the same run's best baseline."""

from click.testing import CliRunner

from harness.records import Measurement
from suite.cli import cli
from suite.goals import evaluate
from suite.results_store import RunFile

LARGE = [{"batch_size": 4096, "dim": 4096}, {"batch_size": 8192, "dim": 4096}, {"batch_size": 8192, "dim": 8192}]
MID = {"batch_size": 1024, "dim": 4096}
SOL_US = 10.0  # every shape gets the same floor: the judge reads pct_sol, not bytes


def record(solution, shape, us, kind="solution", correct=True, dtype="float16", problem="rmsnorm"):
    return Measurement(problem=problem, solution=solution, kind=kind, shape=shape, dtype=dtype, correct=correct,
                       median_us=us, sol_us=SOL_US, pct_sol=100 * SOL_US / us).to_dict()


def run_with(solution_us: dict, baseline_us: dict, **kw) -> list[dict]:
    """Records of one solution and one compile baseline, `{shape index: us}`; index 3 is the mid shape."""
    shapes = LARGE + [MID]
    return ([record("compile-default", shapes[i], us, kind="baseline") for i, us in baseline_us.items()]
            + [record("fast", shapes[i], us, **kw) for i, us in solution_us.items()])


def only(rows):
    assert len(rows) == 1
    return rows[0]


def test_meets_every_goal():
    # 10 us floor: the kernel runs at 95 % (10.5 us) and the baselines at 50-95 %: weak at two shapes, 1.5x there
    row = only(evaluate(run_with({0: 10.5, 1: 10.5, 2: 10.5, 3: 10.5}, {0: 20, 1: 15.75, 2: 10.6, 3: 10.6})))
    assert row.goal_pct == 90
    assert [p for _, p in row.large] == [100 * 10 / 10.5] * 3
    assert row.weak_shapes == 2 and abs(row.geomean_weak - (20 / 10.5 * 15.75 / 10.5) ** 0.5) < 1e-9
    assert row.verdict == "met"


def test_below_the_ceiling_goal_at_a_large_shape_is_a_miss_naming_the_shape():
    row = only(evaluate(run_with({0: 10.5, 1: 10.5, 2: 12.5}, {0: 30, 1: 30, 2: 30})))
    assert row.verdict == "missed: 80 % SOL < 90 at 8192x8192"


def test_slower_than_the_best_baseline_anywhere_is_a_miss_even_where_the_goal_is_met():
    row = only(evaluate(run_with({0: 10.5, 1: 10.5, 2: 10.5, 3: 10.5}, {0: 30, 1: 30, 2: 30, 3: 10.2})))
    assert row.worst == (10.2 / 10.5, "1024x4096")
    assert row.verdict.startswith("missed: 0.97x the best baseline at 1024x4096")


def test_weak_baselines_need_a_geometric_mean_of_one_point_two():
    # baselines at 79 % everywhere, the kernel at 93 %, 1.17x faster: never slower, but not enough where there was room
    row = only(evaluate(run_with({0: 10.8, 1: 10.8, 2: 10.8}, {0: 12.6, 1: 12.6, 2: 12.6})))
    assert row.weak_shapes == 3
    assert row.verdict == "missed: geomean 1.17x < 1.2x over 3 shape(s) with the baseline under 80 % SOL"


def test_without_baselines_in_the_same_run_nothing_is_claimed():
    row = only(evaluate(run_with({0: 10.5, 1: 10.5, 2: 10.5}, {})))
    assert row.worst is None
    assert row.verdict == "not measured: no baseline in this run at 3 of 3 shapes"


def test_an_untimed_large_shape_is_not_a_pass():
    row = only(evaluate(run_with({0: 10.5, 1: 10.5}, {0: 30, 1: 30})))
    assert row.verdict == "not measured: no % SOL at 8192x8192"


def test_a_wrong_result_is_a_miss_and_its_time_does_not_count():
    row = only(evaluate(run_with({0: 10.5, 1: 10.5, 2: 1.0}, {0: 30, 1: 30, 2: 30}, correct=False)))
    assert row.verdict.startswith("missed: incorrect at 4096x4096, 8192x4096, 8192x8192")


def test_a_problem_the_registry_does_not_know_is_still_judged_against_its_baselines():
    records = [record("fast", MID, 10.5, problem="no_such_problem"),
               record("eager", MID, 9.0, kind="baseline", problem="no_such_problem")]
    row = only(evaluate(records))
    assert row.worst == (9.0 / 10.5, "1024x4096")
    assert row.verdict == "missed: 0.86x the best baseline at 1024x4096"


def test_kernelbench_problems_are_found_in_the_repositorys_tree():
    # no goal_pct_sol in a KernelBench file: its own shape and the baselines are still judged
    shape = {"batch_size": 4096, "dim": 16384}  # the file's own constants
    records = [record("triton_starter", shape, 100.0, dtype="float32", problem="level1/19_ReLU"),
               record("eager", shape, 120.0, kind="baseline", dtype="float32", problem="level1/19_ReLU")]
    row = only(evaluate(records))
    assert row.goal_pct is None and row.unmeasured == [] and row.worst == (1.2, "4096x16384")
    assert row.large == [("4096x16384", 10.0)]


def test_cli_exits_one_when_a_problem_has_no_solution_meeting_its_goals(tmp_path):
    def run_file(name, records):
        (tmp_path / "gpu").mkdir(exist_ok=True)
        run = RunFile(tmp_path / "gpu" / f"{name}.jsonl")
        for r in records:
            run.append(Measurement.from_dict(r))
        return str(run.path)

    good = run_file("good", run_with({0: 10.5, 1: 10.5, 2: 10.5}, {0: 30, 1: 30, 2: 30}))
    result = CliRunner().invoke(cli, ["goals", good])
    assert result.exit_code == 0, result.output
    assert "1 of 1 (problem, dtype) pairs have a solution that meets every goal" in result.output

    slow = run_file("slow", run_with({0: 10.5, 1: 10.5, 2: 40}, {0: 30, 1: 30, 2: 30}))
    result = CliRunner().invoke(cli, ["goals", slow])
    assert result.exit_code == 1
    assert "not: rmsnorm float16" in result.output

    result = CliRunner().invoke(cli, ["goals", "no-such-run"])
    assert result.exit_code == 2 and "Error: no run 'no-such-run'" in result.output


def test_a_timed_bench_with_baselines_ends_with_the_goals_line(results_root, monkeypatch, capsys):
    """The GPU path of `ksuite bench`, with the harness replaced by a run that records fixed times."""
    from harness import Options
    from suite import commands
    from suite.bench import BenchOutcome

    def fake_run_bench(plan, options, env, run, with_baselines, resume, quiet, **_):
        outcome = BenchOutcome()
        for r in run_with({0: 10.5, 1: 10.5, 2: 10.5}, {0: 30, 1: 30, 2: 30}):
            m = Measurement.from_dict(r)
            run.append(m)
            outcome.records.append(m)
        return outcome

    monkeypatch.setattr(commands, "base_options", lambda *a, **k: Options(interpret=False, time=True))
    monkeypatch.setattr(commands, "run_bench", fake_run_bench)
    monkeypatch.setattr(commands, "device_slug", lambda: "test-gpu")
    assert commands.bench(("rmsnorm",), "default", (), "large", (), True, None, 60.0, False, None)
    out = capsys.readouterr().out
    assert "goals: 1 of 1 (problem, dtype) pairs have a solution that meets every goal" in out
    assert "`ksuite goals " in out


def test_cli_names_the_close_calls_a_paired_run_would_time_until_one_has(tmp_path):
    def run_file(name, records):
        run = RunFile(tmp_path / f"{name}.jsonl")
        for r in records:
            run.append(Measurement.from_dict(r))
        return str(run.path)

    close = run_with({3: 4.6}, {3: 4.4})  # the mid shape, 0.96x at 4.6 us
    result = CliRunner().invoke(cli, ["goals", run_file("close", close)])
    assert "1 close call " in result.output and "`ksuite confirm close`" in result.output
    paired = [{**r, "paired": {"run": "close", "with": ["compile-default"]}} for r in close]
    result = CliRunner().invoke(cli, ["goals", run_file("paired", paired)])
    assert "close call" not in result.output
    far = run_with({3: 9.0}, {3: 4.4})  # 2x slower, tight samples: a verdict, nothing to re-time
    assert "close call" not in CliRunner().invoke(cli, ["goals", run_file("far", far)]).output
