"""ModelNew for KernelBench level1/88_MinGPTNewGelu: 0.5 * x * (1 + tanh(z)), z = sqrt(2/pi) * (x +
0.044715 x^3), in one pass.

0.5 * (1 + tanh(z)) equals 1 / (1 + exp(-2z)), which has no cancellation: for x near -5 the plain form
computes 1 + (-0.9999999) and keeps no correct digit, this one stays accurate to a few ulp.
Bytes: x read once, y written once: 2 * numel * 4.
"""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

TUNABLES = {"BLOCK": 4096, "num_warps": 8}
TUNABLE_CHOICES = {"BLOCK": [1024, 2048, 4096, 8192], "num_warps": [4, 8, 16]}
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


@triton.jit
def gelu_tanh_kernel(x_ptr, y_ptr, n, C: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    z = C * (x + 0.044715 * x * x * x)
    tl.store(y_ptr + offs, x / (1.0 + tl.exp(-2.0 * z)), mask=mask)


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        gelu_tanh_kernel[(triton.cdiv(n, TUNABLES["BLOCK"]),)](x, y, n, C=SQRT_2_OVER_PI, BLOCK=TUNABLES["BLOCK"],
                                                                num_warps=TUNABLES["num_warps"])
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return gelu_tanh(x)
