"""Causal attention forward for Hopper: FlashAttention-2 with TMA loads, the mask only on diagonal tiles.

out = softmax(q @ k^T / sqrt(head_dim) + causal mask) @ v for q [batch, heads, seq, head_dim] and k, v
[batch, kv_heads, seq, head_dim] (kv_heads dividing heads: grouped-query attention; equal here).

One program per (batch * head, BLOCK_M queries); the longest causal rows are launched first, every (batch,
head) pair of one query block before the next, or with L2_SECTION_MB (0: off; not yet timed) in sections of
pairs whose K and V fit that many MB of L2, each section in that order before the next (as FlashAttention's
LPT scheduler, and cuda_cutlass_fmha.py's), so that the programs in flight share K/V tiles in L2. A program
keeps its query tile on chip and walks the keys in BLOCK_N steps with an online softmax in float32,
in log2 units (exp2, the 1/sqrt(d) * log2(e) scale folded into one multiply), rescaling the float32
accumulator when the running maximum moves; probabilities are rounded to the input dtype before
p @ v, as the reference does. Two loops, as Triton's 06-fused-attention tutorial: the keys strictly
before the query tile (no mask at all), then the BLOCK_M / BLOCK_N tiles on the diagonal (masked);
tiles past the diagonal are never loaded.

Two kernels run that schedule:
- attn_tma_kernel (what runs on CUDA): q, k, v and out through host-side TensorDescriptors over the
  [batch * heads, seq, head_dim] view (rank 3, so a tile past the end of one head's sequence is zero
  filled on load and clipped on store instead of reaching the next head), in head_dim blocks of 64, 128
  or 256: a head_dim below its block (80, 96: a multiple of 8, so rows stay 16-byte aligned) is loaded
  with its missing columns zero-filled by TMA (they add nothing to q @ k^T, and p @ v's are clipped on
  the store), where a pointer kernel would mask every load;
- attn_ptr_kernel: masked pointer loads, any head_dim (padded to a power of two) and any strides. It
  runs under TRITON_INTERPRET=1 (CPU checks), on a Triton without tensor descriptors, for head
  dims TMA cannot take (32, odd ones) and for non-contiguous inputs.

DISPATCH maps (head_dim, seq_len) buckets to block sizes, warps and stages; a bucket it does not name
takes TUNABLES. Flops: 4 * batch * heads * seq^2 * head_dim / 2 (the causal half of q @ k^T and p @ v).
Bytes (fewest): q, k, v read once and out written once.
"""

import functools
import math
import os
import re

import torch
import triton
import triton.language as tl

try:  # Triton >= 3.4: host-side TMA descriptors
    from triton.tools.tensor_descriptor import TensorDescriptor
except ImportError:  # pragma: no cover - older Triton: the pointer kernel only
    TensorDescriptor = None

TUNABLES = {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3, "L2_SECTION_MB": 0}
TUNABLE_CHOICES = {"BLOCK_M": [64, 128], "BLOCK_N": [32, 64, 128], "num_warps": [4, 8], "num_stages": [2, 3, 4, 5],
                   "L2_SECTION_MB": [0, 25, 50]}
