"""RMSNorm starter: one program per row, two passes over the row in column blocks.

Bytes: the fewest is x read once, y written once, weight read once: (2 * M * N + N) * esize.
This kernel reads each row twice (once for the sum of squares, once to normalise); on a GPU the
second read mostly hits L2 because the row was just loaded, so DRAM traffic stays near the minimum.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

TUNABLES = {"BLOCK_N": 1024, "num_warps": 4}
# The values `ksuite optimize --strategy search` may try: up to a whole 16K row per loop step.
TUNABLE_CHOICES = {"BLOCK_N": [512, 1024, 2048, 4096, 8192, 16384], "num_warps": [2, 4, 8, 16, 32]}


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, N, stride_xm, stride_xn, stride_ym, eps,
                   BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    x_row = x_ptr + pid.to(tl.int64) * stride_xm
    y_row = y_ptr + pid.to(tl.int64) * stride_ym

    # Pass 1: sum of squares in float32.
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        mask = offs_n < N
        x = tl.load(x_row + offs_n * stride_xn, mask=mask, other=0.0).to(tl.float32)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)

    # Pass 2: normalise, scale by the weight, round once to the output dtype.
    for start in range(0, N, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        mask = offs_n < N
        x = tl.load(x_row + offs_n * stride_xn, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs_n, mask=mask, other=0.0).to(tl.float32)
        y = x * rstd * w
        tl.store(y_row + offs_n, y.to(y_ptr.dtype.element_ty), mask=mask)


def rmsnorm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    assert x.dim() == 2, "x must be [rows, dim]"
    M, N = x.shape
    assert weight.shape == (N,) and weight.is_contiguous(), "weight must be a contiguous [dim] vector"
    assert x.device == weight.device and x.dtype == weight.dtype
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    if M == 0 or N == 0:
        return y
    BLOCK_N = min(TUNABLES["BLOCK_N"], triton.next_power_of_2(N))
    grid = (M,)
    rmsnorm_kernel[grid](x, weight, y, N, x.stride(0), x.stride(1), y.stride(0), eps,
                         BLOCK_N=BLOCK_N, num_warps=TUNABLES["num_warps"])
    return y


class ModelNew(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        return rmsnorm(x, self.weight, self.eps)
