"""The float64 reference called in slices of a dimension independent in its problem: declared (META
"reference_split_dim": attention's heads, whose [heads, seq, seq] float64 scores at 64 heads x 16384
positions need 275 GB at once and a quarter of that in slices of 16 heads), or found by a probe for a file
without it (harness/independence.py: KernelBench's 25_Swish, whose float64 call at its own size holds 39 GB
beside a 6.4 GB input). The answer is the same: each slice's output depends on that slice of every input
only, and the slices are written in order into one output. A reference that reduces its batch to one
answer (KernelBench's losses: 94_MSELoss's mean over 32768 x 32768 values holds 17 GB of float64 temporaries)
joins its slices' answers instead: their mean weighted by slice length ("mean": a mean, or a sum divided by
the batch, as KLDivLoss's batchmean) or their sum ("sum"); the probe says which, if any, is the whole's.

Each slice's inputs are made float64 on their own (the whole inputs never are). The checker takes the slices'
answers one at a time (`pieces`) and compares each with the same rows of the candidate's output
(harness/compare.compare_pieces), so the device holds one slice's float64 inputs, temporaries and output:
harness/memory.plan counts that. Called whole (`forward`), each slice's output is copied into one float64
output."""

from __future__ import annotations

import torch

from harness.compare import as_tensor_list


def _wide(x):
    return x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x


JOINS = ("concat", "mean", "sum")  # how slices' outputs make the whole's: written along dim, or reduced


class SlicedReference(torch.nn.Module):
    """`model` (in float64) called on `slices` consecutive slices of dimension `dim` of every tensor input
    (fewer slices where the dimension is shorter), each made float64 first, except the inputs at positions
    `whole`, which every slice gets whole (rotary's cos and sin tables: META "reference_whole_inputs"); its
    outputs written along `dim` ("concat"), or reduced across slices ("mean" weighted by slice length,
    "sum")."""

    def __init__(self, model: torch.nn.Module, dim: int, slices: int, join: str = "concat", whole=()):
        super().__init__()
        if join not in JOINS:
            raise ValueError(f"join {join!r} is not one of {', '.join(JOINS)}")
        self.model, self.dim, self.slices, self.join, self.whole = model, dim, slices, join, tuple(whole)

    def forward(self, *inputs):
        joined = None
        for start, length, extent, outs in self.pieces(*inputs):
            if self.join == "concat":
                joined = self._write(joined, outs, extent, start, length)
            else:
                joined = self._reduce(joined, outs, length / extent if self.join == "mean" else 1.0)
            del outs  # before the next slice's call: nothing of this slice stays but what was written
        return joined[0] if len(joined) == 1 else tuple(joined)

    def pieces(self, *inputs):
        """Each slice's float64 outputs as (start, length, extent, outputs), one slice alive at a time: what
        the checker compares slice by slice against the same rows of the candidate's output (a "concat"
        join), so that the whole float64 output is never held (4x a float16 output: attention's trial at
        2 x 32 x 4096 x 128 held 4.19x inputs + outputs with it)."""
        cut = sliced_inputs(inputs, self.whole)
        extent = min(x.shape[self.dim] for x, c in zip(inputs, cut) if c)
        count = min(self.slices, extent)
        parts = [x.tensor_split(count, dim=self.dim) if c else [x] * count for x, c in zip(inputs, cut)]
        start = 0
        for call in zip(*parts):
            length = next(x.shape[self.dim] for x, c in zip(call, cut) if c)
            outs = as_tensor_list(self.model(*[_wide(x) for x in call]))
            if self.join == "concat" and any(o.dim() <= self.dim or o.shape[self.dim] != length for o in outs):
                raise ValueError(f"an output is not sliced along dimension {self.dim} with its inputs")
            yield start, length, extent, outs
            del outs
            start += length

    def _write(self, joined: list | None, outs: list, extent: int, start: int, length: int) -> list:
        """This slice's outputs into the whole float64 outputs (made at the first slice). A helper of its
        own, so that no loop variable keeps a slice's output alive into the next slice's call (one did:
        25_Swish's sliced reference peaked a slice's output above its count, 4.5x inputs + outputs)."""
        if joined is None:
            joined = [o.new_empty(o.shape[:self.dim] + (extent,) + o.shape[self.dim + 1:]) for o in outs]
        for target, part in zip(joined, outs):
            target.narrow(self.dim, start, length).copy_(part)
        return joined

    @staticmethod
    def _reduce(joined: list | None, outs: list, weight: float) -> list:
        """The running weighted sum of the slices' answers, each slice's answer the same shape."""
        if any(not o.is_floating_point() for o in outs):
            raise ValueError("an output that is not floating point cannot be reduced across slices")
        if joined is None:
            return [o * weight for o in outs]
        if len(joined) != len(outs) or any(a.shape != o.shape for a, o in zip(joined, outs)):
            raise ValueError("the slices' outputs differ in shape: they cannot be reduced into one")
        for target, part in zip(joined, outs):
            target.add_(part, alpha=weight)
        return joined


def sliced_inputs(inputs, whole=()) -> list[bool]:
    """Which inputs a SlicedReference slices: every tensor but those at the positions `whole`."""
    return [isinstance(x, torch.Tensor) and i not in whole for i, x in enumerate(inputs)]
