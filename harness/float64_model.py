"""The float64 reference made from the checked dtype's model in place, without a float64 copy of its large
parameters at rest.

`model.double()` keeps every parameter in float64 for the whole job. fused_mlp's three 4096 x 14336
projections are 352 MB in bfloat16 and 1.4 GB in float64, and with the dtype model kept beside its float64
copy a trial peaked at 9.0x inputs + outputs on the H200 (make bench, 2026-12-02). Here a large parameter
stays in its dtype and each forward that reads it gets it in float64 (a parametrization: the cast lives for
the op that uses it). The values are the same: a dtype's numbers are exact in float64. Small parameters,
buffers, tied parameters (one tensor in two places), recurrent layers (cuDNN reads their flat weights, not
the attribute) and parameters that already have a parametrization are made float64 at once, as before.
"""

from __future__ import annotations

import torch
from torch.nn.utils import parametrize

LAZY_MIN_BYTES = 1 << 20  # a parameter smaller than this in its dtype is made float64 at once


class _Float64(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.double()


def _lazy_candidates(model: torch.nn.Module) -> list[tuple[torch.nn.Module, str, torch.nn.Parameter]]:
    """(module, name, parameter) for each parameter worth casting on use."""
    uses: dict[int, int] = {}
    for _, p in model.named_parameters(remove_duplicate=False):
        uses[id(p)] = uses.get(id(p), 0) + 1
    recurrent = {id(m) for r in model.modules() if isinstance(r, torch.nn.RNNBase) for m in r.modules()}
    chosen = []
    for module in model.modules():
        if id(module) in recurrent or isinstance(module, parametrize.ParametrizationList):
            continue
        for name, p in module.named_parameters(recurse=False):
            if (p.is_floating_point() and p.numel() * p.element_size() >= LAZY_MIN_BYTES and uses[id(p)] == 1
                    and not parametrize.is_parametrized(module, name)):
                chosen.append((module, name, p))
    return chosen


def widen_in_place(model: torch.nn.Module) -> int:
    """Make `model` compute in float64 (see the module's docstring); the float64 bytes of the largest
    parameter a call casts on use (each call holds it while the op that reads it runs), 0 where none."""
    lazy = _lazy_candidates(model)
    keep = {id(p) for _, _, p in lazy}
    wide: dict[int, torch.nn.Parameter] = {}  # a tied parameter stays one tensor
    for module in model.modules():
        for name, p in list(module._parameters.items()):
            if p is not None and p.is_floating_point() and id(p) not in keep:
                if id(p) not in wide:
                    wide[id(p)] = torch.nn.Parameter(p.detach().double(), p.requires_grad)
                module._parameters[name] = wide[id(p)]
        for name, b in list(module._buffers.items()):
            if b is not None and b.is_floating_point():
                module._buffers[name] = b.double()
    for module, name, _ in lazy:
        parametrize.register_parametrization(module, name, _Float64(), unsafe=True)
    return max((p.numel() * 8 for _, _, p in lazy), default=0)
