"""Load a GPU MODE problem folder (task.yml + reference.py) exactly as the leaderboard ships it.

The folder is read unchanged: reference.py imports `task` (and sometimes `utils`) from its own folder,
so the folder and its parent go on sys.path while it is imported. A malformed folder raises
GpuModeError with one line naming the file and the cause.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import yaml

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS_DIR = ROOT / "problems" / "gpumode"
DEFAULT_GPUS = ("B200", "H100", "A100", "L4")
RANKINGS = ("last", "mean", "geom")
REFERENCE_FUNCTIONS = ("generate_input", "ref_kernel", "check_implementation")


class GpuModeError(Exception):
    """A malformed problem folder or submission; the message is one line naming the file."""


@dataclass(frozen=True)
class GpuModeProblem:
    name: str
    path: Path
    tests: list[dict] = field(default_factory=list)
    benchmarks: list[dict] = field(default_factory=list)
    ranking_by: str = "last"
    lang: str = "py"
    gpus: tuple[str, ...] = DEFAULT_GPUS
    timeouts: dict = field(default_factory=dict)

    @property
    def task_yml(self) -> Path:
        return self.path / "task.yml"

    @property
    def reference_py(self) -> Path:
        return self.path / "reference.py"


def resolve(name_or_path: str | Path) -> Path:
    """A folder path, or the name of a folder under problems/gpumode/."""
    path = Path(name_or_path)
    if path.is_dir():
        return path.resolve()
    candidate = PROBLEMS_DIR / str(name_or_path)
    if candidate.is_dir():
        return candidate.resolve()
    raise GpuModeError(f"{name_or_path}: no such GPU MODE problem folder (nor under {PROBLEMS_DIR})")


def _case_list(task_yml: Path, task: dict, key: str) -> list[dict]:
    cases = task.get(key, [])
    if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
        raise GpuModeError(f"{task_yml}: '{key}' must be a list of keyword dicts")
    return [dict(c) for c in cases]


def load(name_or_path: str | Path) -> GpuModeProblem:
    """Parse task.yml and check reference.py exists; reference.py is imported later, in the evaluator."""
    folder = resolve(name_or_path)
    task_yml = folder / "task.yml"
    if not task_yml.is_file():
        raise GpuModeError(f"{task_yml}: missing (a GPU MODE problem folder needs task.yml)")
    if not (folder / "reference.py").is_file():
        raise GpuModeError(f"{folder / 'reference.py'}: missing (a GPU MODE problem folder needs reference.py)")
    try:
        task = yaml.safe_load(task_yml.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise GpuModeError(f"{task_yml}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(task, dict):
        raise GpuModeError(f"{task_yml}: top level must be a mapping")
    ranking = task.get("ranking_by", "last")
    if ranking not in RANKINGS:
        raise GpuModeError(f"{task_yml}: ranking_by must be one of {', '.join(RANKINGS)}, not {ranking!r}")
    timeouts = {k: task[k] for k in ("test_timeout", "benchmark_timeout", "ranked_timeout") if k in task}
    return GpuModeProblem(name=folder.name, path=folder, tests=_case_list(task_yml, task, "tests"),
                          benchmarks=_case_list(task_yml, task, "benchmarks"), ranking_by=ranking,
                          lang=str(task.get("lang", "py")), gpus=tuple(task.get("gpus", DEFAULT_GPUS)),
                          timeouts=timeouts)


def _import_file(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def import_reference(problem: GpuModeProblem) -> ModuleType:
    """Import reference.py with its folder first on sys.path, as the runner's working directory would be.

    A stale `task` / `utils` module from another folder is dropped first so each folder sees its own.
    """
    for stale in ("task", "utils", "reference"):
        sys.modules.pop(stale, None)
    for entry in (str(problem.path.parent), str(problem.path)):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    try:
        module = _import_file("reference", problem.reference_py)
    except Exception as exc:  # noqa: BLE001 - any import failure of a foreign file becomes one line
        raise GpuModeError(f"{problem.reference_py}: import failed ({type(exc).__name__}: {exc})") from None
    missing = [f for f in REFERENCE_FUNCTIONS if not callable(getattr(module, f, None))]
    if missing:
        raise GpuModeError(f"{problem.reference_py}: missing {', '.join(missing)}")
    return module


def import_submission(path: Path) -> ModuleType:
    """Import a submission file as module `submission`; it must define custom_kernel."""
    try:
        module = _import_file("submission", Path(path))
    except Exception as exc:  # noqa: BLE001
        raise GpuModeError(f"{path}: import failed ({type(exc).__name__}: {exc})") from None
    if not callable(getattr(module, "custom_kernel", None)):
        raise GpuModeError(f"{path}: defines no custom_kernel(data)")
    return module


def list_problems(root: Path = PROBLEMS_DIR) -> list[str]:
    return sorted(p.name for p in root.iterdir() if (p / "task.yml").is_file()) if root.is_dir() else []
