"""The baselines every candidate is compared with: eager, the fused PyTorch op, torch.compile x2, and
Liger-Kernel where the problem names its op (an optional dependency: `pip install liger-kernel`)."""

from __future__ import annotations

import importlib.util

import torch

from harness.inputs import build_candidate, build_models, make_inputs
from harness.loader import LoadedProblem

COMPILE_MODES = {"compile": None, "compile-max-autotune": "max-autotune-no-cudagraphs"}


LIGER_MISSING = "liger-kernel is not installed (pip install liger-kernel): Liger is left out of the baselines"


def liger_installed() -> bool:
    return importlib.util.find_spec("liger_kernel") is not None


def available(problem: LoadedProblem, interpret: bool) -> list[str]:
    """Baselines that apply: 'fused' only where the problem defines ModelFused; torch.compile and Liger
    only on a CUDA device (on CPU nothing is timed, so compiling would only cost time); Liger where the
    problem defines ModelLiger and liger-kernel is installed."""
    names = ["eager"]
    if problem.fused_class is not None:
        names.append("fused")
    if not interpret:
        names += list(COMPILE_MODES)
        if problem.liger_class is not None and liger_installed():
            names.append("liger")
    return names


def unavailable_reason(problem: LoadedProblem, name: str, interpret: bool) -> str:
    """Why a baseline is left out, in one line."""
    if name == "liger" and problem.liger_class is not None and not interpret and not liger_installed():
        return LIGER_MISSING
    return "not applicable here"


def unsupported_at(problem: LoadedProblem, name: str, shape: dict) -> str | None:
    """Why a baseline does not take this shape by its own documented limit, in one line, or None: the
    problem's ModelFused or ModelLiger may say so with a static method `unsupported(sizes)` (Liger's
    softmax refuses rows of more than 65536 columns). Such a shape gets no record: a library's limit is not
    a failed measurement, and the best baseline there is the best of the others."""
    cls = {"fused": problem.fused_class, "liger": problem.liger_class}.get(name)
    rule = getattr(cls, "unsupported", None)
    return rule(dict(shape)) if callable(rule) else None


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
    if name == "liger":
        return build_candidate(problem, problem.liger_class, shape, dtype, seed, device)
    reference, _, _ = build_models(problem, None, shape, dtype, seed, device, float64=False)
    if name == "eager":
        return reference
    if name in COMPILE_MODES:
        _configure_dynamo()
        compiled = torch.compile(reference, mode=COMPILE_MODES[name], dynamic=False)
        _compile_now(problem, compiled, shape, dtype, seed, device)
        return compiled
    raise ValueError(f"unknown baseline {name!r}")


def _compile_now(problem: LoadedProblem, compiled, shape: dict, dtype: str, seed: int, device: str) -> None:
    """One call, so torch.compile compiles (and max-autotune benchmarks its configurations) while the model is
    built, before any trial: the compiler's working memory is not what a trial holds. max-autotune's benchmark
    allocates an L2-sized buffer (50 MB on the H200), which was 11.6x vectorsum_v2's 6.5 MB of inputs and
    output at its smallest shape (make bench, 2026-12-03). A failure here is left to the first trial, which
    meets it again and records it."""
    inputs = make_inputs(problem, shape, dtype, seed, device)
    try:
        with torch.no_grad():
            compiled(*inputs)
    except Exception:  # noqa: BLE001, S110 - the first trial records what went wrong, in its own words
        pass
