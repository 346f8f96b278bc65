"""Rotary (rotate-half RoPE), head tiles: each program takes BLOCK_S positions of BLOCK_H heads at once
(a [BLOCK_H, BLOCK_S, head_dim / 2] tile per half), loads the matching cos and sin rows once and
broadcasts them over its heads. The starter re-reads cos and sin for every head (two bytes of cos and
sin from L2 per byte of x) in 16-position tiles of one head; here that is two per BLOCK_H bytes of x,
and each program (2 heads x 16 positions) moves 8 KB of x in and 8 KB of out, all its loads issued
before its stores.

out[:half] = x1 * cos1 - x2 * sin1 and out[half:] = x2 * cos2 + x1 * sin2, computed in float32.

Bytes: x read once and out written once (2 * B * H * S * D elements), cos and sin read about once from
DRAM (2 * S * D elements; they stay in L2, marked evict_last, while x and out stream with evict_first).
"""

import torch
import triton
import triton.language as tl

TUNABLES = {"BLOCK_H": 2, "BLOCK_S": 16, "num_warps": 8}
TUNABLE_CHOICES = {"BLOCK_H": [1, 2, 4, 8, 16], "BLOCK_S": [4, 8, 16, 32, 64], "num_warps": [4, 8, 16]}


@triton.jit
def rotary_kernel(
    x_ptr, cos_ptr, sin_ptr, out_ptr,
    BH, H, S, HALF,
    stride_xb, stride_xh, stride_xs, stride_xd,
    stride_cs, stride_cd, stride_ss, stride_sd,
    BLOCK_H: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_HALF: tl.constexpr,
):
    pid_s = tl.program_id(0)
    pid_h = tl.program_id(1)
    # [BLOCK_H, 1, 1] flat (batch, head) indices, [1, BLOCK_S, 1] positions, [1, 1, BLOCK_HALF] dims
    offs_h = (pid_h * BLOCK_H + tl.arange(0, BLOCK_H))[:, None, None]
    offs_s = (pid_s * BLOCK_S + tl.arange(0, BLOCK_S))[None, :, None]
    offs_d = tl.arange(0, BLOCK_HALF)[None, None, :]
    sd_mask = (offs_s < S) & (offs_d < HALF)
    mask = (offs_h < BH) & sd_mask

    # cos and sin rows of these positions, loaded once for all BLOCK_H heads
    cos_rows = cos_ptr + offs_s * stride_cs
    sin_rows = sin_ptr + offs_s * stride_ss
    cos1 = tl.load(cos_rows + offs_d * stride_cd, mask=sd_mask, other=0.0, eviction_policy="evict_last")
    cos2 = tl.load(cos_rows + (offs_d + HALF) * stride_cd, mask=sd_mask, other=0.0, eviction_policy="evict_last")
    sin1 = tl.load(sin_rows + offs_d * stride_sd, mask=sd_mask, other=0.0, eviction_policy="evict_last")
    sin2 = tl.load(sin_rows + (offs_d + HALF) * stride_sd, mask=sd_mask, other=0.0, eviction_policy="evict_last")

    heads = offs_h.to(tl.int64)
    x_rows = x_ptr + (heads // H) * stride_xb + (heads % H) * stride_xh + offs_s * stride_xs
    x1 = tl.load(x_rows + offs_d * stride_xd, mask=mask, other=0.0, eviction_policy="evict_first")
    x2 = tl.load(x_rows + (offs_d + HALF) * stride_xd, mask=mask, other=0.0, eviction_policy="evict_first")
    x1 = x1.to(tl.float32)
    x2 = x2.to(tl.float32)
    out1 = x1 * cos1.to(tl.float32) - x2 * sin1.to(tl.float32)
    out2 = x2 * cos2.to(tl.float32) + x1 * sin2.to(tl.float32)

    # out is a new contiguous [B, H, S, D] tensor
    out_rows = out_ptr + (heads * S + offs_s) * (2 * HALF)
    tl.store(out_rows + offs_d, out1.to(out_ptr.dtype.element_ty), mask=mask, eviction_policy="evict_first")
    tl.store(out_rows + offs_d + HALF, out2.to(out_ptr.dtype.element_ty), mask=mask, eviction_policy="evict_first")


def rotary(x, cos, sin):
    assert x.dim() == 4, "x must be [batch, heads, seq, head_dim]"
    B, H, S, D = x.shape
    assert D % 2 == 0, "head_dim must be even"
    assert cos.shape == (S, D) and sin.shape == (S, D), "cos and sin must be [seq, head_dim]"
    assert x.dtype == cos.dtype == sin.dtype
    assert x.device == cos.device == sin.device
    out = torch.empty((B, H, S, D), dtype=x.dtype, device=x.device)
    if out.numel() == 0:
        return out
    block_h = min(TUNABLES["BLOCK_H"], triton.next_power_of_2(B * H))
    block_s = min(TUNABLES["BLOCK_S"], triton.next_power_of_2(S))
    grid = (triton.cdiv(S, block_s), triton.cdiv(B * H, block_h))
    rotary_kernel[grid](
        x, cos, sin, out,
        B * H, H, S, D // 2,
        *x.stride(), *cos.stride(), *sin.stride(),
        BLOCK_H=block_h, BLOCK_S=block_s, BLOCK_HALF=triton.next_power_of_2(D // 2),
        num_warps=TUNABLES["num_warps"],
    )
    return out


class ModelNew(torch.nn.Module):
    def forward(self, x, cos, sin):
        return rotary(x, cos, sin)
