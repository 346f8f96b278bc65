"""Rotary (rotate-half RoPE) for every shape: one kernel family, a dispatch table from shape bucket to
launch configuration.

out[:half] = x1 * cos1 - x2 * sin1 and out[half:] = x2 * cos2 + x1 * sin2, computed in float32, one
rounding. The fastest launch differs by shape: at 2x32x4096x128 triton_heads (2 heads per program,
positions fastest) beat the starter, 38.2 against 42.9 us, but at 1x32x8192x128 the starter (one
head per program, heads fastest) took 41.2 us and triton_heads 63.3; decoding (1..16 positions) has
almost no positions to tile. So one kernel with two forms, picked per bucket of (head_dim, seq_len,
num_heads):
- heads (FLAT False): a [BLOCK_H heads, BLOCK_S positions, head_dim / 2] tile per half; the cos and sin
  rows of its positions are loaded once and broadcast over its heads. HEADS_FASTEST orders the
  programs: True walks the heads of one position block first (the concurrent programs share cos and
  sin rows in L2: triton_starter is BLOCK_H 1, BLOCK_S 16, 4 warps), False walks the positions of one
  head block first (x read in address order: triton_heads is BLOCK_H 2, BLOCK_S 16, 8 warps);
- flat (FLAT True): BLOCK_S consecutive rows of x viewed as [batch * heads * seq, head_dim], each with
  its own cos and sin row (from L2), so a program is full even at one position of many heads (new: for
  decoding and short prompts, the way torch.compile lays a pointwise kernel out).
- chunks (CHUNKS True): the flat form in pieces of CHUNK columns (16 bytes) instead of half-rows padded to
  a power of two: a half-row of head_dim 96 is 48 columns, which the other forms hold in a 64-wide block, a
  quarter of the lanes idle; here it is six pieces of 8, every lane working (where the half is a power of two,
  the same columns as the flat form's, laid out in pieces).
- pointwise (POINTWISE True, new 2026-12-05): torch.compile's layout, one element of the output per lane over
  the contiguous [batch * heads * seq * head_dim] vector, BLOCK_S rows of it a program: each lane loads its x, its
  partner in the other half (two masked loads, one per half, so both stay 16-byte vectors), its cos and sin, with
  head_dim a compile-time constant so that no division is a loop. Why: at decoding shapes torch.compile's kernel
  is 0.25-0.5 us ahead of every form above even by the fast end of the samples (by median the gap looks larger,
  part of it the timing's spread; docs/results-notes.md, 2026-12-05), and its layout was the one not tried.
  Contiguous x and tables with unit column stride only; elsewhere the flat form runs instead.
Index math stays off the loads' path (2026-12-04): the heads form takes its blocks from a 2-D grid and both
forms address x with one stride where its layout allows, 32-bit below 2**30 elements, so no division (a few
dozen dependent instructions each, a 64-bit one a call) precedes a load of x: at 1x32x1x128 the first load of
x comes after 65 instructions instead of 117, in the flat form after 77 instead of 197 (sm_90 SASS).
HINTS (any form, on by default) puts evict_first on x's loads and out's store, so that the tables keep their room in
L2; off, they carry no policy (new 2026-12-06: the same switch in rmsnorm's family was kept at the H100's large shapes).
LOADS_TOGETHER (any form) issues the tables' and x's loads as volatile loads, which ptxas keeps in order, so all
are out before the first is used: 1 load round instead of 3 at 1x16x1x256 (timed on the H200, 2026-12-05: it does
not pay, below).
DISPATCH (written by `ksuite optimize`, from timings on the workload's tuning shapes only) maps each
bucket to the tunables; a bucket it does not name runs TUNABLES (the starter's configuration, the
fastest measured at the workload's batch of one).

Bytes: x read once and out written once (2 * B * H * S * D elements), cos and sin read about once from
DRAM (2 * S * D elements; they stay in L2, marked evict_last, while x and out carry evict_first).
"""

import functools
import re

import torch
import triton
import triton.language as tl

TUNABLES = {"FLAT": False, "BLOCK_H": 1, "BLOCK_S": 16, "HEADS_FASTEST": True, "num_warps": 4, "CHUNKS": False,
            "LOADS_TOGETHER": False, "POINTWISE": False, "HINTS": True}
