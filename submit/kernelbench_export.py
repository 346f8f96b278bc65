"""Export solutions as KernelBench candidates: one ModelNew file per problem, in their naming, with a
header saying where it came from.

KernelBench imports a candidate from one file with nothing of this repo around it, so the file must be
self-contained: it may import only torch, triton, numpy and the standard library, and must define
ModelNew. That is checked from the source before anything is written.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.records import Measurement
from harness.spec import ProblemRef, SolutionRef, file_hash
from submit.kernelbench_layout import export_path

ALLOWED_IMPORTS = set(sys.stdlib_module_names) | {"torch", "triton", "numpy"}


class ExportError(ValueError):
    """A solution that cannot be exported, or an ambiguous choice; the message names the file."""


@dataclass(frozen=True)
class Choice:
    problem: ProblemRef
    solution: SolutionRef
    why: str  # "named", "the only solution", "fastest correct in run ...": printed in the header


def check_self_contained(path: Path) -> None:
    """Raise ExportError naming the line of the first import KernelBench could not satisfy."""
    path = Path(path)
    try:
        tree = ast.parse(path.read_text(), filename=str(path))
    except SyntaxError as exc:
        raise ExportError(f"{path}: syntax error at line {exc.lineno}") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            raise ExportError(f"{path} line {node.lineno}: relative import; KernelBench loads one file")
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
            [node.module] if isinstance(node, ast.ImportFrom) else [])
        for name in names:
            if name.split(".")[0] not in ALLOWED_IMPORTS:
                raise ExportError(f"{path} line {node.lineno}: imports {name}, which KernelBench's "
                                  "environment lacks (only torch, triton, numpy and the standard library)")
    if not any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body):
        raise ExportError(f"{path}: defines no class ModelNew at module level")


def choose(problem: ProblemRef, solutions: list[SolutionRef], name: str | None = None,
           records: list[Measurement] | None = None, run_id: str | None = None) -> Choice:
    """The named solution; else the only one; else the fastest correct one recorded in `records`."""
    if name:
        for s in solutions:
            if s.name == name:
                return Choice(problem, s, f"named ({name})")
        known = ", ".join(s.name for s in solutions) or "none"
        raise ExportError(f"{problem.name}: no solution {name!r} (known: {known})")
    if len(solutions) == 1:
        return Choice(problem, solutions[0], "the only solution")
    by_name = {s.name: s for s in solutions}
    timed = [r for r in records or [] if r.problem == problem.name and r.kind == "solution" and r.correct
             and r.solution in by_name and (r.mean_us or r.median_us)]
    if not timed:
        raise ExportError(f"{problem.name}: {len(solutions)} solutions and none timed correct in "
                          f"{'run ' + run_id if run_id else 'any run given'}; name one with --solution "
                          "or pass --run")
    best = min(timed, key=lambda r: r.mean_us or r.median_us)
    us = best.mean_us or best.median_us
    return Choice(problem, by_name[best.solution],
                  f"fastest correct in run {run_id or best.run_id} on {best.gpu}, {us / 1000:.4g} ms mean")


def header(choice: Choice, root: Path | None = None) -> str:
    source = Path(choice.solution.path).resolve()
    shown = source.relative_to(root) if root and source.is_relative_to(root) else source
    return (f"# KernelBench candidate for {choice.problem.name}.py, exported by kernelsuite "
            "(ksuite kernelbench export).\n"
            f"# Source: {shown} (sha256 {file_hash(source)}); chosen: {choice.why}.\n"
            "# Self-contained: imports only torch, triton, numpy and the standard library; defines ModelNew.\n")


def export(choices: list[Choice], out_dir: Path, naming: str = "problem", root: Path | None = None) -> list[Path]:
    """Check every choice first (nothing is written if one fails), then write them all."""
    for c in choices:
        check_self_contained(c.solution.path)
    written = []
    for c in choices:
        target = Path(out_dir) / export_path(c.problem, naming)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(header(c, root) + Path(c.solution.path).read_text())
        written.append(target)
    return written
