"""ModelNew for KernelBench level1/23_Softmax: softmax over dim 1, one program per row.

Pass 1 keeps a running maximum and a running sum of exponentials per lane (online softmax), pass 2
writes exp(x - max) / sum. Blocks of 4096 keep the per-lane state in registers; a 64 KB row read in
pass 1 is still in L2 when pass 2 reads it again.
Bytes (fewest): x read once, y written once: 2 * M * N * 4.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

TUNABLES = {"MAX_BLOCK_N": 4096, "num_warps": 8}
TUNABLE_CHOICES = {"MAX_BLOCK_N": [1024, 2048, 4096, 8192], "num_warps": [4, 8, 16]}


@triton.jit
def softmax_kernel(x_ptr, y_ptr, N, stride_xm, stride_ym, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    y_row = y_ptr + row * stride_ym

    m = tl.full([BLOCK_N], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        offs = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + offs, mask=offs < N, other=float("-inf"))
        m_new = tl.maximum(m, x)
        shift = tl.where(m_new == float("-inf"), 0.0, m_new)  # a lane that has seen only padding
        s = s * tl.exp(m - shift) + tl.exp(x - shift)
        m = m_new
    row_max = tl.max(m, axis=0)
    total = tl.sum(s * tl.exp(m - row_max), axis=0)

    for start in range(0, N, BLOCK_N):
        offs = start + tl.arange(0, BLOCK_N)
        mask = offs < N
        x = tl.load(x_row + offs, mask=mask, other=float("-inf"))
        tl.store(y_row + offs, tl.exp(x - row_max) / total, mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    assert x.dim() == 2, "x must be [batch, features]"
    x = x.contiguous()
    M, N = x.shape
    y = torch.empty_like(x)
    if M == 0 or N == 0:
        return y
    BLOCK_N = min(TUNABLES["MAX_BLOCK_N"], triton.next_power_of_2(N))
    softmax_kernel[(M,)](x, y, N, x.stride(0), y.stride(0), BLOCK_N=BLOCK_N, num_warps=TUNABLES["num_warps"])
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax(x)