TMA_HEAD_DIMS = (64, 128, 256)  # the head_dim blocks the descriptor kernel takes
LOG2E = 1.4426950408889634
# Shape buckets: upper edges per size constant, ascending (above the last edge: the top bucket).
BUCKETS = {"head_dim": [64, 128], "seq_len": [128, 1024, 4096]}
# Chosen from scripts/hopper_variants.py --plan tuning on the H200 (tuning-set shapes only, results/nvidia-h200/
# rounds/20261201-1202-followup-variants.tsv): 64 x 64 tiles in 4 warps up to 4096 positions (1.05-1.19x SDPA
# at 509, 2048 and 3001; 0.98x at 4096 against 0.96x for 128 x 128), 128 x 64 in 8 warps for long head_dim 64
# (1.06x at 16384), 128 x 128 in 8 warps for long head_dim 128 (0.90x at 8192, the best tried); head_dim 256
# past 1024 positions 64 x 64 in 4 warps, 3 stages (--plan wide, rounds/20261201-1510-wide-attention-variants.tsv:
# 1.04x at 6144 and 1.08x at 2048, against 0.71x and 0.81x for the prior's 2 stages). Short sequences
# (<= 128) and head_dim 256 up to 1024 keep the hand-written prior (not measured).
DISPATCH = {
    'head_dim<=64,seq_len<=128': {'BLOCK_M': 64, 'BLOCK_N': 64, 'num_warps': 4, 'num_stages': 2},
    'head_dim<=64,seq_len<=1024': {'BLOCK_M': 64, 'BLOCK_N': 64, 'num_warps': 4, 'num_stages': 3},
    'head_dim<=64,seq_len<=4096': {'BLOCK_M': 64, 'BLOCK_N': 64, 'num_warps': 4, 'num_stages': 3},
    'head_dim<=64,seq_len>4096': {'BLOCK_M': 128, 'BLOCK_N': 64, 'num_warps': 8, 'num_stages': 3},
    'head_dim<=128,seq_len<=128': {'BLOCK_M': 64, 'BLOCK_N': 64, 'num_warps': 4, 'num_stages': 2},
    'head_dim<=128,seq_len<=1024': {'BLOCK_M': 64, 'BLOCK_N': 64, 'num_warps': 4, 'num_stages': 3},
    'head_dim<=128,seq_len<=4096': {'BLOCK_M': 64, 'BLOCK_N': 64, 'num_warps': 4, 'num_stages': 3},
    'head_dim<=128,seq_len>4096': {'BLOCK_M': 128, 'BLOCK_N': 128, 'num_warps': 8, 'num_stages': 3},
    'head_dim>128,seq_len<=128': {'BLOCK_M': 64, 'BLOCK_N': 32, 'num_warps': 4, 'num_stages': 2},
    'head_dim>128,seq_len<=1024': {'BLOCK_M': 64, 'BLOCK_N': 32, 'num_warps': 4, 'num_stages': 2},
    'head_dim>128,seq_len<=4096': {'BLOCK_M': 64, 'BLOCK_N': 64, 'num_warps': 4, 'num_stages': 3},
    'head_dim>128,seq_len>4096': {'BLOCK_M': 64, 'BLOCK_N': 64, 'num_warps': 4, 'num_stages': 3},
}
# DISPATCH is the table of the GPU named here; `ksuite optimize` on another GPU writes that GPU's own table into
# DISPATCH_BY_GPU (its results folder name -> table), and dispatch_table() runs it there.
DISPATCH_GPU = "nvidia-h200"
DISPATCH_BY_GPU = {}


def bucket_of(sizes: dict) -> str:
    """'head_dim<=128,seq_len<=4096': each size's first range whose edge it does not pass."""
    return ",".join(next((f"{k}<={e}" for e in edges if sizes[k] <= e), f"{k}>{edges[-1]}")
                    for k, edges in BUCKETS.items())


@functools.cache
def this_gpu() -> str:
    """This GPU as ksuite names its results folder ('nvidia-h200'; Triton's interpreter: 'cpu-interpreter'):
    the key of its own table in DISPATCH_BY_GPU."""
    if not torch.cuda.is_available():
        return "cpu-interpreter"
    return re.sub(r"[^a-z0-9]+", "-", torch.cuda.get_device_name().lower()).strip("-")


def dispatch_table() -> dict:
    """This GPU's table: its own where a search on it wrote one, else DISPATCH."""
    return DISPATCH_BY_GPU.get(this_gpu(), DISPATCH)


