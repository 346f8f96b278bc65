"""ModelNew for KernelBench level1/19_ReLU: one pass over the flattened input.

Bytes: x read once, y written once: 2 * numel * 4.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

TUNABLES = {"BLOCK": 4096, "num_warps": 8}
TUNABLE_CHOICES = {"BLOCK": [1024, 2048, 4096, 8192], "num_warps": [4, 8, 16]}


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.where(x > 0, x, 0.0), mask=mask)


def relu(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        relu_kernel[(triton.cdiv(n, TUNABLES["BLOCK"]),)](x, y, n, BLOCK=TUNABLES["BLOCK"],
                                                           num_warps=TUNABLES["num_warps"])
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu(x)
