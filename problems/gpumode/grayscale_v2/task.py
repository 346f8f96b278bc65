"""Types of grayscale_v2: the input is (RGB image, uninitialised output buffer); the output a tensor."""

from typing import TypedDict

import torch

input_t = tuple[torch.Tensor, torch.Tensor]  # (size, size, 3) float32 RGB, (size, size) float32 buffer
output_t = torch.Tensor  # (size, size) float32 grayscale


class TestSpec(TypedDict):
    size: int  # the image is size x size
    seed: int