@triton.jit
def _softmax_step(acc, l_i, m_i, qk, v, offs_m, offs_n, qk_scale, DIAGONAL: tl.constexpr):
    """One key tile of the online softmax: qk raw float32 scores [BLOCK_M, BLOCK_N], v [BLOCK_N, D]."""
    if DIAGONAL:  # keys after the query are masked out (never a whole row: key 0 of the tile is <= it)
        qk = tl.where(offs_m[:, None] >= offs_n[None, :], qk * qk_scale, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        qk = qk - m_ij[:, None]
    else:
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
    p = tl.math.exp2(qk)
    alpha = tl.math.exp2(m_i - m_ij)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    return acc, l_i, m_ij


@triton.jit
def tile_of(section, SECTIONS: tl.constexpr):
    """(batch * head, query block) of this program: program (i, j) is the i-th pair of the j-th query block from
    the last (the longest rows first); with SECTIONS, pairs walk in sections of `section`, each section's blocks
    before the next section's (the last section may be narrower). Without, no division is paid."""
    pairs = tl.num_programs(0)
    m_blocks = tl.num_programs(1)
    if not SECTIONS:
        return tl.program_id(0), m_blocks - 1 - tl.program_id(1)
    linear = tl.program_id(1) * pairs + tl.program_id(0)
    first = linear // (section * m_blocks) * section  # the section's first pair
    rest = linear - first * m_blocks
    width = tl.minimum(section, pairs - first)
    block = rest // width
    return first + rest - block * width, m_blocks - 1 - block


@triton.jit
def attn_tma_kernel(q_desc, k_desc, v_desc, o_desc, seq_len, heads, group, qk_scale, section,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, SECTIONS: tl.constexpr):
    bh, start_m = tile_of(section, SECTIONS)
    kv_bh = (bh // heads) * (heads // group) + (bh % heads) // group
    off_m = start_m * BLOCK_M
    offs_m = off_m + tl.arange(0, BLOCK_M)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    q = q_desc.load([bh, off_m, 0]).reshape(BLOCK_M, HEAD_DIM)
    # keys strictly before the query tile: nothing to mask
    for off_n in tl.range(0, off_m, BLOCK_N):
        k = k_desc.load([kv_bh, off_n, 0]).reshape(BLOCK_N, HEAD_DIM)
        v = v_desc.load([kv_bh, off_n, 0]).reshape(BLOCK_N, HEAD_DIM)
        acc, l_i, m_i = _softmax_step(acc, l_i, m_i, tl.dot(q, k.T), v, offs_m, off_n + tl.arange(0, BLOCK_N),
                                      qk_scale, False)
    # the diagonal tiles: mask the future (keys past seq_len arrive as zeros and are masked too)
    for off_n in tl.range(off_m, tl.minimum(off_m + BLOCK_M, seq_len), BLOCK_N):
        k = k_desc.load([kv_bh, off_n, 0]).reshape(BLOCK_N, HEAD_DIM)
        v = v_desc.load([kv_bh, off_n, 0]).reshape(BLOCK_N, HEAD_DIM)
        acc, l_i, m_i = _softmax_step(acc, l_i, m_i, tl.dot(q, k.T), v, offs_m, off_n + tl.arange(0, BLOCK_N),
                                      qk_scale, True)
    out = acc / l_i[:, None]
    o_desc.store([bh, off_m, 0], out.to(o_desc.dtype).reshape(1, BLOCK_M, HEAD_DIM))


@triton.jit
def _kv_tile(k_base, v_base, offs_n, offs_d, d_ok, seq_len, sk_s, sk_d, sv_s, sv_d, UPCAST: tl.constexpr):
    """The pointer kernel's k and v tiles at keys offs_n (zeros past seq_len and past head_dim)."""
    kv_mask = (offs_n[:, None] < seq_len) & d_ok[None, :]
    k = tl.load(k_base + offs_n[:, None] * sk_s + offs_d[None, :] * sk_d, mask=kv_mask, other=0.0)
    v = tl.load(v_base + offs_n[:, None] * sv_s + offs_d[None, :] * sv_d, mask=kv_mask, other=0.0)
    if UPCAST:  # only under the CPU interpreter, whose tl.dot cannot read bfloat16
        k = k.to(tl.float32)
        v = v.to(tl.float32)
    return k, v


@triton.jit
def attn_ptr_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, heads, group, qk_scale, section, head_dim,
                    sq_b, sq_h, sq_s, sq_d, sk_b, sk_h, sk_s, sk_d, sv_b, sv_h, sv_s, sv_d,
                    so_b, so_h, so_s, so_d,
                    BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, UPCAST: tl.constexpr,
                    SECTIONS: tl.constexpr):
    bh, start_m = tile_of(section, SECTIONS)
    b = bh // heads
    h = bh % heads
    kv_h = h // group
    off_m = start_m * BLOCK_M
    offs_m = off_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    d_ok = offs_d < head_dim
    q_base = q_ptr + b.to(tl.int64) * sq_b + h * sq_h
    k_base = k_ptr + b.to(tl.int64) * sk_b + kv_h * sk_h
    v_base = v_ptr + b.to(tl.int64) * sv_b + kv_h * sv_h
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    q = tl.load(q_base + offs_m[:, None] * sq_s + offs_d[None, :] * sq_d,
                mask=(offs_m[:, None] < seq_len) & d_ok[None, :], other=0.0)
    if UPCAST:  # only under the CPU interpreter, whose tl.dot cannot read bfloat16
        q = q.to(tl.float32)
    # the same two loops as attn_tma_kernel
    for off_n in range(0, off_m, BLOCK_N):
        offs_n = off_n + tl.arange(0, BLOCK_N)
        k, v = _kv_tile(k_base, v_base, offs_n, offs_d, d_ok, seq_len, sk_s, sk_d, sv_s, sv_d, UPCAST)
        acc, l_i, m_i = _softmax_step(acc, l_i, m_i, tl.dot(q, tl.trans(k)), v, offs_m, offs_n, qk_scale, False)
    for off_n in range(off_m, tl.minimum(off_m + BLOCK_M, seq_len), BLOCK_N):
        offs_n = off_n + tl.arange(0, BLOCK_N)
        k, v = _kv_tile(k_base, v_base, offs_n, offs_d, d_ok, seq_len, sk_s, sk_d, sv_s, sv_d, UPCAST)
        acc, l_i, m_i = _softmax_step(acc, l_i, m_i, tl.dot(q, tl.trans(k)), v, offs_m, offs_n, qk_scale, True)
    out = acc / l_i[:, None]
    o_base = o_ptr + b.to(tl.int64) * so_b + h * so_h
    tl.store(o_base + offs_m[:, None] * so_s + offs_d[None, :] * so_d, out.to(o_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < seq_len) & d_ok[None, :])


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0").lower() in ("1", "true", "on", "yes")


def tma_block(head_dim: int) -> int | None:
    """The descriptor kernel's head_dim block: the next power of two, where it is one of TMA_HEAD_DIMS
    and head_dim is a multiple of 8 (16-byte rows in 16-bit dtypes); else None."""
    block = triton.next_power_of_2(head_dim)
    return block if block in TMA_HEAD_DIMS and head_dim % 8 == 0 else None


def tma_ok(head_dim: int, *tensors: torch.Tensor) -> bool:
    """The descriptor kernel's rules: a head_dim block (tma_block), contiguous [batch, heads, seq,
    head_dim] tensors (so the rank-3 view exists), 16-byte aligned bases."""
    if TensorDescriptor is None or interpreting() or tma_block(head_dim) is None:
        return False
    return all(t.is_contiguous() and t.data_ptr() % 16 == 0 for t in tensors)


def launch_config(seq_len: int, head_dim: int) -> dict:
    """The bucket's tunables, made safe for this shape: no query tile much longer than the sequence,
    key tiles no longer than query tiles (the diagonal loop takes BLOCK_M / BLOCK_N of them)."""
    t = {**TUNABLES, **dispatch_table().get(bucket_of({"head_dim": head_dim, "seq_len": seq_len}), {})}
    block_m = max(16, min(t["BLOCK_M"], triton.next_power_of_2(seq_len)))
    block_n = max(16, min(t["BLOCK_N"], block_m))
    return dict(BLOCK_M=block_m, BLOCK_N=block_n, num_warps=t["num_warps"], num_stages=t["num_stages"],
                L2_SECTION_MB=t.get("L2_SECTION_MB", 0))


def section_of(pairs: int, kv_bytes: int, budget_mb: int) -> int:
    """Pairs a section holds: the largest power of two whose K and V (kv_bytes each pair) fit budget_mb MB, at
    least one, at most every pair (budget 0: every pair, one section)."""
    if budget_mb <= 0:
        return pairs
    fit, section = budget_mb * 2 ** 20 // max(kv_bytes, 1), 1
    while 2 * section <= fit and section < pairs:
        section *= 2
    return min(section, pairs)


def attention_causal(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    assert q.dim() == 4 and k.dim() == 4 and v.dim() == 4, "q, k, v must be [batch, heads, seq, head_dim]"
    B, H, S, D = q.shape
    H_kv = k.shape[1]
    assert k.shape == v.shape == (B, H_kv, S, D) and H % H_kv == 0, "k, v: [batch, kv_heads, seq, head_dim]"
    assert q.dtype == k.dtype == v.dtype and q.dtype in (torch.float16, torch.bfloat16), "float16 or bfloat16"
    o = torch.empty((B, H, S, D), dtype=q.dtype, device=q.device)
    if o.numel() == 0:
        return o
    cfg = launch_config(S, D)
    bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
    grid = (B * H, triton.cdiv(S, bm))
    qk_scale = LOG2E / math.sqrt(D)
    group = H // H_kv
    # a section counts query-head pairs; with grouped heads (group > 1) `group` of them share one K and V
    section = section_of(B * H, 2 * S * D * q.element_size() // group, cfg["L2_SECTION_MB"])
    options = dict(BLOCK_M=bm, BLOCK_N=bn, num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
                   SECTIONS=section < B * H)
    if tma_ok(D, q, k, v):
        block_d = tma_block(D)

        def desc(t, rows):
            return TensorDescriptor.from_tensor(t.view(-1, S, D), [1, rows, block_d])
        attn_tma_kernel[grid](desc(q, bm), desc(k, bn), desc(v, bn), desc(o, bm), S, H, group, qk_scale, section,
                              HEAD_DIM=block_d, **options)
    else:
        attn_ptr_kernel[grid](q, k, v, o, S, H, group, qk_scale, section, D, *q.stride(), *k.stride(), *v.stride(),
                              *o.stride(), BLOCK_D=max(16, triton.next_power_of_2(D)), UPCAST=interpreting(),
                              **options)
    return o


class ModelNew(torch.nn.Module):
    def forward(self, q, k, v):
        return attention_causal(q, k, v)
