"""Types of vectorsum_v2: the input is (input vector, uninitialised output buffer); the output a tensor."""

from typing import TypedDict

import torch

input_t = tuple[torch.Tensor, torch.Tensor]
output_t = torch.Tensor


class TestSpec(TypedDict):
    size: int
    seed: int