TUNABLE_CHOICES = {"FLAT": [False, True], "BLOCK_H": [1, 2, 4, 8], "BLOCK_S": [1, 2, 4, 8, 16, 32, 64],
                   "HEADS_FASTEST": [True, False], "num_warps": [2, 4, 8, 16], "CHUNKS": [False, True],
                   "LOADS_TOGETHER": [False, True], "POINTWISE": [False, True], "HINTS": [True, False]}
# LOADS_TOGETHER (every load of a tile out before the first is used) was kept in 2 of 30 buckets as each
# searched bucket's first step on the H200, 2026-12-05, and lost up to 0.74x at long rows: no longer a seed,
# still a tunable.
# The seeds: torch.compile's own pointwise launches, as its kernels cached on the H200 show (2026-12-05, the
# inductor folder of a bench round's cache: XBLOCK and num_warps per shape). From about 400k elements up it runs
# 1024 elements a program on four warps, one 16-byte vector of each operand a lane (BLOCK_S 8 at head_dim 96-128;
# at BLOCK_S 16 a lane holds two vectors and ptxas issues the second set after the first is used, 3-5 load rounds).
# Under about 50k elements (decoding) it runs 128-256 elements a program on four warps, one or two a lane:
# 32 programs of 128 at 1x32x1x128, 192 of 256 at 1x32x16x96, where the 1024-element launch makes 4 and 48. The
# first seed is that launch (one row a program); the search's BLOCK_S steps reach 2 and 4 rows from either seed.
# Timed in the 8 decode buckets (H200, 2026-12-05, ledger optimize/rotary-20261205-125148.tsv): it lost or tied in
# every one (0.95-0.99x, paired) beside the table's entries; still the first step, so each new search re-asks.
# HINTS off (x and out with no evict_first: new 2026-12-06) is the first seed: in rmsnorm's family the same switch was
# kept in five of the H100's buckets, 1.4-3.7 % at its large shapes (solutions/rmsnorm/NOTES.md). Here on the H100
# (2026-12-06, ledger optimize/rotary-20261206-132054.tsv) off was kept in 7 of the 16 buckets past 1024 positions,
# 1.8-5.4 % each; held-out A/B 1.029x (solutions/rotary/NOTES.md, "HINTS"). The H200 has not searched it yet.
TUNABLE_SEEDS = [{"HINTS": False}, {"POINTWISE": True, "BLOCK_S": 1, "num_warps": 4},
                 {"POINTWISE": True, "BLOCK_S": 8, "num_warps": 4}]
# The flat form takes one head a program (BLOCK_H unused): a search step on BLOCK_H turns FLAT off as well.
# CHUNKS is a flat form of its own (FLAT, BLOCK_H and HEADS_FASTEST unused): a step on one of those turns it off.
# POINTWISE is a form of its own too (it reads only BLOCK_S and num_warps): a step on any other form's switch turns
# it off.
TUNABLE_OVERRIDES = {"FLAT": ["BLOCK_H"], "CHUNKS": ["FLAT", "BLOCK_H", "HEADS_FASTEST"],
                     "POINTWISE": ["FLAT", "BLOCK_H", "HEADS_FASTEST", "CHUNKS", "LOADS_TOGETHER"]}
