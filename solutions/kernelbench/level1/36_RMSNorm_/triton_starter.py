"""ModelNew for KernelBench level1/36_RMSNorm_: x / sqrt(mean(x^2 over dim 1) + eps) on (B, F, *).

The reduced axis (features) has stride S = prod(spatial dims), so a program takes BLOCK_S neighbouring
positions (contiguous, coalesced loads) across all F features: pass 1 sums squares, pass 2 divides.
With F <= BLOCK_F the pass-2 read is of the tile pass 1 just loaded.
Bytes (fewest): x read once, y written once: 2 * B * F * S * 4.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

TUNABLES = {"MAX_BLOCK_F": 64, "TILE": 8192, "num_warps": 8}
TUNABLE_CHOICES = {"MAX_BLOCK_F": [16, 32, 64, 128], "TILE": [2048, 4096, 8192, 16384], "num_warps": [4, 8, 16]}


@triton.jit
def rmsnorm_dim1_kernel(x_ptr, y_ptr, F, S, eps, BLOCK_F: tl.constexpr, BLOCK_S: tl.constexpr):
    pid_s = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * F * S
    offs_s = pid_s * BLOCK_S + tl.arange(0, BLOCK_S)
    mask_s = offs_s < S

    acc = tl.zeros([BLOCK_S], dtype=tl.float32)
    for f0 in range(0, F, BLOCK_F):
        offs_f = f0 + tl.arange(0, BLOCK_F)
        offs = base + offs_f[:, None].to(tl.int64) * S + offs_s[None, :]
        x = tl.load(x_ptr + offs, mask=(offs_f[:, None] < F) & mask_s[None, :], other=0.0)
        acc += tl.sum(x * x, axis=0)
    rms = tl.broadcast_to(tl.sqrt_rn(acc / F + eps)[None, :], (BLOCK_F, BLOCK_S))  # div_rn does not broadcast

    for f0 in range(0, F, BLOCK_F):
        offs_f = f0 + tl.arange(0, BLOCK_F)
        offs = base + offs_f[:, None].to(tl.int64) * S + offs_s[None, :]
        mask = (offs_f[:, None] < F) & mask_s[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(y_ptr + offs, tl.div_rn(x, rms), mask=mask)


def rmsnorm_dim1(x: torch.Tensor, eps: float) -> torch.Tensor:
    assert x.dim() >= 2, "x must be (batch, features, *)"
    x = x.contiguous()
    B, F = x.shape[0], x.shape[1]
    S = x.numel() // max(B * F, 1)
    y = torch.empty_like(x)
    if x.numel() == 0:
        return y
    BLOCK_F = min(TUNABLES["MAX_BLOCK_F"], triton.next_power_of_2(F))
    BLOCK_S = min(triton.next_power_of_2(S), max(16, TUNABLES["TILE"] // BLOCK_F))
    grid = (triton.cdiv(S, BLOCK_S), B)
    rmsnorm_dim1_kernel[grid](x, y, F, S, eps, BLOCK_F=BLOCK_F, BLOCK_S=BLOCK_S, num_warps=TUNABLES["num_warps"])
    return y


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rmsnorm_dim1(x, self.eps)
