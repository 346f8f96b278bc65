"""ModelNew for KernelBench level1/47_Sum_reduction_over_a_dimension: torch.sum(x, dim, keepdim=True).

x is viewed as (outer, R, inner) around the reduced dim. A program owns BLOCK_I neighbouring inner
positions of one outer index and walks R in BLOCK_R rows, so every load is a coalesced row segment;
a [BLOCK_R, BLOCK_I] float32 accumulator is summed once at the end (pairwise, not one long chain).
Bytes: x read once, y written once: (outer * R * inner + outer * inner) * 4.
"""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

TUNABLES = {"MAX_BLOCK_I": 128, "TILE": 4096, "num_warps": 8}
TUNABLE_CHOICES = {"MAX_BLOCK_I": [32, 64, 128, 256], "TILE": [2048, 4096, 8192], "num_warps": [4, 8]}


@triton.jit
def sum_dim_kernel(x_ptr, y_ptr, R, INNER, n_i_blocks, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    pid = tl.program_id(0)
    outer = (pid // n_i_blocks).to(tl.int64)
    offs_i = (pid % n_i_blocks) * BLOCK_I + tl.arange(0, BLOCK_I)
    mask_i = offs_i < INNER
    base = x_ptr + outer * R * INNER

    acc = tl.zeros([BLOCK_R, BLOCK_I], dtype=tl.float32)
    for r0 in range(0, R, BLOCK_R):
        offs_r = r0 + tl.arange(0, BLOCK_R)
        ptrs = base + offs_r[:, None].to(tl.int64) * INNER + offs_i[None, :]
        acc += tl.load(ptrs, mask=(offs_r[:, None] < R) & mask_i[None, :], other=0.0)
    tl.store(y_ptr + outer * INNER + offs_i, tl.sum(acc, axis=0), mask=mask_i)


def sum_keepdim(x: torch.Tensor, dim: int) -> torch.Tensor:
    dim = dim % x.dim()
    x = x.contiguous()
    outer, R, inner = math.prod(x.shape[:dim]), x.shape[dim], math.prod(x.shape[dim + 1:])
    y = torch.empty((*x.shape[:dim], 1, *x.shape[dim + 1:]), device=x.device, dtype=x.dtype)
    if y.numel() == 0:
        return y
    if R == 0:
        raise ValueError("sum over an empty dimension")
    BLOCK_I = min(TUNABLES["MAX_BLOCK_I"], triton.next_power_of_2(inner))
    BLOCK_R = min(triton.next_power_of_2(R), max(8, TUNABLES["TILE"] // BLOCK_I))
    n_i_blocks = triton.cdiv(inner, BLOCK_I)
    sum_dim_kernel[(outer * n_i_blocks,)](x, y, R, inner, n_i_blocks, BLOCK_R=BLOCK_R, BLOCK_I=BLOCK_I,
                                          num_warps=TUNABLES["num_warps"])
    return y


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return sum_keepdim(x, self.dim)
