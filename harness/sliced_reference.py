"""The float64 reference called in slices of a dimension its problem declares independent (META
"reference_split_dim"): attention's heads, whose [heads, seq, seq] float64 scores at 64 heads x 16384
positions need 275 GB at once and a quarter of that in slices of 16 heads. The answer is the same: each
slice's output depends on that slice of every input only, and the slices are joined in order."""

from __future__ import annotations

import torch

from harness.compare import as_tensor_list


class SlicedReference(torch.nn.Module):
    """`model` called on `slices` consecutive slices of dimension `dim` of every tensor input (fewer where
    the dimension is shorter), its outputs joined along the same dimension."""

    def __init__(self, model: torch.nn.Module, dim: int, slices: int):
        super().__init__()
        self.model, self.dim, self.slices = model, dim, slices

    def forward(self, *inputs):
        extent = min(x.shape[self.dim] for x in inputs if isinstance(x, torch.Tensor))
        pieces = min(self.slices, extent)
        parts = [x.tensor_split(pieces, dim=self.dim) if isinstance(x, torch.Tensor) else [x] * pieces
                 for x in inputs]
        outs = [as_tensor_list(self.model(*call)) for call in zip(*parts)]
        joined = [torch.cat(group, dim=self.dim) for group in zip(*outs)]
        return joined[0] if len(joined) == 1 else tuple(joined)
