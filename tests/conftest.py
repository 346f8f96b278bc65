"""Shared paths and helpers. Tests run on a CPU-only machine through Triton's interpreter."""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")  # before anything imports triton

import importlib.util  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import uuid  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SCALE_ROWS = FIXTURES / "problems" / "scale_rows.py"
CANDIDATES = FIXTURES / "candidates"
KERNELBENCH = FIXTURES / "kernelbench"
RELU_CANDIDATE = FIXTURES / "kernelbench_candidates" / "relu_triton.py"
PROBLEMS_DIR = ROOT / "problems"
SOLUTIONS_DIR = ROOT / "solutions"

# The fixture problem's plan on CPU: every small shape x every declared dtype gets one record.
SCALE_ROWS_SHAPES = [{"batch_size": 8, "dim": 32}, {"batch_size": 5, "dim": 48}]
SCALE_ROWS_DTYPES = ["float32", "float16"]


def candidate(name: str) -> Path:
    return CANDIDATES / f"{name}.py"


def load_script(name: str):
    """scripts/<name>.py as a module, for its functions (the scripts are not a package)."""
    spec = importlib.util.spec_from_file_location(f"ksuite_script_{name}", ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # a dataclass under `from __future__ import annotations` looks its module up there
    spec.loader.exec_module(module)
    return module


def syntax_error_candidate(folder: Path) -> Path:
    """The syntax-error fixture is kept as .txt (so `make lint` stays clean); copy it to a .py file."""
    path = Path(folder) / "syntax_error.py"
    shutil.copy(CANDIDATES / "syntax_error.txt", path)
    return path


def load_family(monkeypatch: pytest.MonkeyPatch, problem: str, module_name: str, **tunables):
    """A fresh import of solutions/<problem>/triton_family.py under the interpreter, its dispatch tables emptied and
    `tunables` set, so every shape runs that one launch."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # before the kernel is decorated: no GPU here
    spec = importlib.util.spec_from_file_location(module_name, SOLUTIONS_DIR / problem / "triton_family.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.DISPATCH.clear()
    getattr(module, "DISPATCH_BY_GPU", {}).clear()
    module.TUNABLES.update(tunables)
    return module


def sm90_ptx(folder: Path, problem: str, shape: dict, tunables: dict, dtype: str = "bfloat16") -> str:
    """The PTX of the one launch solutions/<problem>/triton_family.py makes at `shape`, compiled for sm_90 here
    without a GPU, its dispatch tables emptied and `tunables` set (a copy of the file in `folder`)."""
    from harness.machine_code.offline_compile import compile_at_shapes

    path = Path(folder) / f"{problem}_{uuid.uuid4().hex[:8]}.py"
    path.write_text((SOLUTIONS_DIR / problem / "triton_family.py").read_text()
                    + f"\nDISPATCH = {{}}\nDISPATCH_BY_GPU = {{}}\nTUNABLES = {{**TUNABLES, **{tunables!r}}}\n")
    (launch,) = compile_at_shapes(PROBLEMS_DIR / f"{problem}.py", path, [shape], dtype, 90)[0]
    return launch.ptx


def together(*calls):
    """Each call's answer, in order, the calls started at once: a sm_90 compile is a child process that spends most
    of its time importing torch, so two of them take the time of one on two cores. Threads only wait on children
    here; none runs Triton's interpreter."""
    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return [future.result() for future in [pool.submit(call) for call in calls]]


def global_accesses(ptx: str) -> list[str]:
    """The PTX's loads from and stores to global memory, a line each."""
    return [line.strip() for line in ptx.splitlines() if "ld.global" in line or "st.global" in line]


def problem_files() -> list[Path]:
    return sorted(p for p in PROBLEMS_DIR.glob("*.py") if not p.name.startswith("_"))


def redirect_results(mp: pytest.MonkeyPatch, root: Path) -> Path:
    """Point every results/ default of suite.results_store at `root`.

    RESULTS_DIR alone is not enough: RunFile.create, find_run and the calibration helpers bind it as a
    default argument at import time, so those defaults are patched too.
    """
    from suite import results_store

    original = results_store.RESULTS_DIR
    mp.setattr(results_store, "RESULTS_DIR", root)
    functions = [results_store.RunFile.create.__func__, results_store.find_run, results_store.calibration_path,
                 results_store.load_calibration, results_store.save_calibration]
    for fn in functions:
        if fn.__defaults__:
            mp.setattr(fn, "__defaults__", tuple(root if d == original else d for d in fn.__defaults__))
    return root


@pytest.fixture
def results_root(tmp_path, monkeypatch):
    """A tmp results/ folder for the duration of one test: tests never write into the repo's results/,
    nor into the user's cache (KSUITE_CACHE_DIR: the optimiser's candidate files, compile caches)."""
    monkeypatch.setenv("KSUITE_CACHE_DIR", str(tmp_path / "cache"))
    return redirect_results(monkeypatch, tmp_path / "results")
