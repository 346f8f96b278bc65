"""Triton starter for rotary: rotate-half RoPE, one program per (batch * head, block of positions).

Each program loads the two halves of its rows of x and the matching rows of cos and sin, and writes
out[:half] = x1 * cos1 - x2 * sin1 and out[half:] = x2 * cos2 + x1 * sin2, computed in float32.

Bytes: x read once and out written once (2 * B * H * S * D elements); the cos and sin rows are
re-read by every head but stay in L2, so DRAM sees them about once (2 * S * D elements).
"""

import torch
import triton
import triton.language as tl

TUNABLES = {"BLOCK_S": 16, "num_warps": 4}


@triton.jit
def rotary_kernel(
    x_ptr, cos_ptr, sin_ptr, out_ptr,
    H, S, HALF,
    stride_xb, stride_xh, stride_xs, stride_xd,
    stride_cs, stride_cd, stride_ss, stride_sd,
    BLOCK_S: tl.constexpr, BLOCK_HALF: tl.constexpr,
):
    pid_bh = tl.program_id(0)
    pid_s = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H
    offs_s = pid_s * BLOCK_S + tl.arange(0, BLOCK_S)
    offs_d = tl.arange(0, BLOCK_HALF)
    mask = (offs_s[:, None] < S) & (offs_d[None, :] < HALF)

    x_rows = x_ptr + b * stride_xb + h * stride_xh + offs_s[:, None] * stride_xs
    x1 = tl.load(x_rows + offs_d[None, :] * stride_xd, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_rows + (offs_d[None, :] + HALF) * stride_xd, mask=mask, other=0.0).to(tl.float32)
    cos_rows = cos_ptr + offs_s[:, None] * stride_cs
    cos1 = tl.load(cos_rows + offs_d[None, :] * stride_cd, mask=mask, other=0.0).to(tl.float32)
    cos2 = tl.load(cos_rows + (offs_d[None, :] + HALF) * stride_cd, mask=mask, other=0.0).to(tl.float32)
    sin_rows = sin_ptr + offs_s[:, None] * stride_ss
    sin1 = tl.load(sin_rows + offs_d[None, :] * stride_sd, mask=mask, other=0.0).to(tl.float32)
    sin2 = tl.load(sin_rows + (offs_d[None, :] + HALF) * stride_sd, mask=mask, other=0.0).to(tl.float32)

    out1 = x1 * cos1 - x2 * sin1
    out2 = x2 * cos2 + x1 * sin2

    # out is a new contiguous [B, H, S, D] tensor
    out_rows = out_ptr + (pid_bh * S + offs_s[:, None]) * (2 * HALF)
    tl.store(out_rows + offs_d[None, :], out1.to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(out_rows + offs_d[None, :] + HALF, out2.to(out_ptr.dtype.element_ty), mask=mask)


def rotary(x, cos, sin):
    assert x.dim() == 4, "x must be [batch, heads, seq, head_dim]"
    B, H, S, D = x.shape
    assert D % 2 == 0, "head_dim must be even"
    assert cos.shape == (S, D) and sin.shape == (S, D), "cos and sin must be [seq, head_dim]"
    assert x.dtype == cos.dtype == sin.dtype
    assert x.device == cos.device == sin.device
    out = torch.empty((B, H, S, D), dtype=x.dtype, device=x.device)
    block_s = TUNABLES["BLOCK_S"]
    grid = (B * H, triton.cdiv(S, block_s))
    rotary_kernel[grid](
        x, cos, sin, out,
        H, S, D // 2,
        *x.stride(), *cos.stride(), *sin.stride(),
        BLOCK_S=block_s, BLOCK_HALF=triton.next_power_of_2(D // 2),
        num_warps=TUNABLES["num_warps"],
    )
    return out


class ModelNew(torch.nn.Module):
    def forward(self, x, cos, sin):
        return rotary(x, cos, sin)
