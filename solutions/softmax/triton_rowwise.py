"""Softmax, row in registers: each program loads BLOCK_M whole rows with one masked load, takes the
row max and the sum of exponentials from registers and writes exp(x - max) / sum, so every byte of x
moves once (the starter reads each row twice). Short rows are packed several to a program; rows
longer than MAX_FUSED_N fall back to an online pass plus a write pass over column blocks.

Bytes: x read once, y written once: 2 * M * N * esize. Both streams carry the evict_first hint.
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
def softmax_kernel(x_ptr, y_ptr, M, N, stride_xm, stride_xn, stride_ym,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, ONE_PASS: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = offs_m < M
    x_rows = x_ptr + offs_m.to(tl.int64)[:, None] * stride_xm
    y_rows = y_ptr + offs_m.to(tl.int64)[:, None] * stride_ym

    if ONE_PASS:
        offs_n = tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (offs_n < N)[None, :]
        x = tl.load(x_rows + offs_n[None, :] * stride_xn, mask=mask, other=float("-inf"),
                    eviction_policy="evict_first").to(tl.float32)
        z = tl.exp(x - tl.max(x, axis=1)[:, None])  # padding lanes: exp(-inf) = 0
        inv_s = 1.0 / tl.sum(z, axis=1)
        tl.store(y_rows + offs_n[None, :], (z * inv_s[:, None]).to(y_ptr.dtype.element_ty), mask=mask,
                 eviction_policy="evict_first")
    else:
        # Long rows, pass 1 (online): m is the running max, s the sum of exp(x - m); the first block
        # always holds a real element of each real row, so m is finite after it.
        m = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
        s = tl.zeros([BLOCK_M], dtype=tl.float32)
        for start in range(0, N, BLOCK_N):
            offs_n = start + tl.arange(0, BLOCK_N)
            mask = row_mask[:, None] & (offs_n < N)[None, :]
            x = tl.load(x_rows + offs_n[None, :] * stride_xn, mask=mask, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(x, axis=1))
            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new[:, None]), axis=1)
            m = m_new
        inv_s = 1.0 / s
        # Pass 2: write the normalised exponentials.
        for start in range(0, N, BLOCK_N):
            offs_n = start + tl.arange(0, BLOCK_N)
            mask = row_mask[:, None] & (offs_n < N)[None, :]
            x = tl.load(x_rows + offs_n[None, :] * stride_xn, mask=mask, other=float("-inf"),
                        eviction_policy="evict_first").to(tl.float32)
            y = tl.exp(x - m[:, None]) * inv_s[:, None]
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


def softmax(x: torch.Tensor) -> torch.Tensor:
    assert x.dim() == 2, "x must be [rows, dim]"
    assert x.is_floating_point()
    M, N = x.shape
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    if M == 0 or N == 0:
        return y
    config = launch_config(M, N)
    grid = (triton.cdiv(M, config["BLOCK_M"]),)
    softmax_kernel[grid](x, y, M, N, x.stride(0), x.stride(1), y.stride(0), **config)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmax(x)
