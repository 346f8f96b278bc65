"""The command line: list, check, bench, report, and one-line errors instead of tracebacks."""

import json
import re
import subprocess
import sys
from functools import partial

import pytest
from click.testing import CliRunner
from conftest import (
    KERNELBENCH,
    PROBLEMS_DIR,
    RELU_CANDIDATE,
    ROOT,
    SCALE_ROWS,
    candidate,
    problem_files,
    redirect_results,
)

from suite import commands
from suite.cli import cli
from suite.registry import Registry
from suite.results_store import RunFile

STAGE_LINE = re.compile(r"^\s+(smoke|sweep|stability|determinism|edge)\s+(pass|FAIL|skip)\b", re.M)
REPORT_KEYS = {"problem", "solution", "kind", "shape", "dtype", "correct", "median_us", "pct_sol",
               "speedup_vs_best_baseline", "gpu"}


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(autouse=True)
def no_cuda(monkeypatch):
    """These tests describe the CPU path; never let a visible GPU switch them to timing."""
    monkeypatch.setattr(commands, "cuda_available", lambda: False)


def test_list_shows_every_problem():
    result = invoke("list")
    assert result.exit_code == 0, result.output
    registry_table, _, extracted_part = result.output.partition("\n\nExtracted from models")
    listed = {line.split()[0] for line in registry_table.splitlines()[2:] if line.strip()}
    assert listed == {p.stem for p in problem_files()}
    extracted = {f"extracted/{p.parent.name}/{p.stem}" for p in (PROBLEMS_DIR / "extracted").glob("*/*.py")}
    assert {line.split()[0] for line in extracted_part.splitlines()[3:] if line.strip()} == extracted


def test_list_kernelbench_tree():
    result = invoke("list", "--kernelbench", KERNELBENCH)
    assert result.exit_code == 0, result.output
    assert "level1/19_ReLU" in result.output and "level1/23_Softmax" in result.output


def test_check_honest_candidate_by_paths_passes_with_a_line_per_stage():
    result = invoke("check", SCALE_ROWS, candidate("honest_triton"))
    assert result.exit_code == 0, result.output
    assert "No CUDA device: checking through Triton's interpreter" in result.output
    assert "scale_rows / honest_triton" in result.output
    stages = STAGE_LINE.findall(result.output)
    assert stages == [(s, "pass") for s in ("smoke", "sweep", "stability", "determinism", "edge")]


def test_check_failing_candidate_exits_1_and_says_where():
    result = invoke("check", SCALE_ROWS, candidate("shape_hardcoded"))
    assert result.exit_code == 1, result.output
    assert STAGE_LINE.findall(result.output) == [("smoke", "pass"), ("sweep", "FAIL")]
    assert "5x48 float32" in result.output


def test_check_kernelbench_problem_by_name():
    result = invoke("check", "level1/19_ReLU", RELU_CANDIDATE, "--kernelbench", KERNELBENCH)
    assert result.exit_code == 0, result.output
    # no META: the edge stage checks smaller odd sizes of its constants (harness/derived_shapes.py)
    assert STAGE_LINE.findall(result.output) == [("smoke", "pass"), ("sweep", "pass"), ("stability", "skip"),
                                                 ("determinism", "pass"), ("edge", "pass")]


def assert_one_line_error(result, *words):
    assert result.exit_code != 0
    text = result.output.strip()
    assert "Traceback" not in text
    assert len(text.splitlines()) == 1, text
    assert text.startswith("Error: ")
    for word in words:
        assert word in text


@pytest.mark.parametrize("args, words", [
    (["check", "no_such_problem"], ["'no_such_problem'"]),
    (["check", "/nowhere/missing_problem.py"], ["missing_problem.py", "no such problem file"]),
    (["check", SCALE_ROWS, "/nowhere/missing_solution.py"], ["missing_solution.py"]),
    (["check", SCALE_ROWS, "fastest"], ["'fastest'"]),
    (["check", SCALE_ROWS], ["scale_rows: no solutions in"]),
    (["bench", "no_such_problem"], ["'no_such_problem'"]),
    (["report", "no-such-run"], ["no-such-run"]),
    (["list", "--kernelbench", ROOT / "docs"], ["KernelBench"]),
])
def test_unknown_names_give_a_one_line_error(args, words, results_root):
    assert_one_line_error(CliRunner().invoke(cli, [str(a) for a in args]), *words)


def test_broken_problem_file_in_list_gives_a_one_line_error(tmp_path, monkeypatch):
    (tmp_path / "bad.py").write_text("import torch\nMETA = {}\n")  # no Model
    monkeypatch.setattr(commands, "Registry", partial(Registry, problems_dir=tmp_path, solutions_dir=tmp_path))
    result = CliRunner().invoke(cli, ["list"])
    assert_one_line_error(result, "bad.py", "no Model")


