"""ModelNew for KernelBench level1/40_LayerNorm: LayerNorm over the last len(normalized_shape) dims.

A row here is 4M elements and there are only 16 of them, so each row is cut into CHUNK-sized pieces:
1. chunk statistics: mean and M2 (sum of squared deviations from the chunk's own mean), one program
   per chunk, from one read of the chunk;
2. per row, merge the chunks' (count, mean, M2) exactly (Chan et al.), giving mean and 1/std;
3. normalise: one program per BLOCK of positions reads its weight and bias once and applies them to
   that block of every row.
Bytes: the fewest are (2 * B + 2) * R * 4 (x read, y written, weight and bias read); this reads x twice,
(3 * B + 2) * R * 4.
"""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

TUNABLES = {"CHUNK": 4096, "BLOCK": 2048, "MERGE_BLOCK": 1024, "num_warps": 8}
TUNABLE_CHOICES = {"CHUNK": [2048, 4096, 8192], "BLOCK": [1024, 2048, 4096], "num_warps": [4, 8, 16]}


@triton.jit
def chunk_stats_kernel(x_ptr, mean_ptr, m2_ptr, R, n_chunks, CHUNK: tl.constexpr):
    pid_c = tl.program_id(0)
    row = tl.program_id(1).to(tl.int64)
    offs = pid_c * CHUNK + tl.arange(0, CHUNK)
    mask = offs < R
    x = tl.load(x_ptr + row * R + offs, mask=mask, other=0.0)
    count = tl.minimum(R - pid_c * CHUNK, CHUNK).to(tl.float32)
    mean = tl.sum(x, axis=0) / count
    d = tl.where(mask, x - mean, 0.0)
    tl.store(mean_ptr + row * n_chunks + pid_c, mean)
    tl.store(m2_ptr + row * n_chunks + pid_c, tl.sum(d * d, axis=0))


@triton.jit
def merge_stats_kernel(mean_ptr, m2_ptr, row_mean_ptr, row_rstd_ptr, R, n_chunks, eps,
                       CHUNK: tl.constexpr, MERGE_BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([MERGE_BLOCK], dtype=tl.float32)
    for start in range(0, n_chunks, MERGE_BLOCK):
        offs = start + tl.arange(0, MERGE_BLOCK)
        mask = offs < n_chunks
        count = tl.where(mask, tl.minimum(R - offs * CHUNK, CHUNK), 0).to(tl.float32)
        acc += count * tl.load(mean_ptr + row * n_chunks + offs, mask=mask, other=0.0)
    mean = tl.sum(acc, axis=0) / R

    acc = tl.zeros([MERGE_BLOCK], dtype=tl.float32)
    for start in range(0, n_chunks, MERGE_BLOCK):
        offs = start + tl.arange(0, MERGE_BLOCK)
        mask = offs < n_chunks
        count = tl.where(mask, tl.minimum(R - offs * CHUNK, CHUNK), 0).to(tl.float32)
        d = tl.load(mean_ptr + row * n_chunks + offs, mask=mask, other=0.0) - mean
        acc += tl.load(m2_ptr + row * n_chunks + offs, mask=mask, other=0.0) + count * d * d
    var = tl.sum(acc, axis=0) / R
    tl.store(row_mean_ptr + row, mean)
    tl.store(row_rstd_ptr + row, tl.div_rn(1.0, tl.sqrt_rn(var + eps)))


@triton.jit
def normalize_kernel(x_ptr, w_ptr, b_ptr, row_mean_ptr, row_rstd_ptr, y_ptr, R, n_rows, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < R
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    x_ptrs = x_ptr + offs
    y_ptrs = y_ptr + offs
    for row in range(0, n_rows):
        x = tl.load(x_ptrs, mask=mask, other=0.0)
        y = (x - tl.load(row_mean_ptr + row)) * tl.load(row_rstd_ptr + row) * w + b
        tl.store(y_ptrs, y, mask=mask)
        x_ptrs += R  # pointers are 64-bit: no overflow however many rows
        y_ptrs += R


def layer_norm(x: torch.Tensor, normalized_shape: tuple, weight: torch.Tensor, bias: torch.Tensor,
               eps: float) -> torch.Tensor:
    assert tuple(x.shape[x.dim() - len(normalized_shape):]) == tuple(normalized_shape), "trailing dims"
    assert weight.shape == bias.shape == tuple(normalized_shape)
    x = x.contiguous()
    R = math.prod(normalized_shape)
    n_rows = x.numel() // R if R else 0
    y = torch.empty_like(x)
    if x.numel() == 0:
        return y
    t = TUNABLES
    n_chunks = triton.cdiv(R, t["CHUNK"])
    chunk_mean = torch.empty((n_rows, n_chunks), device=x.device, dtype=torch.float32)
    chunk_m2 = torch.empty_like(chunk_mean)
    row_mean = torch.empty(n_rows, device=x.device, dtype=torch.float32)
    row_rstd = torch.empty_like(row_mean)
    chunk_stats_kernel[(n_chunks, n_rows)](x, chunk_mean, chunk_m2, R, n_chunks, CHUNK=t["CHUNK"],
                                           num_warps=t["num_warps"])
    merge_stats_kernel[(n_rows,)](chunk_mean, chunk_m2, row_mean, row_rstd, R, n_chunks, eps, CHUNK=t["CHUNK"],
                                  MERGE_BLOCK=t["MERGE_BLOCK"], num_warps=4)
    normalize_kernel[(triton.cdiv(R, t["BLOCK"]),)](x, weight.contiguous(), bias.contiguous(), row_mean, row_rstd,
                                                    y, R, n_rows, BLOCK=t["BLOCK"], num_warps=t["num_warps"])
    return y


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        # holds the parameters under the reference's names (ln.weight, ln.bias); never called
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return layer_norm(x, self.ln.normalized_shape, self.ln.weight, self.ln.bias, self.ln.eps)
