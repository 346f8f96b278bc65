"""Types of sort_v2: the input is (values, uninitialised output buffer); the output the sorted tensor."""

from typing import TypedDict

import torch

input_t = tuple[torch.Tensor, torch.Tensor]
output_t = torch.Tensor


class TestSpec(TypedDict):
    size: int
    seed: int
