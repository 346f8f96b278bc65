"""ModelNew for KernelBench level1/21_Sigmoid: 1 / (1 + exp(-x)) in one pass.

exp(-x) overflows to inf for x < -88 and the quotient is then exactly 0, which is the right float32
answer; no clamping needed. Bytes: x read once, y written once: 2 * numel * 4.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

TUNABLES = {"BLOCK": 4096, "num_warps": 8}
TUNABLE_CHOICES = {"BLOCK": [1024, 2048, 4096, 8192], "num_warps": [4, 8, 16]}


@triton.jit
def sigmoid_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, 1.0 / (1.0 + tl.exp(-x)), mask=mask)


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        sigmoid_kernel[(triton.cdiv(n, TUNABLES["BLOCK"]),)](x, y, n, BLOCK=TUNABLES["BLOCK"],
                                                              num_warps=TUNABLES["num_warps"])
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return sigmoid(x)
