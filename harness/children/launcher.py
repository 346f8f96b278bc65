"""The one place that starts, follows and stops the harness's child processes.

Every child (timing workers, pairwise timing, the tuning session, CUDA prebuilds, offline compiles)
gets the same environment (child_env: the package on PYTHONPATH, cache folders from harness/cache_dirs.py),
runs in its own session (a crash or a Ctrl-C there never takes the parent down, and a kill reaches the
whole process group: a candidate's own children too), writes its stderr to a file whose tail explains a
crash (describe_exit), and stops when its parent goes (exit_with_parent, called in the child).
Nothing here imports torch: the parent stays light.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from harness.cache_dirs import with_cache_dirs
from harness.spec import Options

PACKAGE_ROOT = Path(__file__).resolve().parents[2]
POLL_S = 0.1
TAIL_CHARS = 4000


def child_env(options: Options) -> dict:
    """The environment of every child the harness starts (workers, pairwise, tuning session, CUDA builds)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(PACKAGE_ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    env["PYTHONUNBUFFERED"] = "1"
    if options.interpret:
        env["TRITON_INTERPRET"] = "1"
    with_cache_dirs(env)  # CUDA C++ builds, inductor's and triton's artifacts persist, under KSUITE_CACHE_DIR
    env.update(options.extra_env)
    return env


def describe_exit(code: int, stderr_tail: str) -> str:
    """One line for a child that exited with `code`: the signal that killed it, or its last stderr line."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"crashed: killed by {name}" + (" (out of memory?)" if name == "SIGKILL" else "")
    last = stderr_tail.strip().splitlines()[-1] if stderr_tail.strip() else "no message"
    return f"crashed: child exited with code {code}: {last}"


class EventFollower:
    """Reads a child's JSON-lines event file as it grows."""

    def __init__(self, path: Path):
        self.path, self.offset, self.partial = path, 0, ""

    def new_events(self) -> list[dict]:
        if not self.path.exists():
            return []
        with open(self.path) as f:
            f.seek(self.offset)
            chunk = f.read()
            self.offset = f.tell()
        text = self.partial + chunk
        lines = text.split("\n")
        self.partial = lines.pop()
        return [json.loads(line) for line in lines if line.strip()]


class Child:
    """One `python -m MODULE ARGS...` in its own session; stdout and stderr go to `log` (a file)."""

    def __init__(self, module: str, args: list[str], env: dict, log: Path, stdin: bool = False,
                 cwd: Path | None = None):
        self.log = Path(log)
        with open(self.log, "a") as out:
            self.process = subprocess.Popen([sys.executable, "-m", module, *args], env=env, cwd=cwd,
                                            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                            stdout=out, stderr=out, text=True, start_new_session=True)
        self.pid = self.process.pid

    def poll(self) -> int | None:
        return self.process.poll()

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, line: str) -> bool:
        """One line to its stdin; False when it is gone (a crash between requests)."""
        try:
            self.process.stdin.write(line.rstrip("\n") + "\n")
            self.process.stdin.flush()
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def log_size(self) -> int:
        try:
            return self.log.stat().st_size
        except OSError:
            return 0

    def tail(self, since: int = 0) -> str:
        """The last TAIL_CHARS of its output written after byte `since`."""
        try:
            with open(self.log, "rb") as f:
                f.seek(max(since, self.log_size() - TAIL_CHARS))
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def exit_line(self, since: int = 0) -> str:
        """describe_exit of its exit, with its output after byte `since` (a warm worker's current job)."""
        if self.process.returncode is None:
            return "crashed: the child stopped answering"
        return describe_exit(self.process.returncode, self.tail(since))

    def stop(self) -> None:
        """Kill its whole process group (the candidate's own children too) and reap it."""
        if self.process.poll() is None:
            _kill_group(self.process)
        self.process.wait()
        if self.process.stdin:
            try:
                self.process.stdin.close()
            except OSError:
                pass


@dataclass(frozen=True)
class Finished:
    returncode: int | None  # None when it timed out (and was killed)
    stdout: str
    stderr: str

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def run_to_end(module: str, args: list[str], env: dict, timeout_s: float, cwd: Path | None = None) -> Finished:
    """`python -m MODULE ARGS...` in its own session, its output captured; past timeout_s its group is
    killed (returncode None). For one-shot children: CUDA prebuilds, offline compiles."""
    process = subprocess.Popen([sys.executable, "-m", module, *args], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout_s)
        return Finished(process.returncode, out, err)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        out, err = process.communicate()
        return Finished(None, out, err)
    except BaseException:  # Ctrl-C: the child is in its own session, so end it here
        _kill_group(process)
        process.wait()
        raise


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def exit_with_parent(poll_s: float = 0.5) -> None:
    """Called in a child: it runs in its own session (a crash must not take the parent down), so Ctrl-C
    never reaches it; when the parent goes (interrupted, killed), stop too rather than run on as an orphan."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os._exit(130)
    threading.Thread(target=watch, name="ksuite-exit-with-parent", daemon=True).start()
