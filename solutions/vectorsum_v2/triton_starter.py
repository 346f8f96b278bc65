"""Triton starter for vectorsum_v2: the float32 sum of a vector, as GPU MODE's leaderboard asks.

At most MAX_PROGRAMS programs stride over the vector BLOCK_SIZE elements at a time (program p takes
blocks p, p + num_programs, ...), each keeping a float32 partial sum per lane; at the end each program
reduces its lanes (a tree reduction in registers) and adds that one number to the output with
tl.atomic_add. The wrapper zeroes the output first.

Precision: few atomics keep the rounding of the running total small: at 52,428,800 elements this is
MAX_PROGRAMS = 264 atomic adds, each lane having summed about 50 values, well inside GPU MODE's
rtol of 1e-5. The atomics land in any order, so repeated runs can differ in the last bits (a few
1e-7 relative; the problem allows 1e-6).

Bytes: 4 * size read, 4 written.
"""

import torch
import triton
import triton.language as tl

TUNABLES = {"BLOCK_SIZE": 4096, "MAX_PROGRAMS": 264, "num_warps": 8}


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, stride_x, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    num_programs = tl.num_programs(0)
    acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for start in range(pid * BLOCK_SIZE, n, num_programs * BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(x_ptr + offs * stride_x, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(acc, axis=0))


def vector_sum(x):
    assert x.dim() == 1 and x.dtype == torch.float32, "x must be a 1-d float32 tensor"
    out = torch.zeros((), dtype=torch.float32, device=x.device)
    n = x.numel()
    block = TUNABLES["BLOCK_SIZE"]
    grid = (max(1, min(triton.cdiv(n, block), TUNABLES["MAX_PROGRAMS"])),)
    sum_kernel[grid](x, out, n, x.stride(0), BLOCK_SIZE=block, num_warps=TUNABLES["num_warps"])
    return out


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return vector_sum(x)
