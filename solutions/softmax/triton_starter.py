"""Softmax starter: one program per row, an online pass (running max and rescaled running sum of
exponentials) over the row in column blocks, then a second pass that writes exp(x - max) / sum.

Bytes: the fewest is x read once, y written once: 2 * M * N * esize. This kernel reads each row
twice; on a GPU the second read mostly hits L2, so DRAM traffic stays near the minimum.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

TUNABLES = {"BLOCK_N": 1024, "num_warps": 4}
# The values `ksuite optimize --strategy search` may try: up to a whole 16K row per loop step.
TUNABLE_CHOICES = {"BLOCK_N": [512, 1024, 2048, 4096, 8192, 16384], "num_warps": [2, 4, 8, 16, 32]}


@triton.jit
def softmax_kernel(x_ptr, y_ptr, N, stride_xm, stride_xn, stride_ym, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    x_row = x_ptr + pid.to(tl.int64) * stride_xm
    y_row = y_ptr + pid.to(tl.int64) * stride_ym

    # Pass 1 (online): m is the max so far, s the sum of exp(x - m) so far, both float32.
    # The first block always holds a real element, so m is finite after it and exp(m - m_new)
    # never sees -inf - -inf.
    m = float("-inf")
    s = 0.0
    for start in range(0, N, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + offs_n * stride_xn, mask=offs_n < N, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new

    # Pass 2: write the normalised exponentials, rounded once to the output dtype.
    inv_s = 1.0 / s
    for start in range(0, N, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        mask = offs_n < N
        x = tl.load(x_row + offs_n * stride_xn, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - m) * inv_s
        tl.store(y_row + offs_n, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    assert x.dim() == 2, "x must be [rows, dim]"
    assert x.is_floating_point()
    M, N = x.shape
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    if M == 0 or N == 0:
        return y
    BLOCK_N = min(TUNABLES["BLOCK_N"], triton.next_power_of_2(N))
    grid = (M,)
    softmax_kernel[grid](x, y, N, x.stride(0), x.stride(1), y.stride(0),
                         BLOCK_N=BLOCK_N, num_warps=TUNABLES["num_warps"])
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmax(x)
