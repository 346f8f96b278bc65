# ksuite optimize: kept 2026-11-30T02:34:34+00:00, run 20261130-022921, experiment 4,
# strategy search, from triton_starter, on NVIDIA H200
# search: BLOCK_N 64->32
# measured: 2x32x4096x128 float16: 888.75 us, 44 % SOL
# speedup vs best baseline: 0.5586800278684196
"""Triton starter for attention_causal: a plain flash-attention forward with a causal mask.

One program per (block of BLOCK_M queries, batch * head). It walks the keys of its block's causal
window in BLOCK_N steps, keeping a running row max m_i, a running softmax denominator l_i and a
float32 output accumulator rescaled as the max grows (online softmax), so the [seq, seq] scores
never reach memory. As in eager attention, the probabilities are rounded to the input dtype
before the second tl.dot.

Flops: q @ k^T and p @ v, 2 * 2 * B * H * S * S * D, halved by the causal mask.
Bytes (fewest): q, k, v read once, out written once: 4 * B * H * S * D elements.
"""

import math

import torch
import triton
import triton.language as tl

# ksuite optimize: fastest configuration measured per shape class
#   2x32x4096x128 float16: {'BLOCK_M': 64, 'BLOCK_N': 32, 'num_warps': 4, 'num_stages': 2}  (888.75 us)
TUNABLES = {'BLOCK_M': 64, 'BLOCK_N': 32, 'num_warps': 4, 'num_stages': 2}
# The values `ksuite optimize --strategy search` may try.
TUNABLE_CHOICES = {"BLOCK_M": [32, 64, 128], "BLOCK_N": [32, 64, 128], "num_warps": [4, 8], "num_stages": [1, 2, 3, 4]}


@triton.jit
def attention_kernel(
    q_ptr, k_ptr, v_ptr, out_ptr,
    H, S, D, sm_scale,
    stride_qb, stride_qh, stride_qs, stride_qd,
    stride_kb, stride_kh, stride_ks, stride_kd,
    stride_vb, stride_vh, stride_vs, stride_vd,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr, UPCAST: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    q_base = q_ptr + b * stride_qb + h * stride_qh
    k_base = k_ptr + b * stride_kb + h * stride_kh
    v_base = v_ptr + b * stride_vb + h * stride_vh

    q_mask = (offs_m[:, None] < S) & (offs_d[None, :] < D)
    q = tl.load(q_base + offs_m[:, None] * stride_qs + offs_d[None, :] * stride_qd, mask=q_mask, other=0.0)
    if UPCAST:  # only under the CPU interpreter, whose tl.dot cannot read bfloat16
        q = q.to(tl.float32)

    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    # causal: the queries of this block see keys 0 .. (last query of the block)
    end_n = tl.minimum((pid_m + 1) * BLOCK_M, S)
    for start_n in range(0, end_n, BLOCK_N):
        offs_kn = start_n + offs_n
        kt_mask = (offs_d[:, None] < D) & (offs_kn[None, :] < S)
        kt = tl.load(k_base + offs_kn[None, :] * stride_ks + offs_d[:, None] * stride_kd, mask=kt_mask, other=0.0)
        v_mask = (offs_kn[:, None] < S) & (offs_d[None, :] < D)
        v = tl.load(v_base + offs_kn[:, None] * stride_vs + offs_d[None, :] * stride_vd, mask=v_mask, other=0.0)
        if UPCAST:
            kt = kt.to(tl.float32)

        s = tl.dot(q, kt) * sm_scale
        visible = (offs_m[:, None] >= offs_kn[None, :]) & (offs_kn[None, :] < S)
        s = tl.where(visible, s, float("-inf"))
        # key 0 is visible to every row, so m_new is finite from the first block on
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        p = p.to(v.dtype)
        if UPCAST:
            p = p.to(tl.float32)
            v = v.to(tl.float32)
        acc = acc * alpha[:, None] + tl.dot(p, v)
        m_i = m_new

    out = acc / l_i[:, None]
    # out is a new contiguous [B, H, S, D] tensor
    out_ptrs = out_ptr + (pid_bh * S + offs_m[:, None]) * D + offs_d[None, :]
    tl.store(out_ptrs, out.to(out_ptr.dtype.element_ty), mask=q_mask)


def attention_causal(q, k, v):
    assert q.dim() == 4 and q.shape == k.shape == v.shape, "q, k, v must be [batch, heads, seq, head_dim]"
    assert q.dtype == k.dtype == v.dtype and q.dtype in (torch.float16, torch.bfloat16), "float16 or bfloat16"
    assert q.device == k.device == v.device
    B, H, S, D = q.shape
    out = torch.empty((B, H, S, D), dtype=q.dtype, device=q.device)
    t = TUNABLES
    grid = (triton.cdiv(S, t["BLOCK_M"]), B * H)
    attention_kernel[grid](
        q, k, v, out,
        H, S, D, 1.0 / math.sqrt(D),
        *q.stride(), *k.stride(), *v.stride(),
        BLOCK_M=t["BLOCK_M"], BLOCK_N=t["BLOCK_N"], BLOCK_D=max(16, triton.next_power_of_2(D)),
        UPCAST=q.device.type == "cpu" and q.dtype == torch.bfloat16,
        num_warps=t["num_warps"], num_stages=t["num_stages"],
    )
    return out


class ModelNew(torch.nn.Module):
    def forward(self, q, k, v):
        return attention_causal(q, k, v)
