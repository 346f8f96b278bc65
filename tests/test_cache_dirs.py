"""Every child process the harness starts finds its compile caches under KSUITE_CACHE_DIR."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import cache_dirs, cuda_build
from harness.children import launcher, worker_pool
from harness.jobs import pairwise, runner, tuning_session
from harness.machine_code import offline_compile
from harness.spec import Options, ProblemRef, SolutionRef

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = ProblemRef("rmsnorm", ROOT / "problems" / "rmsnorm.py")
CACHE_VARS = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "TORCH_EXTENSIONS_DIR")


class Started(Exception):
    """Raised by a stand-in Popen / run once it has seen the child's environment."""


@pytest.fixture
def cache_root(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "ksuite-cache"
    monkeypatch.setenv(cache_dirs.CACHE_ENV, str(root))
    for name in CACHE_VARS:
        monkeypatch.delenv(name, raising=False)
    return root


def assert_under(env: dict, root: Path) -> None:
    for name in CACHE_VARS:
        assert Path(env[name]).is_relative_to(root), name
    tag = cache_dirs.environment_tag()
    assert Path(env["TORCHINDUCTOR_CACHE_DIR"]) == root / "inductor" / tag
    assert Path(env["TRITON_CACHE_DIR"]) == root / "triton" / tag


def capture(seen: list):
    def fake(*args, env=None, **kwargs):
        seen.append(env)
        raise Started
    return fake


def test_the_root_is_the_env_var_else_the_xdg_cache(monkeypatch, tmp_path):
    assert cache_dirs.cache_root({cache_dirs.CACHE_ENV: str(tmp_path / "c")}) == tmp_path / "c"
    assert cache_dirs.cache_root({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "kernelsuite"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_dirs.cache_root({}) == tmp_path / ".cache" / "kernelsuite"


def test_folders_are_per_gpu_torch_and_triton():
    tag = cache_dirs.environment_tag()
    assert tag.startswith(cache_dirs.device_tag() + "_torch") and "_triton" in tag
    assert cache_dirs.torch_version() in tag and cache_dirs.triton_version() in tag
    assert cache_dirs.device_tag() in cache_dirs.extensions_folder_name()


def test_a_folder_the_user_chose_is_kept(cache_root):
    env = cache_dirs.with_cache_dirs({"TRITON_CACHE_DIR": "/mine", cache_dirs.CACHE_ENV: str(cache_root)})
    assert env["TRITON_CACHE_DIR"] == "/mine"
    assert Path(env["TORCHINDUCTOR_CACHE_DIR"]).is_relative_to(cache_root)
    assert env["TORCHINDUCTOR_FX_GRAPH_CACHE"] == "1"


def test_the_worker_env_points_at_the_cache(cache_root):
    assert_under(launcher.child_env(Options()), cache_root)
    assert Path(cuda_build.default_extensions_dir()).is_relative_to(cache_root)


def test_the_job_runner_starts_its_child_with_it(cache_root, monkeypatch):
    seen: list = []
    monkeypatch.setattr(launcher.subprocess, "Popen", capture(seen))
    pool = worker_pool.WorkerPool()
    with pytest.raises(Started):
        list(runner.run_job(PROBLEM, [SolutionRef("eager")], Options(), lambda e: None, pool))
    pool.close()
    assert_under(seen[0], cache_root)


def test_the_tuning_session_starts_its_child_with_it(cache_root, monkeypatch):
    seen: list = []
    monkeypatch.setattr(launcher.subprocess, "Popen", capture(seen))
    session = tuning_session.TuningSession(PROBLEM, Options())
    with pytest.raises(Started):
        session._start()
    assert_under(seen[0], cache_root)


def test_pairwise_timing_starts_its_child_with_it(cache_root, monkeypatch):
    seen: list = []
    monkeypatch.setattr(launcher.subprocess, "Popen", capture(seen))
    sol = SolutionRef("triton_starter", ROOT / "solutions" / "rmsnorm" / "triton_starter.py")
    with pytest.raises(Started):
        pairwise.run_pairwise(PROBLEM, sol, sol, Options())
    assert_under(seen[0], cache_root)


def test_cuda_prebuild_children_get_it(cache_root, monkeypatch):
    seen: list = []
    monkeypatch.setattr(cuda_build, "prebuild", lambda pairs, env, timeout_s, echo: seen.append(env) or {})
    cuda_build.prebuild_for([], Options())
    assert_under(seen[0], cache_root)


def test_offline_compile_children_get_it(cache_root, monkeypatch):
    seen: list = []
    monkeypatch.setattr(launcher.subprocess, "Popen", capture(seen))
    with pytest.raises(Started):
        offline_compile.compile_at_shapes(PROBLEM.path, ROOT / "solutions" / "rmsnorm" / "triton_starter.py",
                                          [{}], "float16", 90)
    assert_under(seen[0], cache_root)


def test_a_script_can_export_the_same_folders(cache_root):
    lines = dict(line.removeprefix("export ").split("=", 1) for line in cache_dirs.exports().splitlines())
    assert lines[cache_dirs.CACHE_ENV] == str(cache_root)
    assert lines["TORCHINDUCTOR_CACHE_DIR"] == launcher.child_env(Options())["TORCHINDUCTOR_CACHE_DIR"]
    assert set(CACHE_VARS) <= set(lines)
