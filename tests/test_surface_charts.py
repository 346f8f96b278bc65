"""`ksuite report RUN --chart F` and `ksuite compare ... --chart F`: PNGs drawn without a display, with the
numbers the tables have; a run with nothing timed is a one-line error, not an empty picture."""

from click.testing import CliRunner

from harness.records import Measurement
from suite.charts import colour, compare_summary, run_summary
from suite.cli import cli
from suite.report import finish
from suite.results_store import RunFile
from suite.run_compare import compare

PNG = b"\x89PNG\r\n\x1a\n"
SHAPES = [{"batch_size": 8, "dim": 32}, {"batch_size": 5, "dim": 48}]


def timed_run(path, gpu="NVIDIA H200", solution_us=(10.0, 40.0)) -> RunFile:
    """A solution at 10 and 40 us beside an eager baseline at 20 and 20 us: geomean speedup 1.0."""
    run = RunFile(path)
    for shape, us in zip(SHAPES, solution_us):
        run.append(Measurement("scale_rows", "eager", "baseline", shape, "float32", True, median_us=20.0,
                               pct_sol=40.0, gpu=gpu))
        run.append(Measurement("scale_rows", "fast", "solution", shape, "float32", True, median_us=us,
                               pct_sol=800.0 / us, gpu=gpu))
    return run


def test_run_summary_is_the_fastest_solution_against_the_best_baseline(tmp_path):
    summary = run_summary(finish(timed_run(tmp_path / "r.jsonl").read()))
    assert summary["scale_rows"]["speedup"] == 1.0  # sqrt(2 x 0.5)
    assert round(summary["scale_rows"]["pct_sol"], 6) == 40.0 and summary["scale_rows"]["baseline_pct_sol"] == 40.0
    assert (colour(1.2), colour(1.01), colour(0.8)) == ("tab:green", "tab:gray", "tab:red")


def test_report_chart_writes_a_png(tmp_path):
    run, out = timed_run(tmp_path / "20261201-000000.jsonl"), tmp_path / "charts" / "run.png"
    result = CliRunner().invoke(cli, ["report", str(run.path), "--chart", str(out)])
    assert result.exit_code == 0, result.output
    assert f"chart: {out}" in result.output and out.read_bytes().startswith(PNG)


def test_a_run_with_nothing_timed_has_no_chart(tmp_path):
    run = RunFile(tmp_path / "cpu.jsonl")
    run.append(Measurement("scale_rows", "fast", "solution", SHAPES[0], "float32", True))
    result = CliRunner().invoke(cli, ["report", str(run.path), "--chart", str(tmp_path / "x.png")])
    assert result.exit_code == 2 and "nothing was timed" in result.output and not (tmp_path / "x.png").exists()


def test_compare_chart_puts_two_gpus_side_by_side(tmp_path):
    base = timed_run(tmp_path / "a.jsonl", "NVIDIA H100", (20.0, 80.0))
    new = timed_run(tmp_path / "b.jsonl", "NVIDIA H200", (10.0, 40.0))
    summary = compare_summary(compare(base.read(), new.read()))
    assert summary["scale_rows"]["speedup"] == 2.0  # the solution is twice as fast on the new run
    out = tmp_path / "cmp.png"
    result = CliRunner().invoke(cli, ["compare", str(base.path), str(new.path), "--chart", str(out)])
    assert result.exit_code == 0, result.output
    assert f"chart: {out}" in result.output and out.read_bytes().startswith(PNG)
