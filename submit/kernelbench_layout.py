"""KernelBench naming: which problems a run takes, which candidate file answers which problem, and the
names an export writes. Pure path logic, so `run`, `score` and `export` agree on one convention.

A problem is `level<L>/<id>_<Name>.py` in a KernelBench tree (theirs, or this repo's
problems/kernelbench); the id is the integer before the first underscore. A --solutions folder may hold
candidates in any of these forms (all are found, so a folder can mix them):

    level<L>/<id>_<Name>/<name>.py                  this repo's layout (solutions/kernelbench): several
                                                    candidates per problem, each named by its file
    level<L>/<id>_<Name>.py  or  <id>_<Name>.py     one ModelNew per problem, named after the folder
    level_<L>_problem_<id>_sample_<s>_kernel.py     KernelBench's generated samples (runs/<run_name>/),
                                                    named sample_<s>
"""

from __future__ import annotations

import re
from pathlib import Path

from harness.spec import ProblemRef, SolutionRef

PROBLEM_FILE = re.compile(r"^(\d+)_(.+)\.py$")
SAMPLE_FILE = re.compile(r"^level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py$")
LEVEL_DIR = re.compile(r"^level(\d+)$")
NAMINGS = ("problem", "runs")


class LayoutError(ValueError):
    """An id list or a selection that does not parse or matches nothing; the message says which."""


def parse_ids(text: str | None) -> set[int] | None:
    """'1,19,23-30' -> {1, 19, 23, ..., 30}; None or '' -> None (every problem)."""
    if not text:
        return None
    ids: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        match = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not match:
            raise LayoutError(f"--ids: {part!r} is not an id or a range like 23-30")
        low, high = int(match.group(1)), int(match.group(2) or match.group(1))
        if high < low:
            raise LayoutError(f"--ids: range {part!r} runs backwards")
        ids.update(range(low, high + 1))
    return ids


def problem_id(ref: ProblemRef) -> int:
    match = PROBLEM_FILE.match(Path(ref.path).name)
    if not match:
        raise LayoutError(f"{ref.path}: not a KernelBench file name (<id>_<Name>.py)")
    return int(match.group(1))


def select(problems: list[ProblemRef], level: int, ids: set[int] | None) -> list[ProblemRef]:
    """The problems of one level, optionally only these ids; an id that matches nothing is an error."""
    chosen = [p for p in problems if p.level == level and (ids is None or problem_id(p) in ids)]
    missing = sorted(ids - {problem_id(p) for p in chosen}) if ids else []
    if missing:
        raise LayoutError(f"no level{level} problem with id {', '.join(map(str, missing))}")
    if not chosen:
        raise LayoutError(f"no level{level} problems")
    return chosen


def candidates(solutions_dir: Path, ref: ProblemRef) -> list[SolutionRef]:
    """Every candidate file in `solutions_dir` answering `ref`, in the forms the module docstring lists."""
    solutions_dir = Path(solutions_dir)
    level, stem = f"level{ref.level}", Path(ref.path).stem
    found = [SolutionRef(p.stem, p) for p in sorted((solutions_dir / level / stem).glob("*.py"))
             if not p.name.startswith("_")]
    for flat in (solutions_dir / level / f"{stem}.py", solutions_dir / f"{stem}.py"):
        if flat.is_file():
            found.append(SolutionRef(solutions_dir.resolve().name, flat))
            break
    pattern = f"level_{ref.level}_problem_{problem_id(ref)}_sample_*_kernel.py"
    for path in sorted(solutions_dir.glob(pattern)):
        match = SAMPLE_FILE.match(path.name)
        if match:
            found.append(SolutionRef(f"sample_{match.group(3)}", path))
    return found


def export_path(ref: ProblemRef, naming: str = "problem") -> Path:
    """Where an exported candidate goes, relative to the output folder."""
    if naming == "runs":
        return Path(f"level_{ref.level}_problem_{problem_id(ref)}_sample_0_kernel.py")
    return Path(f"level{ref.level}") / Path(ref.path).name


def record_key(problem_name: str) -> tuple[str, str] | None:
    """A record's problem name `level1/19_ReLU` -> ('level1', '19_ReLU.py'), KernelBench's JSON keys;
    None for problems that are not KernelBench files."""
    parts = problem_name.split("/")
    if len(parts) == 2 and LEVEL_DIR.match(parts[0]) and PROBLEM_FILE.match(parts[1] + ".py"):
        return parts[0], parts[1] + ".py"
    return None


def sort_key(key: tuple[str, str]) -> tuple[int, int]:
    """Level, then numeric id: 2_X after 1_Y, 10_Z after 9_W."""
    return int(LEVEL_DIR.match(key[0]).group(1)), int(PROBLEM_FILE.match(key[1]).group(1))
