"""Ctrl-C during `ksuite bench`: finished records stay on disk, the child process goes, and one line says
how to resume; the exit code is 130 (the shell's code for SIGINT)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, SCALE_ROWS, candidate

from suite.results_store import RunFile

LAUNCH = """
import faulthandler, signal
faulthandler.register(signal.SIGUSR1, all_threads=True)  # the test asks for every thread's stack if it hangs
# Ctrl-C as a terminal delivers it: a test run launched in the background (`make test &`) passes SIGINT on
# ignored, and Python then never raises KeyboardInterrupt
signal.signal(signal.SIGINT, signal.default_int_handler)
import sys
from pathlib import Path
sys.path.insert(0, {tests!r})
import pytest
from conftest import redirect_results
redirect_results(pytest.MonkeyPatch(), Path({results!r}))
from suite.cli import main
sys.argv = ["ksuite"] + {args!r}
main()
"""


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads child pids from Linux /proc")
def test_ctrl_c_keeps_records_kills_the_child_and_says_how_to_resume(tmp_path):
    results = tmp_path / "results"
    args = ["bench", str(SCALE_ROWS), "--solution", str(candidate("honest_triton")), "--solution",
            str(candidate("hangs")), "--no-baselines", "--timeout", "120"]
    code = LAUNCH.format(tests=str(ROOT / "tests"), results=str(results), args=args)
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "TRITON_INTERPRET": "1"})
    try:
        run_file = _wait_for_records(results, proc, count=2)  # honest_triton's two, then hangs is running
        time.sleep(3)  # the next child starts and sits in the hang
        workers = children(proc.pid)
        assert workers, "no child process is running"
        proc.send_signal(signal.SIGINT)
        # generous: on a loaded CI machine the exit took over 30 s once; a parent that waited for the hung
        # child (its 120 s timeout) would still fail here
        try:
            out, err = proc.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGUSR1)
            time.sleep(2)
            tree = subprocess.run(["ps", "-eo", "pid,ppid,pgid,stat,etime,args"], capture_output=True, text=True).stdout
            proc.kill()
            out, err = proc.communicate()
            raise AssertionError(f"no exit 90 s after Ctrl-C; its threads:\n{err[-8000:]}\n"
                                 f"processes:\n{tree[-4000:]}") from None
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, (out, err)
    lines = [line for line in err.splitlines() if "resume with" in line]
    assert len(lines) == 1 and lines[0].endswith(f"ksuite bench --resume {run_file.stem}"), err
    assert "Traceback" not in err
    records = RunFile(run_file).read()
    assert [r.solution for r in records] == ["honest_triton", "honest_triton"] and all(r.correct for r in records)
    deadline = time.monotonic() + 10
    while any(alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(alive(w) for w in workers), "the child outlived the interrupted parent"


def _wait_for_records(results: Path, proc, count: int, timeout: float = 90) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        files = list(results.glob("*/*.jsonl"))
        if files and len(files[0].read_text().splitlines()) >= count:
            return files[0]
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    raise AssertionError("no records appeared")
