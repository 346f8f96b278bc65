"""The float64 reference called in slices of a dimension independent in its problem: declared (META
"reference_split_dim": attention's heads, whose [heads, seq, seq] float64 scores at 64 heads x 16384
positions need 275 GB at once and a quarter of that in slices of 16 heads), or found by a probe for a file
without it (harness/independence.py: KernelBench's 25_Swish, whose float64 call at its own size holds 39 GB
beside a 6.4 GB input). The answer is the same: each slice's output depends on that slice of every input
only, and the slices are written in order into one output.

Each slice's inputs are made float64 on their own (the whole inputs never are), and each slice's output is
copied into the float64 output at once, so the device holds the float64 output, one slice's float64 inputs
and one slice's temporaries: harness/memory.plan counts exactly that."""

from __future__ import annotations

import torch

from harness.compare import as_tensor_list


def _wide(x):
    return x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x


class SlicedReference(torch.nn.Module):
    """`model` (in float64) called on `slices` consecutive slices of dimension `dim` of every tensor input
    (fewer where the dimension is shorter), each made float64 first; its outputs written along `dim`."""

    def __init__(self, model: torch.nn.Module, dim: int, slices: int):
        super().__init__()
        self.model, self.dim, self.slices = model, dim, slices

    def forward(self, *inputs):
        extent = min(x.shape[self.dim] for x in inputs if isinstance(x, torch.Tensor))
        pieces = min(self.slices, extent)
        parts = [x.tensor_split(pieces, dim=self.dim) if isinstance(x, torch.Tensor) else [x] * pieces
                 for x in inputs]
        joined, start = None, 0
        for call in zip(*parts):
            length = next(x.shape[self.dim] for x in call if isinstance(x, torch.Tensor))
            outs = as_tensor_list(self.model(*[_wide(x) for x in call]))
            if any(o.dim() <= self.dim or o.shape[self.dim] != length for o in outs):
                raise ValueError(f"an output is not sliced along dimension {self.dim} with its inputs")
            if joined is None:
                joined = [o.new_empty(o.shape[:self.dim] + (extent,) + o.shape[self.dim + 1:]) for o in outs]
            for whole, part in zip(joined, outs):
                whole.narrow(self.dim, start, length).copy_(part)
            start += length
            del outs
        return joined[0] if len(joined) == 1 else tuple(joined)
