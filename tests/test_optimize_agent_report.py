"""Agent workspace and --record, the --report PNG and Markdown, and the click command."""

import os
import stat

from click.testing import CliRunner
from conftest import SCALE_ROWS
from test_optimize_loop import FakeEvaluator

from suite.optimize import agent
from suite.optimize.command import Settings, candidates_root, optimize_root, record, run_problems
from suite.optimize.ledger import Ledger, Row
from suite.optimize.report import best_so_far, write_reports
from suite.optimize_cli import optimize
from suite.registry import Registry


def start_workspace(tmp_path, results_root):
    start = tmp_path / "start.py"
    start.write_text("TUNABLES = {}\n# fake: us=100\n")
    registry = Registry(solutions_dir=tmp_path / "solutions")
    lines = []
    run_problems((str(SCALE_ROWS),), Settings(strategy="agent", start=str(start)), registry, echo=lines.append)
    (folder,) = list(candidates_root("cpu-interpreter").glob("scale_rows-*-agent"))
    assert folder.is_relative_to(tmp_path / "cache")  # a workspace is not data: never under results/
    return folder, registry, lines


def test_agent_workspace_and_record(tmp_path, results_root):
    folder, registry, lines = start_workspace(tmp_path, results_root)
    assert "program.md" in lines[0]
    program = (folder / "program.md").read_text()
    for command in ("ksuite check", "ksuite bench", "ksuite optimize scale_rows --record"):
        assert command in program
    assert not os.stat(folder / "problem.py").st_mode & stat.S_IWUSR  # read-only copy
    state = agent.read_state(folder)
    (folder / "candidate.py").write_text("TUNABLES = {}\n# fake: us=50\n")
    first = record(str(SCALE_ROWS), folder / "candidate.py", "halve the time", Settings(), registry,
                   evaluator=FakeEvaluator(), echo=lambda s: None)
    assert first.kept == 1 and "us=50" in open(state["kept"]).read()
    (folder / "candidate.py").write_text("TUNABLES = {}\n# fake: us=49.9\n")
    record(str(SCALE_ROWS), folder / "candidate.py", "noise", Settings(), registry, evaluator=FakeEvaluator(),
           echo=lambda s: None)
    rows = Ledger(state["ledger"]).rows()
    assert [(r.experiment, r.status) for r in rows] == [(0, "kept"), (1, "kept"), (2, "discarded")]
    assert rows[1].description.startswith("agent: halve the time") and rows[1].strategy == "agent"


def test_report_png_and_markdown(tmp_path):
    ledger = Ledger(tmp_path / "softmax-run.tsv")
    for i, (us, status) in enumerate([(100, "kept"), (120, "discarded"), (80, "kept"), (None, "crashed")]):
        ledger.append(Row(i, "search", f"exp {i}", status != "crashed", us, us and 5000 / us, us and 150 / us,
                          status, "h"))
    assert best_so_far(ledger.rows()) == [100, 100, 80, 80]
    (md,) = write_reports([ledger.path])
    text = md.read_text()
    assert "4 experiments: 2 kept, 1 discarded, 1 crashed" in text and "1.25x the start" in text
    assert "![progress](softmax-run.png)" in text
    assert md.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"


def test_report_of_untimed_ledger_says_so(tmp_path):
    ledger = Ledger(tmp_path / "p-run.tsv")
    ledger.append(Row(0, "search", "start", True, None, None, None, "kept", "h"))
    (md,) = write_reports([ledger.path])
    assert "Nothing was timed" in md.read_text() and not md.with_suffix(".png").exists()


def test_cli_usage_errors_and_report(tmp_path, results_root):
    runner = CliRunner()
    assert runner.invoke(optimize, []).exit_code == 2
    result = runner.invoke(optimize, ["--report"])
    assert result.exit_code == 1 and "no optimisation ledgers" in result.output
    ledger = Ledger(optimize_root("cpu-interpreter") / "softmax-run.tsv")
    ledger.append(Row(0, "search", "start", True, 10.0, 50.0, 1.0, "kept", "h"))
    result = runner.invoke(optimize, ["softmax", "--report"])
    assert result.exit_code == 0 and "softmax-run.md" in result.output
    assert "--strategy [search|llm|agent]" in runner.invoke(optimize, ["--help"]).output


def test_record_outside_a_workspace_is_a_usage_error(tmp_path):
    import click
    import pytest

    stray = tmp_path / "c.py"
    stray.write_text("x = 1\n")
    with pytest.raises(click.UsageError):
        record(str(SCALE_ROWS), stray, "m", Settings(), Registry())


def test_recorded_baselines_come_from_the_newest_run_that_has_them_after_the_same_flush(results_root):
    from harness.records import Measurement
    from suite.optimize.command import recorded_baselines
    from suite.results_store import RunFile

    def base(us, problem="softmax", flush="clean"):
        return Measurement(problem, "compile", "baseline", {"batch_size": 1}, "float16", True, median_us=us,
                           flush=flush)

    RunFile.create("gpu-x", "20260101-000000").append(base(50.0))
    RunFile.create("gpu-x", "20260102-000000").append(base(40.0))
    RunFile.create("gpu-x", "20260103-000000").append(base(30.0, problem="rmsnorm"))
    RunFile.create("gpu-x", "20260104-000000").append(base(45.0, flush="write"))
    RunFile.create("gpu-x", "20260105-000000").append(base(44.0, flush=None))  # a record that does not say
    assert [m.median_us for m in recorded_baselines("softmax", "gpu-x")] == [40.0]
    assert [m.median_us for m in recorded_baselines("softmax", "gpu-x", "write")] == [45.0]
    assert recorded_baselines("matmul", "gpu-x") == []
