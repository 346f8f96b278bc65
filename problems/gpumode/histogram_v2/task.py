"""Types of histogram_v2: the input is (uint8 data, uninitialised int64 (256,) buffer); the output a tensor."""

from typing import TypedDict

import torch

input_t = tuple[torch.Tensor, torch.Tensor]  # (size,) uint8 data, (256,) int64 buffer
output_t = torch.Tensor  # (256,) counts


class TestSpec(TypedDict):
    size: int
    seed: int
    contention: int  # percent of the elements set to one value