MAX_PER_THREAD = 32  # x values (both halves) a thread may hold; with cos, sin and out, more spills
MAX_GRID_Y = 65535  # CUDA's limit on a grid's second axis: past it the heads form divides the program id
MIN_PER_THREAD = 8  # fewer and a thread's accesses are narrower than 16 bytes: cap the warps instead
# Shape buckets: upper edges per size constant, ascending (above the last edge: the top bucket).
BUCKETS = {'head_dim': [64, 96, 128], 'seq_len': [16, 1024, 8192], 'num_heads': [16]}
# ksuite optimize table: run 20261205-160342 on NVIDIA H200,
# ksuite optimize table: from the tuning shapes only;
# ksuite optimize table: 32 of 32 buckets tuned at their own shapes (this run: 4 at probe shapes, 2 edge probes),
# ksuite optimize table: the rest copy the nearest tuned bucket's entry
DISPATCH = {
    'head_dim<=64,seq_len<=16,num_heads<=16': {'CHUNKS': True},
    'head_dim<=64,seq_len<=16,num_heads>16': {},
    'head_dim<=64,seq_len<=1024,num_heads<=16': {},
    'head_dim<=64,seq_len<=1024,num_heads>16': {'BLOCK_H': 4},
    'head_dim<=64,seq_len<=8192,num_heads<=16': {'BLOCK_H': 4},
    'head_dim<=64,seq_len<=8192,num_heads>16': {'BLOCK_H': 4, 'BLOCK_S': 8},
    'head_dim<=64,seq_len>8192,num_heads<=16': {'BLOCK_H': 4},
    'head_dim<=64,seq_len>8192,num_heads>16': {'BLOCK_H': 4, 'POINTWISE': True},
    'head_dim<=96,seq_len<=16,num_heads<=16': {'BLOCK_S': 8, 'POINTWISE': True},
    'head_dim<=96,seq_len<=16,num_heads>16': {'BLOCK_S': 8},
    'head_dim<=96,seq_len<=1024,num_heads<=16': {'BLOCK_S': 8, 'POINTWISE': True},
    'head_dim<=96,seq_len<=1024,num_heads>16': {'BLOCK_S': 8, 'POINTWISE': True},
    'head_dim<=96,seq_len<=8192,num_heads<=16': {'BLOCK_S': 8, 'POINTWISE': True},
    'head_dim<=96,seq_len<=8192,num_heads>16': {'BLOCK_S': 8, 'POINTWISE': True},
    'head_dim<=96,seq_len>8192,num_heads<=16': {'FLAT': True, 'BLOCK_S': 8, 'POINTWISE': True},
    'head_dim<=96,seq_len>8192,num_heads>16': {'FLAT': True, 'BLOCK_S': 8, 'POINTWISE': True},
    'head_dim<=128,seq_len<=16,num_heads<=16': {},
    'head_dim<=128,seq_len<=16,num_heads>16': {},
    'head_dim<=128,seq_len<=1024,num_heads<=16': {},
    'head_dim<=128,seq_len<=1024,num_heads>16': {'FLAT': True},
    'head_dim<=128,seq_len<=8192,num_heads<=16': {'FLAT': True},
    'head_dim<=128,seq_len<=8192,num_heads>16': {'FLAT': True},
    'head_dim<=128,seq_len>8192,num_heads<=16': {},
    'head_dim<=128,seq_len>8192,num_heads>16': {},
    'head_dim>128,seq_len<=16,num_heads<=16': {'FLAT': True, 'BLOCK_S': 8},
    'head_dim>128,seq_len<=16,num_heads>16': {'FLAT': True, 'BLOCK_S': 8},
    'head_dim>128,seq_len<=1024,num_heads<=16': {'BLOCK_S': 8},
    'head_dim>128,seq_len<=1024,num_heads>16': {},
    'head_dim>128,seq_len<=8192,num_heads<=16': {},
    'head_dim>128,seq_len<=8192,num_heads>16': {'BLOCK_S': 8},
    'head_dim>128,seq_len>8192,num_heads<=16': {},
    'head_dim>128,seq_len>8192,num_heads>16': {},
}
# DISPATCH is the table of the GPU named here; `ksuite optimize` on another GPU writes that GPU's own table into
# DISPATCH_BY_GPU (its results folder name -> table), and dispatch_table() runs it there.
DISPATCH_GPU = "nvidia-h200"
DISPATCH_BY_GPU = {
    'nvidia-h100-80gb-hbm3': {
        # ksuite optimize table: run 20261207-081857 on NVIDIA H100 80GB HBM3,
        # ksuite optimize table: from the tuning shapes only;
        # ksuite optimize table: 32 of 32 buckets tuned at their own shapes,
        # ksuite optimize table: the rest copy the nearest tuned bucket's entry;
        # ksuite optimize table: this run: 16 searched, 7 at probe shapes, 4 edge probes;
        # ksuite optimize table: the entries no search on this GPU has timed are DISPATCH's, from nvidia-h200
        'head_dim<=64,seq_len<=16,num_heads<=16': {'CHUNKS': True},
        'head_dim<=64,seq_len<=16,num_heads>16': {},
        'head_dim<=64,seq_len<=1024,num_heads<=16': {},
        'head_dim<=64,seq_len<=1024,num_heads>16': {'BLOCK_H': 4, 'POINTWISE': True},
        'head_dim<=64,seq_len<=8192,num_heads<=16': {'BLOCK_H': 4},
        'head_dim<=64,seq_len<=8192,num_heads>16': {'BLOCK_H': 4, 'BLOCK_S': 8},
        'head_dim<=64,seq_len>8192,num_heads<=16': {'BLOCK_H': 4},
        'head_dim<=64,seq_len>8192,num_heads>16': {'BLOCK_H': 4, 'POINTWISE': True},
        'head_dim<=96,seq_len<=16,num_heads<=16': {'BLOCK_S': 8, 'POINTWISE': True},
        'head_dim<=96,seq_len<=16,num_heads>16': {'BLOCK_S': 8},
        'head_dim<=96,seq_len<=1024,num_heads<=16': {'BLOCK_S': 8, 'POINTWISE': True},
        'head_dim<=96,seq_len<=1024,num_heads>16': {'BLOCK_S': 8, 'POINTWISE': True},
        'head_dim<=96,seq_len<=8192,num_heads<=16': {'BLOCK_S': 8, 'POINTWISE': True},
        'head_dim<=96,seq_len<=8192,num_heads>16': {'BLOCK_S': 8, 'POINTWISE': True},
        'head_dim<=96,seq_len>8192,num_heads<=16': {'BLOCK_H': 2, 'BLOCK_S': 8, 'HINTS': False},
        'head_dim<=96,seq_len>8192,num_heads>16': {'FLAT': True, 'BLOCK_S': 8, 'POINTWISE': True, 'HINTS': False},
        'head_dim<=128,seq_len<=16,num_heads<=16': {},
        'head_dim<=128,seq_len<=16,num_heads>16': {},
        'head_dim<=128,seq_len<=1024,num_heads<=16': {},
        'head_dim<=128,seq_len<=1024,num_heads>16': {'FLAT': True},
        'head_dim<=128,seq_len<=8192,num_heads<=16': {'FLAT': True},
        'head_dim<=128,seq_len<=8192,num_heads>16': {'FLAT': True, 'HINTS': False},
        'head_dim<=128,seq_len>8192,num_heads<=16': {'HINTS': False},
        'head_dim<=128,seq_len>8192,num_heads>16': {'HINTS': False},
        'head_dim>128,seq_len<=16,num_heads<=16': {'FLAT': True, 'BLOCK_S': 8},
        'head_dim>128,seq_len<=16,num_heads>16': {'FLAT': True, 'BLOCK_S': 8},
        'head_dim>128,seq_len<=1024,num_heads<=16': {'BLOCK_S': 8},
        'head_dim>128,seq_len<=1024,num_heads>16': {},
        'head_dim>128,seq_len<=8192,num_heads<=16': {},
        'head_dim>128,seq_len<=8192,num_heads>16': {'BLOCK_S': 8, 'HINTS': False},
        'head_dim>128,seq_len>8192,num_heads<=16': {'HINTS': False},
        'head_dim>128,seq_len>8192,num_heads>16': {'HINTS': False},
    },
}


