"""Finds problems and solutions on disk: our problems/ and solutions/, KernelBench trees, bare files."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from harness.spec import ProblemRef, SolutionRef

ROOT = Path(__file__).resolve().parent.parent
PROBLEMS_DIR = ROOT / "problems"
SOLUTIONS_DIR = ROOT / "solutions"
KERNELBENCH_FILE = re.compile(r"^(\d+)_(.+)\.py$")
EXTRACTED = "extracted"  # problems/extracted/<model>/<problem>__<shape>.py, written by `ksuite extract`

SUITES = {
    "default": None,  # every problem in problems/
    "memory": ("rmsnorm", "layernorm", "softmax", "cross_entropy", "reduce_rows", "rotary", "swiglu_act",
               "vectorsum_v2"),
    "compute": ("matmul", "fused_mlp", "attention_causal"),
    "quick": ("rmsnorm", "softmax", "vectorsum_v2"),
}


class RegistryError(Exception):
    """A name or path that does not resolve; the message says what was looked for."""


@dataclass(frozen=True)
class Registry:
    problems_dir: Path = PROBLEMS_DIR
    solutions_dir: Path = SOLUTIONS_DIR
    kernelbench_dir: Path | None = None

    def problems(self, suite: str = "default") -> list[ProblemRef]:
        if self.kernelbench_dir is not None:
            return kernelbench_problems(self.kernelbench_dir)
        if suite not in SUITES:
            raise RegistryError(f"unknown suite {suite!r}; known: {', '.join(SUITES)}")
        found = {p.stem: ProblemRef(p.stem, p) for p in sorted(self.problems_dir.glob("*.py"))
                 if not p.name.startswith("_")}
        names = SUITES[suite] or tuple(found)
        missing = [n for n in names if n not in found]
        if missing:
            raise RegistryError(f"suite {suite!r} names problems not in {self.problems_dir}: {missing}")
        return [found[n] for n in names]

    def extracted_problems(self) -> list[ProblemRef]:
        """Problems `ksuite extract` wrote from a model's profile: problems/extracted/<model>/*.py, named
        `extracted/<model>/<file stem>`. Not in any suite: they are run by name."""
        folder = self.problems_dir / EXTRACTED
        return [ProblemRef(f"{EXTRACTED}/{p.parent.name}/{p.stem}", p) for p in sorted(folder.glob("*/*.py"))
                if not p.name.startswith("_")]

    def problem(self, name_or_path: str) -> ProblemRef:
        """A registry name (`rmsnorm`, `level1/19_ReLU`, `extracted/tiny/rmsnorm__32x64_fp32`) or a path to
        any problem file."""
        path = Path(name_or_path)
        if path.suffix == ".py" and path.is_file():
            return self._problem_from_path(path)
        if name_or_path.startswith(f"{EXTRACTED}/"):
            found = [ref for ref in self.extracted_problems() if ref.name == name_or_path]
            if found:
                return found[0]
        for ref in self.problems() + (kernelbench_problems(self.kernelbench_dir) if self.kernelbench_dir else []):
            if ref.name == name_or_path:
                return ref
        if path.suffix == ".py":
            raise RegistryError(f"{path}: no such problem file")
        raise RegistryError(f"no problem named {name_or_path!r} in {self.problems_dir}"
                            + (f" or {self.kernelbench_dir}" if self.kernelbench_dir else ""))

    def _problem_from_path(self, path: Path) -> ProblemRef:
        """A file under problems/extracted/<model>/ keeps its extracted name (so its op's solutions apply)."""
        if path.resolve().parent.parent == (self.problems_dir / EXTRACTED).resolve():
            return ProblemRef(f"{EXTRACTED}/{path.parent.name}/{path.stem}", path)
        return _problem_from_path(path)

    def solutions(self, problem: ProblemRef) -> list[SolutionRef]:
        """solutions/<problem>/*.py; a KernelBench problem (`level1/19_ReLU`) also finds
        solutions/kernelbench/level1/19_ReLU/*.py, where this repo keeps its KernelBench candidates; an
        extracted problem (`extracted/<model>/rmsnorm__8192x4096_bf16`) also finds its op's solutions/rmsnorm/."""
        folders = [self.solutions_dir / problem.name]
        if problem.level is not None:
            folders.append(self.solutions_dir / "kernelbench" / problem.name)
        if problem.name.startswith(f"{EXTRACTED}/"):
            folders.append(self.solutions_dir / extracted_op(problem.name))
        return [SolutionRef(p.stem, p) for folder in folders for p in sorted(folder.glob("*.py"))
                if not p.name.startswith("_")]

    def solution(self, problem: ProblemRef, name_or_path: str) -> SolutionRef:
        path = Path(name_or_path)
        if path.suffix == ".py" and path.is_file():
            return SolutionRef(path.stem, path)
        for ref in self.solutions(problem):
            if ref.name == name_or_path:
                return ref
        if path.suffix == ".py":
            raise RegistryError(f"{path}: no such solution file")
        known = ", ".join(s.name for s in self.solutions(problem)) or "none"
        raise RegistryError(f"no solution {name_or_path!r} for {problem.name} (known: {known})")


def extracted_op(name: str) -> str:
    """`extracted/llama3-8b/rmsnorm__8192x4096_bf16` -> `rmsnorm`, the registry problem it came from."""
    return name.rsplit("/", 1)[-1].split("__", 1)[0]


def _problem_from_path(path: Path) -> ProblemRef:
    match = KERNELBENCH_FILE.match(path.name)
    level = re.match(r"level(\d+)$", path.parent.name)
    if match and level:
        return ProblemRef(f"{path.parent.name}/{path.stem}", path, int(level.group(1)))
    return ProblemRef(path.stem, path)


def kernelbench_problems(root: Path) -> list[ProblemRef]:
    """An unmodified KernelBench checkout: level<N>/<id>_<Name>.py, ordered by level then id."""
    root = Path(root)
    if (root / "KernelBench").is_dir():
        root = root / "KernelBench"
    if not root.is_dir():
        raise RegistryError(f"{root}: not a folder")
    found = []
    for level_dir in sorted(root.glob("level*")):
        level = re.match(r"level(\d+)$", level_dir.name)
        if not level:
            continue
        for path in level_dir.glob("*.py"):
            match = KERNELBENCH_FILE.match(path.name)
            if match:
                found.append((int(level.group(1)), int(match.group(1)), path))
    if not found:
        raise RegistryError(f"{root}: no level<N>/<id>_<Name>.py files (is this a KernelBench tree?)")
    return [ProblemRef(f"level{lv}/{p.stem}", p, lv) for lv, _, p in sorted(found)]


def find_problem(name_or_path: str) -> tuple[Registry, ProblemRef]:
    """A problem of this repository by name or path, with the registry that knows its solutions: ours
    first, then the repository's own KernelBench tree (`level1/19_ReLU`)."""
    registries = (Registry(), Registry(kernelbench_dir=PROBLEMS_DIR / "kernelbench"))
    for registry in registries:
        try:
            return registry, registry.problem(name_or_path)
        except RegistryError as exc:
            first = exc
    raise first
