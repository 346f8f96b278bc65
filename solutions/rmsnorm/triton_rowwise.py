"""RMSNorm, row in registers: each program loads BLOCK_M whole rows with one masked load, reduces the
sum of squares in float32, scales and writes, so every byte of x moves once (the starter reads each row
twice). Short rows are packed several to a program; rows longer than MAX_FUSED_N fall back to two
passes over column blocks (the second read mostly hits L2).

Bytes: x read once, y written once, weight read once: (2 * M * N + N) * esize. Streamed x and y carry
the evict_first hint, so they do not push the weight (re-read by every program) out of L2.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

# ROW_TILE: elements per program (rows are packed up to it); ELEMS_PER_THREAD sets num_warps;
# MAX_FUSED_N: longest row held in registers; LOOP_BLOCK_N: column block of the two-pass fallback.
TUNABLES = {"ROW_TILE": 8192, "ELEMS_PER_THREAD": 32, "MAX_FUSED_N": 16384, "LOOP_BLOCK_N": 4096}
TUNABLE_CHOICES = {"ROW_TILE": [2048, 4096, 8192, 16384], "ELEMS_PER_THREAD": [8, 16, 32],
                   "MAX_FUSED_N": [8192, 16384, 32768], "LOOP_BLOCK_N": [2048, 4096, 8192]}


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, M, N, stride_xm, stride_xn, stride_ym, eps,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, ONE_PASS: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = offs_m < M
    x_rows = x_ptr + offs_m.to(tl.int64)[:, None] * stride_xm
    y_rows = y_ptr + offs_m.to(tl.int64)[:, None] * stride_ym

    if ONE_PASS:
        # The whole row is one block: load once, reduce, write.
        offs_n = tl.arange(0, BLOCK_N)
        col_mask = offs_n < N
        mask = row_mask[:, None] & col_mask[None, :]
        x = tl.load(x_rows + offs_n[None, :] * stride_xn, mask=mask, other=0.0,
                    eviction_policy="evict_first").to(tl.float32)
        w = tl.load(w_ptr + offs_n, mask=col_mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / N + eps)
        y = x * rstd[:, None] * w[None, :]
        tl.store(y_rows + offs_n[None, :], y.to(y_ptr.dtype.element_ty), mask=mask,
                 eviction_policy="evict_first")
    else:
        # Long rows: sum of squares over column blocks, then a second pass that normalises.
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for start in range(0, N, BLOCK_N):
            offs_n = start + tl.arange(0, BLOCK_N)
            mask = row_mask[:, None] & (offs_n < N)[None, :]
            x = tl.load(x_rows + offs_n[None, :] * stride_xn, mask=mask, other=0.0).to(tl.float32)
            acc += x * x
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=1) / N + eps)
        for start in range(0, N, BLOCK_N):
            offs_n = start + tl.arange(0, BLOCK_N)
            col_mask = offs_n < N
            mask = row_mask[:, None] & col_mask[None, :]
            x = tl.load(x_rows + offs_n[None, :] * stride_xn, mask=mask, other=0.0,
                        eviction_policy="evict_first").to(tl.float32)
            w = tl.load(w_ptr + offs_n, mask=col_mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
            y = x * rstd[:, None] * w[None, :]
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


def rmsnorm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    assert x.dim() == 2, "x must be [rows, dim]"
    M, N = x.shape
    assert weight.shape == (N,) and weight.is_contiguous(), "weight must be a contiguous [dim] vector"
    assert x.device == weight.device and x.dtype == weight.dtype
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    if M == 0 or N == 0:
        return y
    config = launch_config(M, N)
    grid = (triton.cdiv(M, config["BLOCK_M"]),)
    rmsnorm_kernel[grid](x, weight, y, M, N, x.stride(0), x.stride(1), y.stride(0), eps, **config)
    return y


class ModelNew(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        return rmsnorm(x, self.weight, self.eps)
