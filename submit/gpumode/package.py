"""Build ONE self-contained GPU MODE submission file from a solution file.

Two kinds of solution are accepted:
- a file that already defines `custom_kernel(data)`: kept as is, with the POPCORN header put on top;
- a KernelBench-style file defining `class ModelNew`: its whole source is inlined and an entry point is
  appended that runs ModelNew on the input, writes the result into the output buffer the runner hands
  over (it arrives uninitialised, so every element is overwritten) and returns that buffer, viewed in
  the result's shape (the leaderboard's check compares shapes with the reference's).
Nothing here depends on CUDA: the file runs wherever the kernel runs, the Triton interpreter included.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

from submit.gpumode.problem import ROOT, GpuModeError

HEADER_PREFIXES = ("#!POPCORN", "//!POPCORN")

ENTRY_POINT = '''

# --- GPU MODE entry point, added by `ksuite submit gpumode` ---
_INIT_INPUTS = {init_inputs!r}
_MODEL = None


def custom_kernel(data):
    """Run ModelNew on the input and write its result into the (uninitialised) output buffer."""
    global _MODEL
    input, output = data
    if _MODEL is None:
        _MODEL = ModelNew(*_INIT_INPUTS)
    result = _MODEL(input)
    if result.numel() != output.numel():
        raise ValueError(f"result has {{result.numel()}} elements, the output buffer {{output.numel()}}")
    output.view(-1).copy_(result.reshape(-1))
    return output.view(result.shape)
'''


def header(leaderboard: str, gpu: str) -> str:
    return f"#!POPCORN leaderboard {leaderboard}\n#!POPCORN gpu {gpu}\n"


def strip_header(text: str) -> str:
    """Drop existing POPCORN lines so the target named now is the only one."""
    return "".join(line for line in text.splitlines(keepends=True) if not line.lstrip().startswith(HEADER_PREFIXES))


def top_level_names(text: str, path: Path) -> set[str]:
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as exc:
        raise GpuModeError(f"{path}: syntax error at line {exc.lineno} ({exc.msg})") from None
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def init_inputs(problem_name: str) -> list:
    """get_init_inputs() of our KernelBench-form problem of the same name, when it exists (else none)."""
    path = ROOT / "problems" / f"{problem_name}.py"
    if not path.is_file():
        return []
    spec = importlib.util.spec_from_file_location(f"_ksuite_problem_{problem_name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    values = list(module.get_init_inputs()) if hasattr(module, "get_init_inputs") else []
    if not all(isinstance(v, (int, float, bool, str)) for v in values):
        raise GpuModeError(f"{path}: get_init_inputs() must return plain numbers to be inlined")
    return values


def package(solution: Path, leaderboard: str, gpu: str, problem_name: str | None = None) -> str:
    """The submission text: header, the solution's source, and an entry point when it needs one."""
    solution = Path(solution)
    if not solution.is_file():
        raise GpuModeError(f"{solution}: no such solution file")
    text = strip_header(solution.read_text(encoding="utf-8"))
    names = top_level_names(text, solution)
    if "custom_kernel" in names:
        body = text
    elif "ModelNew" in names:
        body = text.rstrip("\n") + "\n" + ENTRY_POINT.format(init_inputs=init_inputs(problem_name or leaderboard))
    else:
        raise GpuModeError(f"{solution}: defines neither custom_kernel(data) nor class ModelNew")
    return header(leaderboard, gpu) + body


def write(text: str, out: Path) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return out
