"""What the caller hands the harness: which problem, which implementations, and how to run them."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

BASELINES = ("eager", "fused", "compile", "compile-max-autotune", "liger")


def file_hash(path: Path) -> str:
    """Short content hash, so a record says exactly which source it measured."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]


@dataclass(frozen=True)
class ProblemRef:
    """A problem file on disk (ours, with META, or a foreign KernelBench file without)."""

    name: str
    path: Path
    level: int | None = None


@dataclass(frozen=True)
class SolutionRef:
    """A candidate file defining ModelNew, or a baseline (path None, name in BASELINES)."""

    name: str
    path: Path | None = None

    @property
    def kind(self) -> str:
        return "baseline" if self.path is None else "solution"


@dataclass(frozen=True)
class Options:
    """How to check and time. Defaults are what `ksuite bench` uses."""

    shapes: str = "all"  # all | large | small
    dtypes: tuple[str, ...] = ()  # empty: every dtype the problem declares
    time: bool = True  # False: correctness only
    interpret: bool = False  # Triton interpreter on CPU (no CUDA device)
    timeout_s: float = 600.0  # per child process
    trials: int = 3  # correctness trials per shape (fresh inputs each)
    seed: int = 0
    # timing: adaptive stopping rule
    warmup_ms: float = 25.0
    min_runs: int = 10
    max_runs: int = 500
    target_rse: float = 0.005
    budget_s: float = 1.0
    flush: str = "clean"  # L2 flush before each timed call: clean (write, then read another buffer) | write
    # speed of light ceilings from calibration (bytes/s, flop/s); None: not calibrated
    copy_bandwidth: float | None = None
    matmul_rate: float | None = None
    # source check and the watched probe call before the stages (harness/integrity/static_check.py and
    # probe.py); off only to measure their cost
    integrity: bool = True
    extra_env: dict[str, str] = field(default_factory=dict)
    # (solution, shape items, dtype) already recorded in a resumed run: not measured again
    done: tuple = ()
    # ours: each problem's META tolerances; kernelbench: KernelBench's allclose (atol = rtol = 1e-4 fp32,
    # 1e-2 fp16/bf16) in every stage, to report what their check would accept
    tolerance: str = "ours"
    baselines: tuple[str, ...] = BASELINES  # which baselines run (those that apply to the problem)
    # --shape: check and time exactly these shapes (specs like "4096x4096", read by harness/shape_spec.py
    # against each problem's size constants), instead of META's
    custom_shapes: tuple[str, ...] = ()
    # measured baseline timings kept per environment (harness/baseline_cache.py): off (time them all in this
    # run, the default) | use (reuse a kept timing younger than baseline_max_age_s) | refresh (time, keep)
    baseline_cache: str = "off"
    baseline_max_age_s: float = 7 * 86400.0
