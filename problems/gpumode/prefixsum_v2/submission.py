#!POPCORN leaderboard prefixsum_v2
#!POPCORN gpu H100
"""Triton starter for prefixsum_v2: the inclusive prefix sum of a float32 vector, in three passes.

1. block_scan_kernel: each program scans BLOCK_SIZE elements (tl.cumsum), writes that local scan into
   the output and its block total into `totals`.
2. totals_scan_kernel: one program scans the block totals in place, BLOCK_SIZE at a time, carrying
   the running sum from chunk to chunk; totals[b] becomes the sum of blocks 0..b.
3. add_offset_kernel: every block but the first adds the sum of the blocks before it (totals[b - 1]).
Precision: float32 throughout; the error grows about as sqrt(size), which the tolerance allows for.
Bytes: about 4 read + 4 written per element in pass 1, and 4 + 4 again in pass 3.
"""

import torch
import triton
import triton.language as tl
from task import input_t, output_t

BLOCK_SIZE = 1024


@triton.jit
def block_scan_kernel(x_ptr, out_ptr, totals_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    scan = tl.cumsum(x, axis=0)
    tl.store(out_ptr + offs, scan, mask=mask)
    tl.store(totals_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def totals_scan_kernel(totals_ptr, n_blocks, BLOCK_SIZE: tl.constexpr):
    carry = 0.0
    for start in range(0, n_blocks, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        mask = offs < n_blocks
        t = tl.load(totals_ptr + offs, mask=mask, other=0.0)
        scan = tl.cumsum(t, axis=0) + carry
        tl.store(totals_ptr + offs, scan, mask=mask)
        carry += tl.sum(t, axis=0)


@triton.jit
def add_offset_kernel(out_ptr, totals_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0) + 1  # block 0 needs no offset
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    offset = tl.load(totals_ptr + pid - 1)
    y = tl.load(out_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, y + offset, mask=mask)


def custom_kernel(data: input_t) -> output_t:
    x, output = data
    assert x.dtype == torch.float32 and x.dim() == 1
    x = x.contiguous()
    n = x.numel()
    n_blocks = triton.cdiv(n, BLOCK_SIZE)
    if n_blocks == 0:
        return output
    totals = torch.empty(n_blocks, dtype=torch.float32, device=x.device)
    block_scan_kernel[(n_blocks,)](x, output, totals, n, BLOCK_SIZE=BLOCK_SIZE)
    if n_blocks > 1:
        totals_scan_kernel[(1,)](totals, n_blocks, BLOCK_SIZE=BLOCK_SIZE)
        add_offset_kernel[(n_blocks - 1,)](output, totals, n, BLOCK_SIZE=BLOCK_SIZE)
    return output
