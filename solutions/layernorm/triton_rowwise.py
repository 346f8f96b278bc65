"""LayerNorm, row in registers: each program loads BLOCK_M whole rows with one masked load, takes the
mean and then the variance around the mean from registers (stable, and no second read), applies the
affine transform and writes, so every byte of x moves once (the starter reads each row three times).
Short rows are packed several to a program; rows longer than MAX_FUSED_N fall back to three passes
over column blocks (mean, variance, normalise; the later reads mostly hit L2).

Bytes: x read once, y written once, weight and bias read once: (2 * M * N + 2 * N) * esize. Streamed
x and y carry the evict_first hint, so they do not push weight and bias out of L2.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

# ROW_TILE: elements per program (rows are packed up to it); ELEMS_PER_THREAD sets num_warps;
# MAX_FUSED_N: longest row held in registers; LOOP_BLOCK_N: column block of the three-pass fallback.
TUNABLES = {"ROW_TILE": 8192, "ELEMS_PER_THREAD": 32, "MAX_FUSED_N": 16384, "LOOP_BLOCK_N": 4096}
TUNABLE_CHOICES = {"ROW_TILE": [2048, 4096, 8192, 16384], "ELEMS_PER_THREAD": [8, 16, 32],
                   "MAX_FUSED_N": [8192, 16384, 32768], "LOOP_BLOCK_N": [2048, 4096, 8192]}


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, stride_xm, stride_xn, stride_ym, eps,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, ONE_PASS: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = offs_m < M
    x_rows = x_ptr + offs_m.to(tl.int64)[:, None] * stride_xm
    y_rows = y_ptr + offs_m.to(tl.int64)[:, None] * stride_ym

    if ONE_PASS:
        offs_n = tl.arange(0, BLOCK_N)
        col_mask = offs_n < N
        mask = row_mask[:, None] & col_mask[None, :]
        x = tl.load(x_rows + offs_n[None, :] * stride_xn, mask=mask, other=0.0,
                    eviction_policy="evict_first").to(tl.float32)
        mean = tl.sum(x, axis=1) / N
        d = tl.where(mask, x - mean[:, None], 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=1) / N + eps)
        # weight and bias loaded after the reductions (L2 hits): loaded with x, their float32 copies
        # cost as many registers as x and cut the programs per multiprocessor from 4 to 3 (ptxas -v)
        w = tl.load(w_ptr + offs_n, mask=col_mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
        b = tl.load(b_ptr + offs_n, mask=col_mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
        y = d * rstd[:, None] * w[None, :] + b[None, :]
        tl.store(y_rows + offs_n[None, :], y.to(y_ptr.dtype.element_ty), mask=mask,
                 eviction_policy="evict_first")
    else:
        # Long rows: mean, then variance around it, then normalise, each over column blocks.
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for start in range(0, N, BLOCK_N):
            offs_n = start + tl.arange(0, BLOCK_N)
            mask = row_mask[:, None] & (offs_n < N)[None, :]
            acc += tl.load(x_rows + offs_n[None, :] * stride_xn, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(acc, axis=1) / N
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for start in range(0, N, BLOCK_N):
            offs_n = start + tl.arange(0, BLOCK_N)
            mask = row_mask[:, None] & (offs_n < N)[None, :]
            x = tl.load(x_rows + offs_n[None, :] * stride_xn, mask=mask, other=0.0).to(tl.float32)
            d = tl.where(mask, x - mean[:, None], 0.0)
            acc += d * d
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=1) / N + eps)
        for start in range(0, N, BLOCK_N):
            offs_n = start + tl.arange(0, BLOCK_N)
            col_mask = offs_n < N
            mask = row_mask[:, None] & col_mask[None, :]
            x = tl.load(x_rows + offs_n[None, :] * stride_xn, mask=mask, other=0.0,
                        eviction_policy="evict_first").to(tl.float32)
            w = tl.load(w_ptr + offs_n, mask=col_mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
            b = tl.load(b_ptr + offs_n, mask=col_mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
            y = (x - mean[:, None]) * rstd[:, None] * w[None, :] + b[None, :]
            tl.store(y_rows + offs_n[None, :], y.to(y_ptr.dtype.element_ty), mask=mask,
                     eviction_policy="evict_first")


def launch_config(M: int, N: int) -> dict:
    """Block shape and warps for an [M, N] input: whole rows up to MAX_FUSED_N, packed to ROW_TILE."""
    t = TUNABLES
    one_pass = N <= t["MAX_FUSED_N"]
    block_n = triton.next_power_of_2(N) if one_pass else t["LOOP_BLOCK_N"]
    block_m = max(1, min(t["ROW_TILE"] // block_n, triton.next_power_of_2(M)))
    num_warps = max(1, min(16, block_m * block_n // (32 * t["ELEMS_PER_THREAD"])))
    return dict(BLOCK_M=block_m, BLOCK_N=block_n, ONE_PASS=one_pass, num_warps=num_warps)


def layernorm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    assert x.dim() == 2, "x must be [rows, dim]"
    M, N = x.shape
    for p in (weight, bias):
        assert p.shape == (N,) and p.is_contiguous(), "weight and bias must be contiguous [dim] vectors"
        assert p.device == x.device and p.dtype == x.dtype
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    if M == 0 or N == 0:
        return y
    config = launch_config(M, N)
    grid = (triton.cdiv(M, config["BLOCK_M"]),)
    layernorm_kernel[grid](x, weight, bias, y, M, N, x.stride(0), x.stride(1), y.stride(0), eps, **config)
    return y


class ModelNew(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.randn(dim))
        self.bias = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        return layernorm(x, self.weight, self.bias, self.eps)
