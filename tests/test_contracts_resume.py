"""--resume keeps the run's identity (issue 11, point 3): its options and device are stored with it, a resume
on another device or with other options is refused, options not typed are taken from the run, and an
implementation whose source changed is measured again."""

import json
import shutil

import pytest
from click.testing import CliRunner
from conftest import SCALE_ROWS, candidate

from harness.records import Measurement
from suite import commands
from suite.cli import cli
from suite.results_store import RunFile, find_run
from suite.resume import RunIdentity, identity_path, read_identity, write_identity

H200_RUN = "20261130-001902"


@pytest.fixture(autouse=True)
def no_cuda(monkeypatch):
    monkeypatch.setattr(commands, "cuda_available", lambda: False)


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def bench(solution, *extra):
    return invoke("bench", SCALE_ROWS, "--solution", solution, "--no-baselines", *extra)


@pytest.fixture
def honest(tmp_path):
    path = tmp_path / "honest.py"
    shutil.copy(candidate("honest_triton"), path)
    return path


def test_a_new_run_stores_its_options_and_device(results_root, honest):
    result = bench(honest, "--dtype", "fp16")
    assert result.exit_code == 0, result.output
    run = find_run(None)
    identity = read_identity(run)
    assert identity_path(run).name == f"{run.run_id}.run.json"
    assert (identity.command, identity.device, identity.gpu) == ("bench", "cpu-interpreter", "cpu")
    assert identity.options["dtypes"] == ["float16"] and identity.options["baselines"] == []
    assert identity.options["solutions"] == [str(honest)]


def test_a_resume_with_other_options_is_refused_and_adds_nothing(results_root, honest):
    assert bench(honest).exit_code == 0
    run = find_run(None)
    before = run.path.read_bytes()
    result = bench(honest, "--dtype", "float16", "--resume", run.run_id)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "other options" in lines[0] and "dtypes float16 (the run has primary)" in lines[0]
    assert run.path.read_bytes() == before


def test_a_resume_without_options_takes_the_runs_own(results_root, honest):
    assert bench(honest, "--dtype", "float16").exit_code == 0
    run = find_run(None)
    first = [line for line in run.path.read_text().splitlines()]
    run.path.write_text(first[0] + "\n")  # interrupted after its first record
    result = invoke("bench", "--resume", "last")
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if line.startswith(f"resuming {run.run_id}"))
    assert "with its recorded options (" in line and "dtypes float16" in line and f"problems {SCALE_ROWS}" in line
    records = run.read()
    assert {r.dtype for r in records} == {"float16"} and len(records) == 2
    assert {r.solution for r in records} == {"honest"}  # not the whole suite, not its baselines


def write_h200_run(results_root, with_identity: bool) -> RunFile:
    run = RunFile.create("nvidia-h200", H200_RUN)
    run.append(Measurement("scale_rows", "honest_triton", "solution", {"batch_size": 8, "dim": 32}, "float32",
                           True, median_us=3.0, gpu="NVIDIA H200", run_id=H200_RUN))
    if with_identity:
        write_identity(run, RunIdentity("bench", "nvidia-h200", "NVIDIA H200", {"dtypes": ["primary"]}))
    return run


@pytest.mark.parametrize("with_identity", [True, False], ids=["options-file", "old-run-inferred"])
def test_a_cpu_resume_of_a_gpu_run_is_refused(results_root, with_identity):
    run = write_h200_run(results_root, with_identity)
    before = run.path.read_bytes()
    result = invoke("bench", SCALE_ROWS, "--solution", candidate("honest_triton"), "--resume", H200_RUN)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "recorded on nvidia-h200" in lines[0] and "this machine is cpu-interpreter" in lines[0]
    assert ("inferred" in lines[0]) != with_identity
    assert run.path.read_bytes() == before
    assert not list(results_root.glob("cpu-interpreter/*"))


def test_an_old_run_on_this_device_resumes_and_says_its_options_are_unknown(results_root, honest):
    assert bench(honest).exit_code == 0
    run = find_run(None)
    identity_path(run).unlink()  # a run from before runs stored their options
    result = bench(honest, "--resume", run.run_id)
    assert result.exit_code == 0, result.output
    assert "it has no options file" in result.output and "the options given now are used" in result.output


def test_a_changed_solution_is_measured_again(results_root, honest):
    assert bench(honest).exit_code == 0
    run = find_run(None)
    old_hash = {r.source_hash for r in run.read()}
    honest.write_text(honest.read_text() + "\n# tuned since\n")
    result = bench(honest, "--resume", run.run_id)
    assert result.exit_code == 0, result.output
    assert "measuring again (source changed since recorded): scale_rows/honest" in result.output
    assert "already recorded" not in result.output
    records = run.read()
    assert len(records) == 2 and {r.source_hash for r in records}.isdisjoint(old_hash)
    assert len(run.path.read_text().splitlines()) == 4  # the old records stay in the file, superseded


def test_an_unchanged_solution_is_not_measured_again(results_root, honest):
    assert bench(honest).exit_code == 0
    run = find_run(None)
    result = bench(honest, "--resume", run.run_id)
    assert result.exit_code == 0 and "2 already recorded" in result.output, result.output
    assert "measuring again" not in result.output


def test_the_options_file_is_json_written_whole(results_root):
    run = RunFile.create("cpu-interpreter", "20261201-000000")
    write_identity(run, RunIdentity("bench", "cpu-interpreter", "cpu", {"dtypes": ["primary"]}))
    assert json.loads(identity_path(run).read_text())["options"] == {"dtypes": ["primary"]}
    assert not list(identity_path(run).parent.glob("*.tmp"))


def test_a_resume_keeps_records_whose_file_changed_only_in_another_gpu_s_table(tmp_path):
    # a table search on the H200 rewrites the file the H100's run measured; the H100 runs its own table, unchanged
    from harness.ran_hash import ran_hash
    from harness.spec import ProblemRef, SolutionRef, file_hash
    from suite.resume import stale_implementations

    tables = ("DISPATCH = {'a': {}}\nDISPATCH_GPU = 'nvidia-h200'\n"
              "DISPATCH_BY_GPU = {'nvidia-h100-80gb-hbm3': {'a': {}}}\n")
    path = tmp_path / "family.py"
    path.write_text(tables)
    run = RunFile(tmp_path / "run.jsonl")
    for gpu, slug in (("NVIDIA H100 80GB HBM3", "nvidia-h100-80gb-hbm3"), ("NVIDIA H200", "nvidia-h200")):
        run.append(Measurement(problem="scale_rows", solution=f"family_{slug}", kind="solution",
                               shape={"rows": 7}, dtype="float16", correct=True, source_hash=file_hash(path),
                               ran_hash=ran_hash(path, slug), gpu=gpu))
    path.write_text(tables.replace("{'a': {}}\nDISPATCH_GPU", "{'a': {'HINTS': False}}\nDISPATCH_GPU"))
    problem = ProblemRef("scale_rows", SCALE_ROWS)
    plan = [(problem, [SolutionRef(f"family_{s}", path) for s in ("nvidia-h100-80gb-hbm3", "nvidia-h200")])]
    assert stale_implementations(run, plan) == {("scale_rows", "family_nvidia-h200")}
