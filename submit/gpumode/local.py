"""Run the evaluation protocol locally in a child process, as the leaderboard's runner would.

The submission is copied beside the problem's files into a scratch folder under the name submission.py
(what the server does), then `python -m submit.gpumode.evaluate` runs there with a pipe on POPCORN_FD.
A run past its timeout becomes exit code 114. The score follows the problem's ranking_by. On a machine
without CUDA the child runs Triton through its interpreter (TRITON_INTERPRET=1, CPU tensors), as `ksuite
check` does; with CUDA it runs exactly as on the leaderboard.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from submit.gpumode.evaluate import ExitCode, format_spec
from submit.gpumode.problem import ROOT, GpuModeProblem

EXIT_MEANINGS = {ExitCode.OK: "ok", ExitCode.CUDA_FAIL: "CUDA failure", ExitCode.PIPE_FAIL: "pipe failure",
                 ExitCode.VALIDATION_FAIL: "validation failure", ExitCode.BAD_SPEC: "bad test spec",
                 ExitCode.TIMEOUT: "timeout"}


@dataclass(frozen=True)
class LocalRun:
    mode: str
    exit_code: int
    results: dict = field(default_factory=dict)
    stderr: str = ""

    @property
    def passed(self) -> bool:
        return self.exit_code == ExitCode.OK and self.results.get("check") == "pass"

    @property
    def meaning(self) -> str:
        return EXIT_MEANINGS.get(self.exit_code, f"exit code {self.exit_code}")

    def benchmark_means_ns(self) -> list[float]:
        count = int(self.results.get("benchmark-count", 0))
        return [float(self.results[f"benchmark.{i}.mean"]) for i in range(count)
                if f"benchmark.{i}.mean" in self.results]


def parse_results(text: str) -> dict:
    """key: value lines into a dict (values stay strings, as on the wire)."""
    results = {}
    for line in text.splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            results[key.strip()] = value.strip()
    return results


def score_ns(means_ns: list[float], ranking_by: str) -> float | None:
    """The leaderboard's score from benchmark means: the last one, their mean, or their geometric mean."""
    if not means_ns:
        return None
    if ranking_by == "last":
        return means_ns[-1]
    if ranking_by == "mean":
        return sum(means_ns) / len(means_ns)
    return math.exp(sum(math.log(m) for m in means_ns) / len(means_ns))


def stage(problem: GpuModeProblem, submission: Path, scratch: Path) -> Path:
    """Copy the problem's files (and a sibling utils.py, as in reference-kernels) with submission.py."""
    for item in problem.path.iterdir():
        if item.is_file() and item.name != "submission.py":
            shutil.copy(item, scratch / item.name)
    utils = problem.path.parent / "utils.py"
    if utils.is_file() and not (scratch / "utils.py").exists():
        shutil.copy(utils, scratch / "utils.py")
    shutil.copy(submission, scratch / "submission.py")
    return scratch / "submission.py"


def cuda_here() -> bool:
    import torch

    return torch.cuda.is_available()


def can_time_here() -> bool:
    """Benchmark and leaderboard modes time on a GPU; KSUITE_GPUMODE_CPU_BENCH=1 forces CPU times (tests,
    problems with small benchmarks), which are the interpreter's, not the leaderboard's."""
    return cuda_here() or os.environ.get("KSUITE_GPUMODE_CPU_BENCH") == "1"


def child_env(extra_env: dict | None) -> dict:
    """The protocol child's environment: ours, the caller's extras, the interpreter when there is no GPU."""
    env = {**os.environ, **(extra_env or {})}
    if not cuda_here():
        env.setdefault("TRITON_INTERPRET", "1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("POPCORN_SEED", None)
    return env


def default_cases(problem: GpuModeProblem, mode: str) -> list[dict]:
    return problem.tests if mode == "test" else problem.benchmarks


def run_local(problem: GpuModeProblem, submission: Path, mode: str, cases: list[dict] | None = None,
              secret: int | None = None, timeout_s: float | None = None, env: dict | None = None) -> LocalRun:
    cases = default_cases(problem, mode) if cases is None else cases
    key = "test_timeout" if mode == "test" else "ranked_timeout" if mode == "leaderboard" else "benchmark_timeout"
    timeout_s = timeout_s or float(problem.timeouts.get(key, 180))
    with tempfile.TemporaryDirectory(prefix="ksuite-gpumode-") as tmp:
        scratch = Path(tmp)
        staged = stage(problem, Path(submission), scratch)
        casefile = scratch / "cases.txt"
        casefile.write_text("".join(format_spec(c) + "\n" for c in cases), encoding="utf-8")
        return _spawn(mode, casefile, scratch, staged, secret, timeout_s, env)


def _spawn(mode, casefile, scratch, staged, secret, timeout_s, extra_env) -> LocalRun:
    read_fd, write_fd = os.pipe()
    env = {**child_env(extra_env), "POPCORN_FD": str(write_fd)}
    if secret is not None:
        env["POPCORN_SEED"] = str(secret)
    command = [sys.executable, "-m", "submit.gpumode.evaluate", mode, str(casefile), str(scratch), str(staged)]
    proc = subprocess.Popen(command, cwd=scratch, env=env, pass_fds=(write_fd,), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    os.close(write_fd)
    chunks: list[str] = []
    reader = threading.Thread(target=lambda: chunks.append(os.fdopen(read_fd).read()), daemon=True)
    reader.start()  # a reader thread, so a chatty child never blocks on a full pipe
    try:
        _, stderr = proc.communicate(timeout=timeout_s)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        proc.kill()
        _, stderr = proc.communicate()
        code = ExitCode.TIMEOUT
        stderr += f"\ntimed out after {timeout_s:g} s"
    reader.join(timeout=5)
    text = "".join(chunks)
    return LocalRun(mode=mode, exit_code=code, results=parse_results(text), stderr=stderr.strip())