def test_unknown_problem_from_the_real_command_line():
    """The installed entry point too: `python -m suite check nope` prints one line, no traceback."""
    proc = subprocess.run([sys.executable, "-m", "suite", "check", "no_such_problem"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"Error: no problem named 'no_such_problem' in {ROOT / 'problems'}"]


def test_make_s_first_try_exits_with_its_own_code_where_this_python_has_no_cuda():
    """`make bench` runs the machine's python with KSUITE_NEED_CUDA=1 and falls back to the venv on exit 86
    (suite/__main__.py): no second interpreter imports torch to ask first. Where CUDA is there, it runs."""
    import os

    import torch

    env = {**os.environ, "KSUITE_NEED_CUDA": "1"}
    proc = subprocess.run([sys.executable, "-m", "suite", "report", "--help"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    if torch.cuda.is_available():
        assert proc.returncode == 0 and proc.stdout.startswith(f"using {sys.executable} (CUDA torch")
    else:
        assert (proc.returncode, proc.stdout, proc.stderr) == (86, "", "")
    plain = subprocess.run([sys.executable, "-m", "suite", "report", "--help"], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
    assert plain.returncode == 0 and "Usage:" in plain.stdout


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory):
    """One `bench` of the fixture problem and the honest candidate into a tmp results folder."""
    mp = pytest.MonkeyPatch()
    root = tmp_path_factory.mktemp("results")
    mp.setattr(commands, "cuda_available", lambda: False)
    redirect_results(mp, root)
    try:
        result = CliRunner().invoke(cli, ["bench", str(SCALE_ROWS), "--solution", str(candidate("honest_triton"))],
                                    catch_exceptions=False)
    finally:
        mp.undo()
    files = sorted(root.glob("*/*.jsonl"))
    return result, files


def test_bench_writes_a_results_file_and_says_nothing_was_timed(bench_run):
    result, files = bench_run
    assert result.exit_code == 0, result.output
    assert len(files) == 1
    assert files[0].parent.name == "cpu-interpreter"
    assert f"recorded in {files[0]}" in result.output
    assert commands.NOTHING_TIMED in result.output
    records = RunFile(files[0]).read()
    assert {r.solution for r in records} == {"eager", "fused", "honest_triton"}
    # bench's default dtype is the problem's primary (first) one; on CPU the shapes are the small ones
    assert {r.dtype for r in records} == {"float32"}
    assert len(records) == 3 * 2  # three implementations x two small shapes
    assert all(r.correct for r in records)
    assert all(r.median_us is None for r in records)
    assert len({r.run_id for r in records}) == 1 and records[0].run_id == files[0].stem
    assert all(r.env.get("torch") and r.env.get("triton") for r in records)  # the environment fingerprint


def test_report_json_by_run_path(bench_run):
    _, files = bench_run
    result = invoke("report", files[0], "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert isinstance(rows, list) and len(rows) == 6
    for row in rows:
        assert REPORT_KEYS <= set(row)
        assert row["problem"] == "scale_rows" and row["gpu"] == "cpu" and row["correct"] is True
    assert {(row["solution"], row["kind"]) for row in rows} == {
        ("eager", "baseline"), ("fused", "baseline"), ("honest_triton", "solution")}


def test_report_newest_run_by_default_and_by_id(bench_run, results_root):
    _, files = bench_run
    target = results_root / "cpu-interpreter" / files[0].name
    target.parent.mkdir(parents=True)
    target.write_bytes(files[0].read_bytes())
    for args in ([], [files[0].stem]):
        result = invoke("report", *args, "--format", "md")
        assert result.exit_code == 0, result.output
        assert "| scale_rows" in result.output and "honest_triton" in result.output


def test_report_table_lists_failures(tmp_path):
    from harness.records import Measurement

    run = RunFile(tmp_path / "r.jsonl")
    run.append(Measurement("scale_rows", "wrong_math", "solution", {"batch_size": 8, "dim": 32}, "float32", False,
                           error="smoke: output 0: 256 of 256 elements outside atol=1e-05 rtol=1e-05"))
    result = invoke("report", run.path)
    assert result.exit_code == 0, result.output
    assert "FAIL" in result.output
    assert "Failures:" in result.output and "wrong_math 8x32 float32: smoke: output 0" in result.output


def test_calibrate_without_cuda_is_a_one_line_error():
    assert_one_line_error(CliRunner().invoke(cli, ["calibrate"]), "CUDA")


def test_bench_failing_candidate_exits_1_and_lists_the_failure(results_root):
    result = invoke("bench", SCALE_ROWS, "--solution", candidate("wrong_math"), "--no-baselines")
    assert result.exit_code == 1, result.output
    assert "Failures:" in result.output and "wrong_math" in result.output and "smoke:" in result.output
    (run_file,) = results_root.glob("cpu-interpreter/*.jsonl")
    assert {r.solution for r in RunFile(run_file).read()} == {"wrong_math"}


def test_bench_resume_skips_implementations_already_recorded(bench_run, results_root):
    _, files = bench_run
    target = results_root / "cpu-interpreter" / files[0].name
    target.parent.mkdir(parents=True)
    target.write_bytes(files[0].read_bytes())
    result = invoke("bench", SCALE_ROWS, "--solution", candidate("honest_triton"), "--no-baselines",
                    "--resume", files[0].stem)
    assert result.exit_code == 0, result.output
    assert "already recorded" in result.output
    assert len(RunFile(target).read()) == 6  # nothing measured twice


def test_bench_resume_completes_a_partly_recorded_implementation(bench_run, results_root):
    _, files = bench_run
    target = results_root / "cpu-interpreter" / files[0].name
    target.parent.mkdir(parents=True)
    honest = [line for line in files[0].read_text().splitlines() if '"solution": "honest_triton"' in line]
    target.write_text(honest[0] + "\n")  # killed after the first of its two records
    result = invoke("bench", SCALE_ROWS, "--solution", candidate("honest_triton"), "--no-baselines",
                    "--resume", "last")
    assert result.exit_code == 0, result.output
    records = RunFile(target).read()
    keys = sorted((tuple(sorted(r.shape.items())), r.dtype) for r in records)
    assert keys == [((("batch_size", 5), ("dim", 48)), "float32"), ((("batch_size", 8), ("dim", 32)), "float32")]
    assert all(r.correct for r in records)
