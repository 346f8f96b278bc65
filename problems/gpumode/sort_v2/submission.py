#!POPCORN leaderboard sort_v2
#!POPCORN gpu H100
"""Sample sort_v2 submission: a plain Triton bitonic sort, one kernel launch per compare-exchange step.

The values are copied into a scratch buffer padded with +inf to a power of two, n_pad. Sorted runs then
double in length, k = 2, 4, ..., n_pad. Each stage starts with a "flip" step, which compares element r
of every k-group with element k - 1 - r (merging two ascending runs into a bitonic-split pair), then
half-cleaner steps compare i with i + j for j = k / 4, ..., 1. Every step is min to the lower index and
max to the upper, so all runs come out ascending. log2(n_pad) * (log2(n_pad) + 1) / 2 steps in all;
the first n values of the buffer are the answer.
"""

import torch
import triton
import triton.language as tl
from task import input_t, output_t

BLOCK = 1024  # elements (pad/copy kernels) or compare-exchange pairs (merge steps) per program


@triton.jit
def pad_copy_kernel(src_ptr, dst_ptr, n_src, n_dst, BLOCK: tl.constexpr):
    """dst[i] = src[i] for i < n_src, +inf for n_src <= i < n_dst."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(src_ptr + offs, mask=offs < n_src, other=float("inf"))
    tl.store(dst_ptr + offs, x, mask=offs < n_dst)


@triton.jit
def merge_step_kernel(buf_ptr, n_pairs, k, j, FLIP: tl.constexpr, BLOCK: tl.constexpr):
    p = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # pair index
    if FLIP:  # within each k-group (j = k / 2 pairs): r <-> k - 1 - r
        lo = (p // j) * k + p % j
        hi = (p // j) * k + k - 1 - p % j
    else:  # half-cleaner: i <-> i + j inside each 2j-group
        lo = (p // j) * (2 * j) + p % j
        hi = lo + j
    mask = p < n_pairs
    a = tl.load(buf_ptr + lo, mask=mask)
    b = tl.load(buf_ptr + hi, mask=mask)
    tl.store(buf_ptr + lo, tl.minimum(a, b), mask=mask)
    tl.store(buf_ptr + hi, tl.maximum(a, b), mask=mask)


def custom_kernel(data: input_t) -> output_t:
    values, output = data
    n = values.numel()
    n_pad = max(2, triton.next_power_of_2(n))
    buf = torch.empty(n_pad, device=values.device, dtype=torch.float32)
    pad_copy_kernel[(triton.cdiv(n_pad, BLOCK),)](values, buf, n, n_pad, BLOCK=BLOCK)
    n_pairs = n_pad // 2
    grid = (triton.cdiv(n_pairs, BLOCK),)
    k = 2
    while k <= n_pad:
        merge_step_kernel[grid](buf, n_pairs, k, k // 2, FLIP=True, BLOCK=BLOCK)
        j = k // 4
        while j >= 1:
            merge_step_kernel[grid](buf, n_pairs, k, j, FLIP=False, BLOCK=BLOCK)
            j //= 2
        k *= 2
    pad_copy_kernel[(triton.cdiv(n, BLOCK),)](buf, output, n, n, BLOCK=BLOCK)
    return output
