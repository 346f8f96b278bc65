"""Row-sum starter: one program per row, a float32 accumulator over column blocks, one rounding to
the output dtype at the end.

Bytes: the fewest is x read once, y written once: (M * N + M) * esize. This kernel moves exactly
that.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

TUNABLES = {"BLOCK_N": 1024, "num_warps": 4}


@triton.jit
def row_sum_kernel(x_ptr, y_ptr, N, stride_xm, stride_xn, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    x_row = x_ptr + pid.to(tl.int64) * stride_xm
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + offs_n * stride_xn, mask=offs_n < N, other=0.0)
        acc += x.to(tl.float32)
    tl.store(y_ptr + pid, tl.sum(acc, axis=0).to(y_ptr.dtype.element_ty))


def row_sum(x: torch.Tensor) -> torch.Tensor:
    assert x.dim() == 2 and x.is_floating_point(), "x must be [rows, cols] floats"
    M, N = x.shape
    y = torch.empty((M,), device=x.device, dtype=x.dtype)
    if M == 0:
        return y
    if N == 0:
        return y.zero_()
    BLOCK_N = min(TUNABLES["BLOCK_N"], triton.next_power_of_2(N))
    row_sum_kernel[(M,)](x, y, N, x.stride(0), x.stride(1), BLOCK_N=BLOCK_N,
                         num_warps=TUNABLES["num_warps"])
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return row_sum(x)
