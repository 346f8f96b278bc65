"""What the commands print: bars only on a terminal, no column that carries nothing, the run named in a
report's first line, and shapes written one way ("8x32") everywhere."""

import re

import click
import pytest
from click.testing import CliRunner
from conftest import ROOT, SCALE_ROWS, candidate

from harness import Options
from harness.records import Measurement
from submit.gpumode.choose import _pick
from suite import bench, commands
from suite.cli import cli
from suite.optimize.decision import decide
from suite.report import render, render_summary
from suite.results_store import RunFile

SHAPE = {"batch_size": 8, "dim": 32}


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(autouse=True)
def no_cuda(monkeypatch):
    monkeypatch.setattr(commands, "cuda_available", lambda: False)


def cpu_run(path) -> RunFile:
    """What a CPU bench records: checked, never timed."""
    run = RunFile(path)
    for name, kind in (("eager", "baseline"), ("honest_triton", "solution")):
        run.append(Measurement("scale_rows", name, kind, SHAPE, "float32", True, run_id=path.stem))
    return run


def test_the_cpu_table_leaves_out_columns_that_are_dashes_in_every_row(tmp_path):
    run = cpu_run(tmp_path / "20261201-000000.jsonl")
    header = render(run.read()).splitlines()[0].split()
    assert header == ["problem", "impl", "k", "shape", "dtype", "check"]
    assert "%SOL" not in render_summary(run.read()).splitlines()[0]


def test_a_timed_column_stays_when_one_row_has_a_number(tmp_path):
    run = cpu_run(tmp_path / "r.jsonl")
    run.append(Measurement("scale_rows", "fused", "baseline", SHAPE, "float32", True, median_us=12.5))
    header = render(run.read()).splitlines()[0]
    assert "median us" in header and "%SOL" not in header


def test_report_names_the_run_and_its_file_in_its_first_line(tmp_path):
    run = cpu_run(tmp_path / "20261201-000000.jsonl")
    for fmt, first in (("table", f"run 20261201-000000 ({run.path})"),
                       ("md", f"Run `20261201-000000` (`{run.path}`)")):
        result = invoke("report", run.path, "--format", fmt)
        assert result.exit_code == 0, result.output
        assert result.output.splitlines()[0] == first
    assert invoke("report", run.path, "--summary").output.startswith("run 20261201-000000 (")


def test_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path, capsys, monkeypatch):
    run = RunFile(tmp_path / "r.jsonl")
    bench.run_bench([], Options(interpret=True, time=False), {}, run)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(bench, "progress_shown", lambda: True)  # a terminal: the bar is back
    bench.run_bench([], Options(interpret=True, time=False), {}, run)
    assert "bench" in capsys.readouterr().err


def test_a_failure_names_its_shape_as_8x32_not_a_dict(results_root):
    result = invoke("bench", SCALE_ROWS, "--solution", candidate("wrong_math"), "--no-baselines")
    assert result.exit_code != 0
    failures = result.output.split("Failures:")[1]
    assert "at 8x32 float32" in failures and "{'" not in failures


def test_optimize_and_submit_reasons_write_shapes_the_same_way():
    best = [Measurement("p", "best", "solution", {"batch_size": 64, "dim": 256}, "float16", True, median_us=10.0,
                        iqr_us=0.01)]
    slower = [Measurement("p", "cand", "solution", {"batch_size": 64, "dim": 256}, "float16", True,
                          median_us=20.0, iqr_us=0.01)]
    assert decide(best, slower).reason == "slower at 64x256 float16"
    records = [{"solution": "s", "correct": True, "median_us": 61.2, "shape": {"size": 52428800}}]
    assert _pick(records, "last") == ("s", "61.2 us at 52428800")


README = ROOT / "README.md"
DOCUMENTED = ("list", "check", "bench", "calibrate", "report", "compare", "goals", "inspect", "lint", "ab")


def readme_row(command: str) -> str:
    (line,) = [r for r in README.read_text().splitlines() if r.startswith(f"| `ksuite {command} ")
               or r.startswith(f"| `ksuite {command}`")]
    return line.split("` |")[0]


@pytest.mark.parametrize("name", DOCUMENTED)
def test_the_readme_table_lists_every_option_of_the_command(name):
    row = readme_row(name)
    for param in cli.commands[name].params:
        if isinstance(param, click.Option) and param.name != "help":
            assert any(opt in row for opt in param.opts), f"README row of `ksuite {name}` lacks {param.opts}"


def test_the_readme_is_a_users_page_and_the_notebook_is_in_docs():
    text = README.read_text()
    assert "ANCHORS" not in invoke("bench", "--help").output
    assert re.search(r"`make test`.*about \d+-\d+ minutes on a 2-core CPU machine", text, re.S)
    assert "## Shapes: what a user has, and what we judge on" in text
    for page in ("docs/results-h200.md", "docs/results-notes.md"):
        assert f"({page})" in text and (ROOT / page).is_file()
    assert "Solutions round" not in text and "Still to measure" not in text  # the notebook moved out


def test_the_results_page_is_what_report_prints_for_its_runs(monkeypatch):
    """Generated, not edited by hand: each section is the report of its run as it reads today (a run newer
    than the page is not an error: `make results-page` adds it)."""
    monkeypatch.chdir(ROOT)  # the page names each run by its path from the checkout's root
    page = (ROOT / "docs" / "results-h200.md").read_text()
    sections = re.findall(r"^## Run `([\d-]+)` \(`([^`]+)`\)$", page, re.M)
    assert sections
    for run_id, path in sections:
        section = commands.report(path, "md", None, summary=True)
        assert "## " + section in page, f"docs/results-h200.md: run {run_id} differs from its report; make results-page"


def test_verbose_bench_logs_a_line_per_record():
    """-v: each record as it lands, so a round's log cut by its time limit still shows what was measured."""
    base = dict(problem="rmsnorm", kind="baseline", shape={"batch_size": 16384, "dim": 4096}, dtype="float16")
    timed = Measurement(solution="compile", correct=True, median_us=70.12, pct_sol=85.4, **base)
    failed = Measurement(solution="triton_family", correct=False, error="sweep: max abs 3.1\nmore", **base)
    checked = Measurement(solution="eager", correct=True, **base)
    assert bench.record_line(timed) == "  rmsnorm 16384x4096 float16 compile: 70.1 us, 85 % SOL"
    assert bench.record_line(failed) == "  rmsnorm 16384x4096 float16 triton_family: FAILED: sweep: max abs 3.1"
    assert bench.record_line(checked).endswith("eager: correct (not timed)")
