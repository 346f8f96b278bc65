"""The leaderboard server's rules, checked before sending, with one clear refusal line per broken rule.

The server answers a broken rule late and vaguely (the word "stream" gives an HTTP 500), so every rule
it is known to apply is checked here first. `python submission.py` is the server's compile step, so the
file must also run as a script without error, beside the problem's task.py / reference.py.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tempfile
from pathlib import Path

MAX_BYTES = 1_000_000
EXTENSIONS = (".py", ".cu", ".cuh", ".cpp")
ALLOWED_PACKAGES = {"torch", "triton", "numpy", "task", "reference", "utils"}
HEADER = re.compile(r"^\s*(?:#|//)!POPCORN\s+(\S+)\s+(\S+)\s*$")


def headers(text: str) -> dict:
    """The POPCORN header lines found at the very top (before the first other non-blank line)."""
    found = {}
    for line in text.splitlines():
        match = HEADER.match(line)
        if match:
            found[match.group(1).lower()] = match.group(2)
        elif line.strip():
            break
    return found


def imported_modules(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def check_python(text: str) -> list[str]:
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        return [f"syntax error at line {exc.lineno}: {exc.msg}"]
    foreign = sorted(m for m in imported_modules(tree) if m not in ALLOWED_PACKAGES | set(sys.stdlib_module_names))
    if foreign:
        return [f"imports {', '.join(foreign)}: the runner has only torch, triton, numpy and the standard library"]
    return []


def check_text(data: bytes, filename: str, leaderboard: str, gpus: tuple[str, ...]) -> list[str]:
    """Every static rule; an empty list means the file may be sent."""
    refusals = []
    if len(data) > MAX_BYTES:
        refusals.append(f"{len(data)} bytes: the server accepts at most {MAX_BYTES}")
    if not filename.endswith(EXTENSIONS):
        refusals.append(f"{filename}: the extension must be one of {', '.join(EXTENSIONS)}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return refusals + [f"not UTF-8 (byte {exc.start})"]
    for number, line in enumerate(text.splitlines(), 1):
        if "stream" in line.lower():
            refusals.append(f"line {number}: the word 'stream' is forbidden anywhere (comments too)")
            break
    found = headers(text)
    if found.get("leaderboard") != leaderboard:
        refusals.append(f"header leaderboard {found.get('leaderboard')!r} must be {leaderboard!r} "
                        f"(`#!POPCORN leaderboard {leaderboard}` on the first lines)")
    gpu = found.get("gpu") or found.get("gpus")
    if gpu is not None and gpu not in gpus:
        refusals.append(f"header GPU {gpu!r} is not one of this leaderboard's GPUs: {', '.join(gpus)}")
    if filename.endswith(".py"):
        refusals += check_python(text)
    return refusals


def check_gpu(gpu: str, gpus: tuple[str, ...]) -> list[str]:
    return [] if gpu in gpus else [f"GPU {gpu!r} is not one of this leaderboard's GPUs: {', '.join(gpus)}"]


def check_runs_as_script(submission: Path, problem_dir: Path, timeout_s: float = 120.0) -> list[str]:
    """The compile step: `python submission.py` beside the problem's files must exit 0."""
    with tempfile.TemporaryDirectory(prefix="ksuite-lint-") as tmp:
        for item in Path(problem_dir).iterdir():
            if item.is_file() and item.suffix == ".py" and item.name != "submission.py":
                (Path(tmp) / item.name).write_bytes(item.read_bytes())
        target = Path(tmp) / "submission.py"
        target.write_bytes(Path(submission).read_bytes())
        try:
            proc = subprocess.run([sys.executable, "submission.py"], cwd=tmp, capture_output=True, text=True,
                                  timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return [f"`python submission.py` ran past {timeout_s:g} s (the server's compile step)"]
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return [f"`python submission.py` failed with exit code {proc.returncode}: {last}"]
    return []


def lint(submission: Path, leaderboard: str, gpu: str, gpus: tuple[str, ...], problem_dir: Path | None = None,
         run_script: bool = True) -> list[str]:
    """All rules for one file aimed at (leaderboard, gpu); the script run is skipped when a rule already broke."""
    path = Path(submission)
    refusals = check_gpu(gpu, gpus) + check_text(path.read_bytes(), path.name, leaderboard, gpus)
    header_gpu = headers(path.read_bytes().decode("utf-8", "replace")).get("gpu")
    if header_gpu is not None and header_gpu != gpu:
        refusals.append(f"header GPU {header_gpu!r} differs from the target GPU {gpu!r}")
    if not refusals and run_script and problem_dir is not None and path.suffix == ".py":
        refusals += check_runs_as_script(path, problem_dir)
    return refusals
