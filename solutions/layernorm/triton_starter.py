"""LayerNorm starter: one program per row, three passes over the row in column blocks
(mean, then variance around the mean, then normalise), as in Triton's layer-norm tutorial.

Bytes: the fewest is x read once, y written once, weight and bias read once:
(2 * M * N + 2 * N) * esize. This kernel reads each row three times; on a GPU the second and third
reads mostly hit L2, so DRAM traffic stays near the minimum.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

TUNABLES = {"BLOCK_N": 1024, "num_warps": 4}
# The values `ksuite optimize --strategy search` may try: up to a whole 16K row per loop step.
TUNABLE_CHOICES = {"BLOCK_N": [512, 1024, 2048, 4096, 8192, 16384], "num_warps": [2, 4, 8, 16, 32]}


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, N, stride_xm, stride_xn, stride_ym, eps,
                     BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    x_row = x_ptr + pid.to(tl.int64) * stride_xm
    y_row = y_ptr + pid.to(tl.int64) * stride_ym

    # Pass 1: mean, accumulated in float32.
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + offs_n * stride_xn, mask=offs_n < N, other=0.0).to(tl.float32)
        acc += x
    mean = tl.sum(acc, axis=0) / N

    # Pass 2: biased variance around the mean (stable, unlike E[x^2] - mean^2).
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        mask = offs_n < N
        x = tl.load(x_row + offs_n * stride_xn, mask=mask, other=0.0).to(tl.float32)
        d = tl.where(mask, x - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)

    # Pass 3: normalise and apply the affine transform, round once to the output dtype.
    for start in range(0, N, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        mask = offs_n < N
        x = tl.load(x_row + offs_n * stride_xn, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs_n, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offs_n, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(y_row + offs_n, y.to(y_ptr.dtype.element_ty), mask=mask)


def layernorm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    assert x.dim() == 2, "x must be [rows, dim]"
    M, N = x.shape
    for p in (weight, bias):
        assert p.shape == (N,) and p.is_contiguous(), "weight and bias must be contiguous [dim] vectors"
        assert p.device == x.device and p.dtype == x.dtype
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    if M == 0 or N == 0:
        return y
    BLOCK_N = min(TUNABLES["BLOCK_N"], triton.next_power_of_2(N))
    grid = (M,)
    layernorm_kernel[grid](x, weight, bias, y, N, x.stride(0), x.stride(1), y.stride(0), eps,
                           BLOCK_N=BLOCK_N, num_warps=TUNABLES["num_warps"])
    return y


class ModelNew(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.randn(dim))
        self.bias = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        return layernorm(x, self.weight, self.bias, self.eps)
