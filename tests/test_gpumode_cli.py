"""`ksuite submit gpumode`, `ksuite gpumode-eval`, `ksuite leaderboards`, end to end on CPU."""

import shutil
import sys

import pytest
import yaml
from click.testing import CliRunner
from conftest import FIXTURES, SOLUTIONS_DIR

from submit.gpumode.problem import PROBLEMS_DIR
from suite.cli import cli

sys.path.insert(0, str(FIXTURES / "gpumode"))
from fake_server import FakeLeaderboard  # noqa: E402

SUBMISSIONS = FIXTURES / "gpumode" / "submissions"
STARTER = SOLUTIONS_DIR / "vectorsum_v2" / "triton_starter.py"
SECRET_ID = "cli-id-55e1b0-never-shown"


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("KSUITE_GPUMODE_BUDGET_S", "0.05")
    for name in ("POPCORN_API_URL", "POPCORN_CLI_ID", "POPCORN_SEED", "KSUITE_GPUMODE_CPU_BENCH"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def tiny_folder(tmp_path):
    """vectorsum_v2's folder, unchanged but for task.yml's cases, which shrink to CPU sizes."""
    folder = tmp_path / "vectorsum_v2"
    shutil.copytree(PROBLEMS_DIR / "vectorsum_v2", folder)
    task = yaml.safe_load((folder / "task.yml").read_text())
    task.update(tests=[{"size": 1023, "seed": 4242}], ranking_by="mean",
                benchmarks=[{"size": 2048, "seed": 1}, {"size": 5000, "seed": 2}])
    (folder / "task.yml").write_text(yaml.safe_dump(task))
    return folder


@pytest.fixture
def server(monkeypatch):
    fake = FakeLeaderboard(lifetime_s=60).start()
    monkeypatch.setenv("POPCORN_API_URL", fake.url)
    monkeypatch.setenv("POPCORN_CLI_ID", SECRET_ID)
    yield fake
    fake.stop()


def test_gpumode_eval_on_any_folder_prints_results_and_score(tiny_folder, monkeypatch):
    monkeypatch.setenv("KSUITE_GPUMODE_CPU_BENCH", "1")  # without a GPU the timed modes need this
    result = invoke("gpumode-eval", tiny_folder, SUBMISSIONS / "good_torch.py", "--mode", "benchmark")
    assert result.exit_code == 0, result.output
    assert "local benchmark: pass (ok)" in result.output and "score (mean benchmark mean):" in result.output
    wrong = invoke("gpumode-eval", tiny_folder, SUBMISSIONS / "shape_one.py")
    assert wrong.exit_code == 112 and "shape mismatch" in wrong.output


def test_submit_dry_run_runs_the_servers_sequence_locally(tiny_folder, tmp_path, monkeypatch):
    monkeypatch.setenv("KSUITE_GPUMODE_CPU_BENCH", "1")
    out = tmp_path / "submission.py"
    result = invoke("submit", "gpumode", tiny_folder, STARTER, "--gpu", "H100", "--mode", "leaderboard",
                    "--dry-run", "--out", out)
    assert result.exit_code == 0, result.output
    for line in ("lint: pass", "local test: pass", "local benchmark: pass", "score (mean benchmark mean)",
                 "dry run: not sent"):
        assert line in result.output
    assert result.output.count("local leaderboard: pass") == 2  # the ranked run and the secret-seeded one
    assert out.read_text().startswith("#!POPCORN leaderboard vectorsum_v2\n#!POPCORN gpu H100\n")


def test_submit_refuses_gpu_not_spelled_as_the_leaderboard_does():
    result = invoke("submit", "gpumode", "vectorsum_v2", "--gpu", "h100", "--dry-run")
    assert result.exit_code == 2 and "refused: GPU 'h100' is not one of" in result.output


def test_submit_sends_follows_and_never_reveals_the_id(server, tmp_path):
    answer, out = tmp_path / "answer.json", tmp_path / "submission.py"
    result = invoke("submit", "gpumode", "vectorsum_v2", SUBMISSIONS / "good_torch.py", "--gpu", "B200",
                    "--mode", "leaderboard", "--no-check", "--poll", "0.01", "-o", answer, "--out", out)
    assert result.exit_code == 0, result.output
    assert "sent: submission 4242 (vectorsum_v2 on B200, mode leaderboard)" in result.output
    assert "leaderboard (secret): passed" in result.output
    assert "ranked and secret runs both passed: yes" in result.output
    assert any(r["cli_id"] == SECRET_ID for r in server.state.requests)
    for text in (result.output, result.stderr, answer.read_text(), out.read_text()):
        assert SECRET_ID not in text


def test_leaderboards_lists_names_and_gpus(server):
    result = invoke("leaderboards")
    assert result.exit_code == 0 and "vectorsum_v2: B200, H100, A100, L4" in result.output


def test_leaderboards_without_configuration_says_what_to_set():
    result = invoke("leaderboards")
    assert result.exit_code == 9 and "POPCORN_API_URL" in result.output


def test_submit_without_a_solution_packages_the_folders_own_sample(tmp_path):
    """pmpp_v2 folders with no solutions/<name>/ fall back to their submission.py, as the leaderboard's do."""
    out = tmp_path / "submission.py"
    result = invoke("submit", "gpumode", "grayscale_v2", "--gpu", "H100", "--dry-run", "--no-check", "--out", out)
    assert result.exit_code == 0, result.output
    assert "problems/gpumode/grayscale_v2/submission.py" in result.output
    assert out.read_text().startswith("#!POPCORN leaderboard grayscale_v2\n#!POPCORN gpu H100\n")


def test_gpumode_list_shows_every_folder_with_its_protocol(tmp_path):
    result = invoke("gpumode-list")
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line.split() for line in result.output.splitlines()[2:]}
    assert set(rows) == {"vectorsum_v2", "grayscale_v2", "histogram_v2", "prefixsum_v2", "matmul_v2", "sort_v2",
                         "conv2d_v2"}
    assert rows["vectorsum_v2"][1:5] == ["py", "last", "5", "6"]  # lang, ranked by, tests, benchmarks
    broken = tmp_path / "broken_v1"
    broken.mkdir()
    (broken / "task.yml").write_text("tests: [\n")  # not YAML: one line naming it, the others still listed
    result = invoke("gpumode-list", tmp_path)
    assert result.exit_code == 0 and "broken_v1" in result.output and "error:" in result.output
