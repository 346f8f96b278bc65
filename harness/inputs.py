"""Fresh inputs for each trial: seeded draws, dtype casts, stability transforms, strided copies."""

from __future__ import annotations

import copy

import torch

from harness.blame import construct
from harness.loader import DTYPES, LoadedProblem


def _transform(t: torch.Tensor, name: str, gen: torch.Generator) -> torch.Tensor:
    """Magnitude patterns that expose low-precision shortcuts and unstable formulas."""
    if name == "large":
        return t * 100.0
    if name == "tiny":
        return t * 1e-3
    if name == "mixed":
        rows = t.shape[0] if t.dim() > 1 else 1
        scale = (10.0 ** (torch.rand(rows, generator=gen) * 6 - 3)).to(t.device)
        return t * scale.view(-1, *([1] * (t.dim() - 1))) if t.dim() > 1 else t * scale
    if name == "constant_rows":
        if t.dim() == 0:
            return t
        return t[..., :1].expand_as(t).clone()
    raise ValueError(f"unknown stability transform {name!r}")


def _strided(t: torch.Tensor) -> torch.Tensor:
    """Same values, non-contiguous layout: every second column of a twice-as-wide buffer."""
    if t.dim() == 0 or t.shape[-1] == 0:
        return t
    wide = torch.empty(*t.shape[:-1], t.shape[-1] * 2, dtype=t.dtype, device=t.device)
    wide[..., ::2] = t
    return wide[..., ::2]


def make_inputs(problem: LoadedProblem, shape: dict, dtype: str, seed: int, device: str,
                transform: str | None = None, strided: bool = False) -> list:
    """Draw the problem's inputs with a fixed seed, cast floating ones to dtype, move to device.
    Drawn directly on the device (factory calls follow torch.device), so large shapes cost no host time."""
    torch.manual_seed(seed)
    with torch.device(device):
        raw = problem.raw_inputs(shape)
    gen = torch.Generator().manual_seed(seed + 1)
    out = []
    for item in raw:
        if isinstance(item, torch.Tensor):
            if item.is_floating_point():
                if transform:
                    item = _transform(item, transform, gen)
                item = item.to(DTYPES[dtype])
            item = item.to(device)
            if strided and item.is_floating_point():
                item = _strided(item)
        out.append(item)
    return out


def meta_inputs(problem: LoadedProblem, shape: dict) -> list | None:
    """The problem's inputs at this shape on the meta device (sizes without memory), or None where its
    get_inputs needs real values (GPU MODE's vectorsum_v2 draws its offset and scale with .item())."""
    try:
        with torch.device("meta"):
            return problem.raw_inputs(shape)
    except Exception:  # noqa: BLE001 - any failure means: no sizes from the meta device
        return None


def to_float64(inputs: list) -> list:
    """The same (dtype-rounded) values in float64, for the high-precision reference."""
    return [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]


def build_models(problem: LoadedProblem, candidate_cls, shape: dict, dtype: str, seed: int,
                 device: str, float64: bool = True):
    """Reference and candidate with equal weights: seed before each (KernelBench's rule), then copy
    the reference's state dict into the candidate where the names match. The reference takes its dtype
    before the candidate is built, so the two models' float32 weights (a module's default) are never
    held together: for fused_mlp's largest shape they were 1.4 GB, three times its inputs and output."""
    init = problem.init_inputs(shape)
    with torch.device(device):
        torch.manual_seed(seed)
        reference = problem.module.Model(*init)
    reference = reference.to(device=device, dtype=DTYPES[dtype]).eval()
    candidate = None
    if candidate_cls is not None:
        with torch.device(device):
            torch.manual_seed(seed)
            candidate = construct(candidate_cls, init)  # blames it
        ref_state = reference.state_dict()
        cand_state = candidate.state_dict()
        if ref_state.keys() == cand_state.keys() and all(
                ref_state[k].shape == cand_state[k].shape for k in ref_state):
            candidate.load_state_dict(ref_state)
        candidate = candidate.to(device=device, dtype=DTYPES[dtype]).eval()
    reference64 = copy.deepcopy(reference).double() if float64 else None
    return reference, reference64, candidate


def build_candidate(problem: LoadedProblem, candidate_cls, shape: dict, dtype: str, seed: int, device: str):
    """Only the candidate (with the reference's weights): no float64 copy, which at large shapes costs
    seconds and gigabytes."""
    return build_models(problem, candidate_cls, shape, dtype, seed, device, float64=False)[2]


def poison_like(t: torch.Tensor) -> None:
    """Fill an output buffer with NaN (floats) or a sentinel (integers) so unwritten elements fail."""
    if t.is_floating_point():
        t.fill_(float("nan"))
    else:
        t.fill_(-7_777_777 if t.dtype not in (torch.uint8, torch.bool) else 0)
