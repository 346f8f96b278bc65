"""Types of prefixsum_v2: the input is (float32 data, uninitialised output buffer); the output a tensor."""

from typing import TypedDict

import torch

input_t = tuple[torch.Tensor, torch.Tensor]  # (size,) float32 data, (size,) float32 buffer
output_t = torch.Tensor  # (size,) inclusive prefix sum


class TestSpec(TypedDict):
    size: int
    seed: int
