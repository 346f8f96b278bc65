#!POPCORN leaderboard grayscale_v2
#!POPCORN gpu H100
"""Triton starter for grayscale_v2: Y = 0.2989 R + 0.5870 G + 0.1140 B for every pixel.

The image is (size, size, 3) float32, contiguous, so pixel p has its R, G, B at 3p, 3p + 1, 3p + 2.
Each program converts BLOCK_SIZE consecutive pixels and writes them into the given output buffer.
Bytes: 12 read and 4 written per pixel; a memory-bound kernel.
"""

import torch
import triton
import triton.language as tl
from task import input_t, output_t

BLOCK_SIZE = 1024


@triton.jit
def grayscale_kernel(rgb_ptr, gray_ptr, n_pixels, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    pixels = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = pixels < n_pixels
    r = tl.load(rgb_ptr + 3 * pixels, mask=mask, other=0.0)
    g = tl.load(rgb_ptr + 3 * pixels + 1, mask=mask, other=0.0)
    b = tl.load(rgb_ptr + 3 * pixels + 2, mask=mask, other=0.0)
    gray = 0.2989 * r + 0.5870 * g + 0.1140 * b
    tl.store(gray_ptr + pixels, gray, mask=mask)


def custom_kernel(data: input_t) -> output_t:
    image, output = data
    assert image.dtype == torch.float32 and image.dim() == 3 and image.shape[-1] == 3
    image = image.contiguous()
    n_pixels = image.shape[0] * image.shape[1]
    grid = (triton.cdiv(n_pixels, BLOCK_SIZE),)
    grayscale_kernel[grid](image, output, n_pixels, BLOCK_SIZE=BLOCK_SIZE)
    return output
