"""Import problem and candidate files by path and turn META into a checked ProblemMeta."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import torch

from harness.derived_shapes import derived_shapes
from harness.meta_schema import DTYPE_NAMES, EXTRA_KEYS, meta_error

DEFAULT_TOLERANCES = {  # KernelBench's (atol, rtol), for problems without META
    "float32": (1e-4, 1e-4),
    "float16": (1e-2, 1e-2),
    "bfloat16": (1e-2, 1e-2),
    "float64": (1e-8, 1e-8),
}
DTYPES = {name: getattr(torch, name) for name in DTYPE_NAMES}


class LoadError(Exception):
    """A problem or candidate file that cannot be used; the message names the file and the cause."""


def import_file(path: Path, module_name: str) -> ModuleType:
    """Import a Python file as a module (Triton's jit needs real files, so never exec strings)."""
    path = Path(path)
    if not path.is_file():
        raise LoadError(f"{path}: no such file")
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise LoadError(f"{path}: syntax error at line {exc.lineno}: {exc.msg}") from None
    except Exception as exc:  # noqa: BLE001 - any import failure is the file's fault
        raise LoadError(f"{path}: import failed: {type(exc).__name__}: {exc}") from None
    return module


@dataclass(frozen=True)
class ProblemMeta:
    """META with defaults filled in; a foreign KernelBench file gets its own shape and dtype, and smaller odd
    sizes of its constants as edge shapes (harness/derived_shapes.py)."""

    dtypes: tuple[str, ...]
    small_shapes: tuple[dict, ...]
    shapes: tuple[dict, ...]
    large_shapes: tuple[dict, ...]
    edge_shapes: tuple[dict, ...]
    tolerances: dict
    bytes_fn: Callable | None
    flops_fn: Callable | None
    bound: str = "memory"
    stability: tuple[str, ...] = ()
    strided_inputs: bool = False
    deterministic: bool | float = True
    inplace: bool = False
    goal_pct_sol: float | None = None  # the % of speed of light a good kernel reaches at the large shapes
    workload_fn: Callable | None = None  # (model config, tokens) -> shape(s): harness/workloads.py
    workload_extra: tuple[dict, ...] = ()  # shapes added to the workload as they are (benchmark sizes)
    recommended: str | None = None  # the solution users should take; goals on held-out shapes judge it alone
    heldout_goals: dict = field(default_factory=dict)  # won_share / geomean / floor over held-out shapes (goals)
    goals: dict = field(default_factory=dict)  # floor / geomean at a run's named shapes (suite/goals.py)
    reference_split_dim: int | None = None  # float64 reference callable in slices of it: harness/sliced_reference.py
    reference_whole_inputs: tuple[int, ...] = ()  # inputs each slice gets whole (rotary's cos and sin tables)
    extra: dict = field(default_factory=dict)

    def tolerance(self, dtype: str) -> tuple[float, float]:
        return tuple(self.tolerances.get(dtype, DEFAULT_TOLERANCES[dtype]))

    def workload(self):
        """The workload shapes and their tuning / held-out split (harness/workloads.py)."""
        from harness.workloads import generate

        return generate(self.workload_fn, list(self.workload_extra), self.bytes_fn)

    def set_of(self, shape: dict, selected: str) -> str:
        """Which set a timed shape came from, for its record: the workload set it was drawn from
        (tuning | heldout), else large | mid | small | edge by META's lists (mid: META "shapes")."""
        if selected in ("workload", "tuning", "heldout"):
            return self.workload().set_of(shape) or "custom"
        key = sorted(shape.items())
        for name, shapes in (("large", self.large_shapes), ("mid", self.shapes), ("small", self.small_shapes),
                             ("edge", self.edge_shapes)):
            if any(sorted(s.items()) == key for s in shapes):
                return name
        return "custom"

    def sweep(self, which: str) -> list[dict]:
        """Shapes to check and time: small (CPU), large (META large_shapes), all, or a workload set (workload,
        tuning, heldout; a problem without a workload has none)."""
        if which in ("workload", "tuning", "heldout"):
            return self.workload().select(which)
        if which == "small":
            return list(self.small_shapes)
        if which == "large":
            return list(self.large_shapes or self.shapes or self.small_shapes)
        return unique_shapes(list(self.small_shapes) + list(self.shapes) + list(self.large_shapes))


def unique_shapes(shapes: list[dict]) -> list[dict]:
    seen, out = set(), []
    for s in shapes:
        key = tuple(sorted(s.items()))
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out


@dataclass
class LoadedProblem:
    """A problem module plus its normalised META; `inputs_for` applies a shape and draws inputs."""

    module: ModuleType
    meta: ProblemMeta
    path: Path
    defaults: dict = field(default_factory=dict)  # the file's own size constants, as loaded

    def apply_shape(self, shape: dict) -> None:
        """The file's own constants, overridden by `shape`: a constant a shape leaves out keeps the file's
        value, never the last shape's (an edge shape must not change what a later stage times)."""
        for name, value in {**self.defaults, **shape}.items():
            setattr(self.module, name, value)

    def init_inputs(self, shape: dict) -> list:
        self.apply_shape(shape)
        return list(self.module.get_init_inputs())

    def raw_inputs(self, shape: dict) -> list:
        self.apply_shape(shape)
        return list(self.module.get_inputs())

    @property
    def fused_class(self):
        return getattr(self.module, "ModelFused", None)

    @property
    def liger_class(self):
        """The op through Liger-Kernel (an optional baseline), where the problem names one."""
        return getattr(self.module, "ModelLiger", None)


def _own_shape(module: ModuleType) -> dict:
    """Module-level int constants: the size knobs of a KernelBench file."""
    return {k: v for k, v in vars(module).items()
            if not k.startswith("_") and isinstance(v, int) and not isinstance(v, bool)}


def _meta_from(module: ModuleType, path: Path) -> ProblemMeta:
    raw = getattr(module, "META", None)
    if raw is None:
        own = _own_shape(module)  # and smaller odd sizes of its constants, checked in the edge stage
        return ProblemMeta(dtypes=("float32",), small_shapes=(own,), shapes=(own,), large_shapes=(own,),
                           edge_shapes=derived_shapes(module, own), tolerances=dict(DEFAULT_TOLERANCES),
                           bytes_fn=None, flops_fn=None)
    own = _own_shape(module)
    error = meta_error(raw, path, own)  # harness/meta_schema.py: every key known, every value of its kind
    if error:
        raise LoadError(error)
    goal = raw.get("goal_pct_sol")
    small = tuple(raw.get("small_shapes") or [own])
    return ProblemMeta(
        dtypes=tuple(raw.get("dtypes", ["float32"])),
        small_shapes=small,
        shapes=tuple(raw.get("shapes", [])),
        large_shapes=tuple(raw.get("large_shapes", [])),
        edge_shapes=tuple(raw.get("edge_shapes", [])),
        tolerances={**DEFAULT_TOLERANCES, **{k: tuple(v) for k, v in raw.get("tolerances", {}).items()}},
        bytes_fn=raw.get("bytes"),
        flops_fn=raw.get("flops"),
        bound=raw.get("bound", "memory"),
        stability=tuple(raw.get("stability", [])),
        strided_inputs=bool(raw.get("strided_inputs", False)),
        deterministic=raw.get("deterministic", True),
        inplace=bool(raw.get("inplace", False)),
        goal_pct_sol=None if goal is None else float(goal),
        workload_fn=raw.get("workload"),
        workload_extra=tuple(raw.get("workload_extra", [])),
        recommended=raw.get("recommended"),
        heldout_goals=dict(raw.get("heldout_goals", {})),
        goals=dict(raw.get("goals", {})),
        reference_split_dim=raw.get("reference_split_dim"),
        reference_whole_inputs=tuple(raw.get("reference_whole_inputs", ())),
        extra={k: raw[k] for k in EXTRA_KEYS if k in raw},
    )


def load_problem(path: Path, module_name: str = "ksuite_problem") -> LoadedProblem:
    """Import a problem file and check it has what the harness needs."""
    module = import_file(path, module_name)
    for attr in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, attr):
            raise LoadError(f"{path}: problem file has no {attr}")
    for attr in ("get_inputs", "get_init_inputs"):
        if not callable(getattr(module, attr)):
            raise LoadError(f"{path}: problem file's {attr} is not a function")
    if not (isinstance(module.Model, type) and issubclass(module.Model, torch.nn.Module)):
        raise LoadError(f"{path}: Model is not a torch.nn.Module subclass")
    return LoadedProblem(module=module, meta=_meta_from(module, Path(path)), path=Path(path),
                         defaults=_own_shape(module))


