"""Types of conv2d_v2: the input is (input, kernel, uninitialised output); the output the convolution."""

from typing import TypedDict

import torch

input_t = tuple[torch.Tensor, torch.Tensor, torch.Tensor]
output_t = torch.Tensor


class TestSpec(TypedDict):
    size: int
    kernelsize: int
    channels: int
    batch: int
    seed: int