def bucket_of(sizes: dict) -> str:
    """'dim<=4096,batch_size<=64': each size's first range whose edge it does not pass."""
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
def strided_rows(x_ptr, heads, pos, H, stride_xb, stride_xh, stride_xs):
    """x's rows where no one stride reaches them: the (batch, head) index split by division."""
    return x_ptr + (heads // H) * stride_xb + (heads % H) * stride_xh + pos * stride_xs


@triton.jit
def flat_tile(x_ptr, out_ptr, BH, H, S, HALF, stride_xb, stride_xh, stride_xs,
              BLOCK_S: tl.constexpr, BLOCK_HALF: tl.constexpr, CHUNKS: tl.constexpr, CHUNK: tl.constexpr,
              UNITS: tl.constexpr, UNIFORM: tl.constexpr, WIDE: tl.constexpr):
    """The flat forms' tile: BLOCK_S consecutive rows r = (batch * H + head) * S + position, or with CHUNKS
    BLOCK_S consecutive pieces u = r * UNITS + k, piece k covering columns [k * CHUNK, (k + 1) * CHUNK) of each
    half (UNITS a constant: the division is a multiply and a shift). (row mask, positions, column offsets,
    x's rows, out's rows)."""
    if WIDE:
        items = tl.program_id(0).to(tl.int64) * BLOCK_S + tl.arange(0, BLOCK_S)
    else:
        items = tl.program_id(0) * BLOCK_S + tl.arange(0, BLOCK_S)
    if CHUNKS:
        rows = (items // UNITS)[None, :, None]
        offs_d = ((items % UNITS) * CHUNK)[None, :, None] + tl.arange(0, CHUNK)[None, None, :]
    else:
        rows = items[None, :, None]
        offs_d = tl.arange(0, BLOCK_HALF)[None, None, :]
    pos = rows % S
    if UNIFORM:
        x_rows = x_ptr + rows * stride_xs
    else:
        x_rows = strided_rows(x_ptr, rows // S, pos, H, stride_xb, stride_xh, stride_xs)
    return rows < BH * S, pos, offs_d, x_rows, out_ptr + rows * (2 * HALF)


@triton.jit
def heads_tile(x_ptr, out_ptr, BH, H, S, HALF, num_s_blocks, num_h_blocks, stride_xb, stride_xh, stride_xs,
               BLOCK_H: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_HALF: tl.constexpr, HEADS_FASTEST: tl.constexpr,
               GRID_2D: tl.constexpr, UNIFORM: tl.constexpr, WIDE: tl.constexpr):
    """The heads form's tile: BLOCK_H heads by BLOCK_S positions, the blocks from a 2-D grid (axis 0 the faster
    walk) or, past CUDA's second-axis limit, from one divided program id. (row mask, positions, column
    offsets, x's rows, out's rows)."""
    if GRID_2D:
        if HEADS_FASTEST:
            pid_h = tl.program_id(0)
            pid_s = tl.program_id(1)
        else:
            pid_s = tl.program_id(0)
            pid_h = tl.program_id(1)
    else:
        pid = tl.program_id(0)
        if HEADS_FASTEST:
            pid_h = pid % num_h_blocks
            pid_s = pid // num_h_blocks
        else:
            pid_s = pid % num_s_blocks
            pid_h = pid // num_s_blocks
    heads = (pid_h * BLOCK_H + tl.arange(0, BLOCK_H))[:, None, None]
    pos = (pid_s * BLOCK_S + tl.arange(0, BLOCK_S))[None, :, None]
    if WIDE:
        heads = heads.to(tl.int64)
        pos = pos.to(tl.int64)
    if UNIFORM:
        x_rows = x_ptr + heads * stride_xh + pos * stride_xs
    else:
        x_rows = strided_rows(x_ptr, heads, pos, H, stride_xb, stride_xh, stride_xs)
    out_rows = out_ptr + (heads * S + pos) * (2 * HALF)  # out is a new contiguous [B, H, S, D] tensor
    return (heads < BH) & (pos < S), pos, tl.arange(0, BLOCK_HALF)[None, None, :], x_rows, out_rows


@triton.jit
def rotary_kernel(
    x_ptr, cos_ptr, sin_ptr, out_ptr,
    BH, H, S, HALF, num_s_blocks, num_h_blocks,
    stride_xb, stride_xh, stride_xs, stride_xd,
    stride_cs, stride_cd, stride_ss, stride_sd,
    BLOCK_H: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_HALF: tl.constexpr,
    FLAT: tl.constexpr, HEADS_FASTEST: tl.constexpr,
    GRID_2D: tl.constexpr, UNIFORM: tl.constexpr, WIDE: tl.constexpr,
    CHUNKS: tl.constexpr = False, CHUNK: tl.constexpr = 8, UNITS: tl.constexpr = 1,
    LOADS_TOGETHER: tl.constexpr = False, X_EVICTION: tl.constexpr = "evict_first",
):
    # Index math stays off the loads' path where the host says it may: a division is a few dozen dependent
    # instructions (a 64-bit one a call), paid before the first load at decoding shapes. GRID_2D: the heads
    # form's blocks come from a 2-D grid; UNIFORM: x's address is a multiple of one stride (rows of the flat
    # forms, heads of the other), no split into batch and head; WIDE: offsets past 2**31 need 64-bit math.
    if FLAT or CHUNKS:
        row_mask, pos, offs_d, x_rows, out_rows = flat_tile(
            x_ptr, out_ptr, BH, H, S, HALF, stride_xb, stride_xh, stride_xs,
            BLOCK_S, BLOCK_HALF, CHUNKS, CHUNK, UNITS, UNIFORM, WIDE)
    else:
        row_mask, pos, offs_d, x_rows, out_rows = heads_tile(
            x_ptr, out_ptr, BH, H, S, HALF, num_s_blocks, num_h_blocks, stride_xb, stride_xh, stride_xs,
            BLOCK_H, BLOCK_S, BLOCK_HALF, HEADS_FASTEST, GRID_2D, UNIFORM, WIDE)
    d_mask = offs_d < HALF
    mask = row_mask & d_mask
    # the heads form loads each cos and sin row once for all BLOCK_H heads (masked by position only)
    table_mask = mask if FLAT or CHUNKS else (pos < S) & d_mask

    cos_rows = cos_ptr + pos * stride_cs
    sin_rows = sin_ptr + pos * stride_ss
    if LOADS_TOGETHER:
        # Volatile loads keep their order in the machine code, so every load of the tile is out before the
        # first is used; otherwise ptxas issues some table loads only once x's data is back (head_dim 256 at
        # one position: 3 load rounds in `ksuite inspect`, 1 this way). No eviction hints on volatile loads.
        cos1 = tl.load(cos_rows + offs_d * stride_cd, mask=table_mask, other=0.0, volatile=True)
        cos2 = tl.load(cos_rows + (offs_d + HALF) * stride_cd, mask=table_mask, other=0.0, volatile=True)
        sin1 = tl.load(sin_rows + offs_d * stride_sd, mask=table_mask, other=0.0, volatile=True)
        sin2 = tl.load(sin_rows + (offs_d + HALF) * stride_sd, mask=table_mask, other=0.0, volatile=True)
        x1 = tl.load(x_rows + offs_d * stride_xd, mask=mask, other=0.0, volatile=True)
        x2 = tl.load(x_rows + (offs_d + HALF) * stride_xd, mask=mask, other=0.0, volatile=True)
    else:
        cos1 = tl.load(cos_rows + offs_d * stride_cd, mask=table_mask, other=0.0, eviction_policy="evict_last")
        cos2 = tl.load(cos_rows + (offs_d + HALF) * stride_cd, mask=table_mask, other=0.0,
                       eviction_policy="evict_last")
        sin1 = tl.load(sin_rows + offs_d * stride_sd, mask=table_mask, other=0.0, eviction_policy="evict_last")
        sin2 = tl.load(sin_rows + (offs_d + HALF) * stride_sd, mask=table_mask, other=0.0,
                       eviction_policy="evict_last")
        x1 = tl.load(x_rows + offs_d * stride_xd, mask=mask, other=0.0, eviction_policy=X_EVICTION)
        x2 = tl.load(x_rows + (offs_d + HALF) * stride_xd, mask=mask, other=0.0, eviction_policy=X_EVICTION)
    x1 = x1.to(tl.float32)
    x2 = x2.to(tl.float32)
    out1 = x1 * cos1.to(tl.float32) - x2 * sin1.to(tl.float32)
    out2 = x2 * cos2.to(tl.float32) + x1 * sin2.to(tl.float32)
    tl.store(out_rows + offs_d, out1.to(out_ptr.dtype.element_ty), mask=mask, eviction_policy=X_EVICTION)
    tl.store(out_rows + offs_d + HALF, out2.to(out_ptr.dtype.element_ty), mask=mask, eviction_policy=X_EVICTION)


@triton.jit
def rotary_pointwise_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, n, S, stride_cs, stride_ss,
                            D: tl.constexpr, XBLOCK: tl.constexpr, WIDE: tl.constexpr,
                            X_EVICTION: tl.constexpr = "evict_first"):
    """The pointwise form: XBLOCK consecutive elements of contiguous x and out a program, one a lane; d = i % D
    and the row i // D by a constant (a multiply and a shift)."""
    if WIDE:
        i = tl.program_id(0).to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK)
    else:
        i = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    HALF: tl.constexpr = D // 2
    mask = i < n
    d = i % D
    first = d < HALF
    pos = (i // D) % S
    x = tl.load(x_ptr + i, mask=mask, other=0.0, eviction_policy=X_EVICTION).to(tl.float32)
    # the partner in the other half: one masked load per half, each a run of consecutive addresses
    upper = tl.load(x_ptr + i + HALF, mask=mask & first, other=0.0, eviction_policy=X_EVICTION).to(tl.float32)
    lower = tl.load(x_ptr + i - HALF, mask=mask & (d >= HALF), other=0.0, eviction_policy=X_EVICTION)
    rotated = tl.where(first, -upper, lower.to(tl.float32))
    cos = tl.load(cos_ptr + pos * stride_cs + d, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
    sin = tl.load(sin_ptr + pos * stride_ss + d, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
    tl.store(out_ptr + i, (x * cos + rotated * sin).to(out_ptr.dtype.element_ty), mask=mask,
             eviction_policy=X_EVICTION)


def pointwise_config(t: dict, n: int, D: int) -> dict:
    """The pointwise form's launch: BLOCK_S rows' worth of elements a program (a power of two, no more than the
    tensor rounded up), at most MAX_PER_THREAD a lane and at least one (fewer warps on smaller blocks). Unlike the
    other forms it may hold fewer than MIN_PER_THREAD a lane: at decoding shapes torch.compile's fastest launches
    hold one or two (TUNABLE_SEEDS), trading vector width for programs on more SMs."""
    xblock = min(triton.next_power_of_2(t["BLOCK_S"] * D), triton.next_power_of_2(n),
                 MAX_PER_THREAD * 32 * t["num_warps"])
    return dict(POINTWISE=True, XBLOCK=xblock, num_warps=max(1, min(t["num_warps"], xblock // 32)),
                X_EVICTION=x_eviction(t))


def x_eviction(t: dict) -> str:
    """x's loads and out's store: evict_first (read and written once: make room in L2 for the tables), or with
    HINTS off no policy."""
    return "evict_first" if t.get("HINTS", True) else ""


def pointwise_fits(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> bool:
    """Contiguous x and tables whose columns are consecutive: the pointwise form's addressing."""
    return x.is_contiguous() and cos.stride(1) == 1 and sin.stride(1) == 1


def bucket_tunables(H: int, S: int, D: int) -> dict:
    """TUNABLES with the shape's DISPATCH entry over them."""
    return {**TUNABLES, **dispatch_table().get(bucket_of({"head_dim": D, "seq_len": S, "num_heads": H}), {})}


def launch_config(B: int, H: int, S: int, D: int, t: dict | None = None) -> dict:
    """The bucket's tunables, made safe for this exact shape: no tile taller than the heads or the
    positions (the flat form: the rows) rounded up to a power of two; at most MAX_PER_THREAD values of x
    per thread (heads halved first, then positions); at least MIN_PER_THREAD per thread (fewer warps on
    small tiles)."""
    t = t or bucket_tunables(H, S, D)
    BH = B * H
    chunks = bool(t.get("CHUNKS", False))
    flat = bool(t["FLAT"]) or chunks or bool(t.get("POINTWISE", False))  # pointwise on a layout it cannot take
    block_half = triton.next_power_of_2(D // 2)
    block_h = 1 if flat else max(1, min(t["BLOCK_H"], triton.next_power_of_2(BH)))
    block_s = max(1, min(t["BLOCK_S"], triton.next_power_of_2(BH * S if flat else S)))
    if chunks:  # BLOCK_S rows' worth of pieces: the tile holds as many columns as the flat form's
        chunk = chunk_of(D // 2)
        block_s = max(1, min(t["BLOCK_S"] * block_half // chunk, triton.next_power_of_2(BH * S * (D // 2 // chunk))))
        block_half = chunk
    limit = MAX_PER_THREAD * 32 * t["num_warps"]
    while block_h > 1 and 2 * block_h * block_s * block_half > limit:
        block_h //= 2
    while block_s > 1 and 2 * block_h * block_s * block_half > limit:
        block_s //= 2
    tile = 2 * block_h * block_s * block_half
    num_warps = max(1, min(t["num_warps"], tile // (32 * MIN_PER_THREAD)))
    config = dict(BLOCK_H=block_h, BLOCK_S=block_s, BLOCK_HALF=block_half, FLAT=flat,
                  HEADS_FASTEST=bool(t["HEADS_FASTEST"]), LOADS_TOGETHER=bool(t.get("LOADS_TOGETHER", False)),
                  X_EVICTION=x_eviction(t), num_warps=num_warps)
    if chunks:
        config.update(CHUNKS=True, CHUNK=block_half, UNITS=D // 2 // block_half)
    return config


def chunk_of(half: int) -> int:
    """The widest piece of a half-row that divides it and is at most 8 columns (16 bytes at 2-byte dtypes)."""
    chunk = 8
    while half % chunk:
        chunk //= 2
    return chunk


def index_forms(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, flat: bool) -> dict:
    """UNIFORM and WIDE for this call (see the kernel). x's heads are uniform when its batch stride is H
    head strides (or there is one batch); its rows, for the flat form, when the head stride is also S
    position strides (or there is one head in all). WIDE when some offset, x's, the tables' or the new
    contiguous output's, reaches 2**30."""
    B, H, S, D = x.shape
    heads_uniform = B == 1 or x.stride(0) == H * x.stride(1)
    uniform = heads_uniform and (B * H == 1 or x.stride(1) == S * x.stride(2)) if flat else heads_uniform

    def span(t: torch.Tensor) -> int:
        return 1 + sum((n - 1) * abs(st) for n, st in zip(t.shape, t.stride()))

    # half the 32-bit range: the masked lanes of a last block form offsets a block past the end
    wide = max(span(x), span(cos), span(sin), x.numel()) >= 2 ** 30
    return {"UNIFORM": uniform, "WIDE": wide}


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
    t = bucket_tunables(H, S, D)
    if t.get("POINTWISE") and pointwise_fits(x, cos, sin):
        config = pointwise_config(t, out.numel(), D)
        wide = index_forms(x, cos, sin, True)["WIDE"]
        rotary_pointwise_kernel[(triton.cdiv(out.numel(), config["XBLOCK"]),)](
            x, cos, sin, out, out.numel(), S, cos.stride(0), sin.stride(0), D=D, XBLOCK=config["XBLOCK"], WIDE=wide,
            X_EVICTION=config["X_EVICTION"], num_warps=config["num_warps"])
        return out
    config = launch_config(B, H, S, D, t)
    items = B * H * S * config.get("UNITS", 1) if config["FLAT"] else S  # the flat forms' rows or pieces
    num_s_blocks = triton.cdiv(items, config["BLOCK_S"])
    num_h_blocks = triton.cdiv(B * H, config["BLOCK_H"])
    index = index_forms(x, cos, sin, config["FLAT"])
    if config["FLAT"]:
        grid = (num_s_blocks,)
        index["GRID_2D"] = False
    else:
        faster, slower = (num_h_blocks, num_s_blocks) if config["HEADS_FASTEST"] else (num_s_blocks, num_h_blocks)
        index["GRID_2D"] = slower <= MAX_GRID_Y
        grid = (faster, slower) if index["GRID_2D"] else (faster * slower,)
    rotary_kernel[grid](
        x, cos, sin, out,
        B * H, H, S, D // 2, num_s_blocks, num_h_blocks,
        *x.stride(), *cos.stride(), *sin.stride(),
        **config, **index,
    )
    return out


class ModelNew(torch.nn.Module):
    def forward(self, x, cos, sin):
        return rotary(x, cos, sin)
