"""ModelNew for KernelBench level1/22_Tanh: tanh(|x|) = (1 - e) / (1 + e) with e = exp(-2|x|), sign
restored after. e lies in (0, 1], so nothing overflows; near 0 the numerator loses a few bits to
cancellation, an absolute error of about 1e-7.

Bytes: x read once, y written once: 2 * numel * 4.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

TUNABLES = {"BLOCK": 4096, "num_warps": 8}
TUNABLE_CHOICES = {"BLOCK": [1024, 2048, 4096, 8192], "num_warps": [4, 8, 16]}


@triton.jit
def tanh_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    e = tl.exp(-2.0 * tl.abs(x))
    t = (1.0 - e) / (1.0 + e)
    tl.store(y_ptr + offs, tl.where(x < 0, -t, t), mask=mask)


def tanh(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        tanh_kernel[(triton.cdiv(n, TUNABLES["BLOCK"]),)](x, y, n, BLOCK=TUNABLES["BLOCK"],
                                                           num_warps=TUNABLES["num_warps"])
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return tanh(x)