def load_candidate_class(path: Path, module_name: str = "ksuite_candidate"):
    """Import a candidate file and return its ModelNew class."""
    module = import_file(path, module_name)
    cls = getattr(module, "ModelNew", None)
    if cls is None:
        raise LoadError(f"{path}: candidate file has no ModelNew")
    if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
        raise LoadError(f"{path}: ModelNew is not a torch.nn.Module subclass")
    return cls


def unavailable_here(cls) -> str | None:
    """Why a solution cannot run on this machine, in its own words: its module's unavailable() (CUTLASS's
    headers not found, say), or None. A solution that needs what this machine lacks is skipped with the
    reason, as Liger is left out of the baselines where it is not installed, not failed."""
    module = sys.modules.get(getattr(cls, "__module__", ""))
    check = getattr(module, "unavailable", None)
    return check() if callable(check) else None


def dispatch_table_gpu(cls) -> str | None:
    """The GPU whose dispatch table the solution runs on this machine: its DISPATCH_BY_GPU key for this GPU
    where a search here wrote one, else DISPATCH_GPU (the table was timed on another GPU); None for a
    solution whose module keeps no per-GPU tables (DISPATCH_GPU, DISPATCH_BY_GPU and this_gpu()). A CUDA file
    that sends some shapes to a Triton family names that module by triton_route(): its table is the one those
    shapes run. Recorded, so a run on a new GPU says which of its numbers come from a table tuned elsewhere."""
    module = sys.modules.get(getattr(cls, "__module__", ""))
    try:
        if not hasattr(module, "DISPATCH_BY_GPU") and callable(getattr(module, "triton_route", None)):
            module = module.triton_route()
        home, own, this_gpu = (getattr(module, name, None) for name in ("DISPATCH_GPU", "DISPATCH_BY_GPU", "this_gpu"))
        if not isinstance(home, str) or not isinstance(own, dict) or not callable(this_gpu):
            return None
        gpu = this_gpu()
    except Exception:  # the candidate's own code: its stages say what is wrong with it, not this field
        return None
    return gpu if gpu in own else home
