"""ModelNew for KernelBench level1/94_MSELoss: mean((predictions - targets)^2) as a 0-dim tensor.

Two launches, no atomics, so the result is bitwise the same every call: each program sums the squared
differences of one SPAN of elements into a partial, then one program adds the partials in a fixed
order and divides by n.
Bytes: both inputs read once: 2 * n * 4.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

TUNABLES = {"BLOCK": 4096, "ITERS": 8, "FINAL_BLOCK": 1024, "num_warps": 8}
TUNABLE_CHOICES = {"BLOCK": [1024, 2048, 4096], "ITERS": [2, 4, 8, 16], "num_warps": [4, 8, 16]}


@triton.jit
def squared_error_partials_kernel(p_ptr, t_ptr, partial_ptr, n, BLOCK: tl.constexpr, ITERS: tl.constexpr):
    pid = tl.program_id(0)
    start = pid.to(tl.int64) * BLOCK * ITERS
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(ITERS):
        offs = start + i * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        d = tl.load(p_ptr + offs, mask=mask, other=0.0) - tl.load(t_ptr + offs, mask=mask, other=0.0)
        acc += d * d
    tl.store(partial_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def mean_of_partials_kernel(partial_ptr, out_ptr, n_partials, n, FINAL_BLOCK: tl.constexpr):
    acc = tl.zeros([FINAL_BLOCK], dtype=tl.float32)
    for start in range(0, n_partials, FINAL_BLOCK):
        offs = start + tl.arange(0, FINAL_BLOCK)
        acc += tl.load(partial_ptr + offs, mask=offs < n_partials, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / n)


def mse(predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    assert predictions.shape == targets.shape and predictions.dtype == targets.dtype == torch.float32
    p, t = predictions.contiguous(), targets.contiguous()
    n = p.numel()
    out = torch.empty((), device=p.device, dtype=p.dtype)
    span = TUNABLES["BLOCK"] * TUNABLES["ITERS"]
    n_partials = max(1, triton.cdiv(n, span))
    partials = torch.empty(n_partials, device=p.device, dtype=torch.float32)
    squared_error_partials_kernel[(n_partials,)](p, t, partials, n, BLOCK=TUNABLES["BLOCK"], ITERS=TUNABLES["ITERS"],
                                                 num_warps=TUNABLES["num_warps"])
    mean_of_partials_kernel[(1,)](partials, out, n_partials, n, FINAL_BLOCK=TUNABLES["FINAL_BLOCK"], num_warps=4)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return mse(predictions, targets)
