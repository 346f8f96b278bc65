"""The baselines every candidate is compared with: eager, the fused PyTorch op, torch.compile x2."""

from __future__ import annotations

import torch

from harness.inputs import build_candidate, build_models
from harness.loader import LoadedProblem

COMPILE_MODES = {"compile": None, "compile-max-autotune": "max-autotune-no-cudagraphs"}


def available(problem: LoadedProblem, interpret: bool) -> list[str]:
    """Baselines that apply: 'fused' only where the problem defines ModelFused; torch.compile only on
    a CUDA device (on CPU nothing is timed, so compiling would only cost time)."""
    names = ["eager"]
    if problem.fused_class is not None:
        names.append("fused")
    if not interpret:
        names += list(COMPILE_MODES)
    return names


def _configure_dynamo() -> None:
    """One compiled graph per (shape, dtype): never let dynamo fall back to eager or go dynamic."""
    import torch._dynamo

    for knob in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
                 "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, knob):
            setattr(torch._dynamo.config, knob, 4096)
    torch._dynamo.reset()


def make_baseline(problem: LoadedProblem, name: str, shape: dict, dtype: str, seed: int, device: str):
    """A module computing the reference op the way the named baseline does."""
    if name == "fused":
        return build_candidate(problem, problem.fused_class, shape, dtype, seed, device)
    reference, _, _ = build_models(problem, None, shape, dtype, seed, device, float64=False)
    if name == "eager":
        return reference
    if name in COMPILE_MODES:
        _configure_dynamo()
        return torch.compile(reference, mode=COMPILE_MODES[name], dynamic=False)
    raise ValueError(f"unknown baseline {name!r}")
