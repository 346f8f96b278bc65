"""Types of matmul_v2: the input is (a, b, uninitialised output c); the output the (m, n) product."""

from typing import TypedDict

import torch

input_t = tuple[torch.Tensor, torch.Tensor, torch.Tensor]
output_t = torch.Tensor


class TestSpec(TypedDict):
    m: int
    n: int
    k: int
    seed: int
