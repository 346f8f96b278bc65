"""Softmax for every shape: three kernel forms, a dispatch table from shape bucket to launch configuration.

Users run softmax over vocabularies (32000 to 256000 columns) for 1 to 32768 tokens, and over 4096-8192
columns in attention-sized tests; no one launch suits them all, so VARIANT picks a form per bucket of
(dim, batch_size):
- "rows": BLOCK_M whole rows per program in registers (one masked load), row max, exp, row sum, one
  rounding, one store: x read once, y written once. Rows up to MAX_PER_THREAD * 32 * num_warps columns
  (32768 at 16 warps). BLOCK_M = 2 at 4096 columns, 1 at 8192, 8 warps, is triton_rowwise's
  configuration.
- "loop": BLOCK_M rows per program, an online pass over BLOCK_N-column blocks (running max, and a
  per-lane sum of exp rescaled when the max grows: one block reduction per block, not two), then a
  pass that re-reads the row (from L2 while the rows in flight fit there) and writes. BLOCK_M = 1,
  BLOCK_N = 1024 at 4 warps is triton_starter's configuration; BLOCK_M = 2, BLOCK_N = 4096 at 8 warps
  triton_rowwise's fallback for long rows.
- "split": each row cut into equal 64-aligned chunks of at most BLOCK_N columns, one program per chunk
  (one masked load): a first kernel stores each chunk's (max, sum of exp(x - max)); a second, one
  program per chunk again, merges its row's pairs in chunk order (every program of a row gets the same
  numbers: deterministic, no atomics), re-reads its chunk and writes. For decoding over long
  vocabularies: one program per row leaves 131 of the 132 multiprocessors idle at one row. The second
  kernel walks the chunks in reverse, so it starts on those the first kernel read last (still in L2).
- "coop": the split form's chunks in one kernel. Each program keeps its chunk in registers, publishes its
  (max, sum), waits at a barrier of its row's programs (two counters a row in a buffer kept per device), merges
  the pairs in chunk order and writes: x read once, one launch. Only where the M x chunks programs fit the
  multiprocessors one each (all resident, so none waits for one that cannot start), and never under the
  interpreter (it runs programs one at a time); elsewhere the same chunks run as "split". For decoding over
  long vocabularies, where the split form's second launch and re-read are most of a call of a few microseconds.
Rows whose length is not a multiple of 16 (GPT-2's 50257) start at unaligned addresses, which make
Triton fall back to 2-byte loads; "loop" and "split" (ALIGN > 1, contiguous input) read each row as an
aligned body (16-byte loads) plus a masked head and tail of under 16 bytes each.
HINTS puts evict_first on x's last read and on y's store (read and written once: leave L2 to the rest).
BACKWARD runs "loop"'s second pass from the row's last block to its first (what the first pass read last is likeliest
still in L2). PERSISTENT k > 0 launches "loop" on k programs a multiprocessor, each walking row blocks in turn, so
that the rows in flight fit L2 for the second pass (0: one program a row block).
DISPATCH (written by `ksuite optimize`, from timings on the workload's tuning shapes only) maps each
bucket to VARIANT, BLOCK_M, BLOCK_N, num_warps, HINTS, BACKWARD and PERSISTENT; a bucket it does not name runs TUNABLES.
launch_config makes the entry safe for the exact shape (blocks no larger than the row, at most MAX_PER_THREAD float32
values per thread, "rows" falling back to "loop" past that).

Bytes: x read once, y written once: 2 * M * N * esize ("split" reads x twice, the second time from L2
where it fits, plus 8 bytes per chunk of partials).
"""

import functools
import os
import re

import torch
import torch.nn as nn
import triton
import triton.language as tl

TUNABLES = {"VARIANT": "rows", "BLOCK_M": 1, "BLOCK_N": 4096, "num_warps": 8, "HINTS": True, "BACKWARD": False,
            "PERSISTENT": 0}
TUNABLE_CHOICES = {"VARIANT": ["rows", "loop", "split", "coop"], "BLOCK_M": [1, 2, 4, 8],
                   "BLOCK_N": [1024, 2048, 4096, 8192, 16384], "num_warps": [4, 8, 16, 32], "HINTS": [True, False],
                   "BACKWARD": [False, True], "PERSISTENT": [0, 1, 2]}
# HINTS off (2026-12-06, CPU only): x's last read and y's store with no evict_first, in every form (the split form's
# first read keeps its evict_last). The same switch was kept at the H100's large shapes in rmsnorm's family (1.4-3.7 %)
# and rotary's (1.8-5.4 %): streams of more than L2 that are read and written once. The first seed.
# Liger's launch (2026-12-07, CPU only): one program a row, 32 warps, the whole row in registers (32000 columns at 32
# values a thread). On the H100 it is the best baseline at 7x32000, the one held-out shape short of the goal there
# (0.93-0.97 paired, our two-kernel split form at 7.6-8.3 us against its 7.7); 32 warps were not a choice before.
# BACKWARD (2026-12-07, CPU only): the loop form's second pass last block first. On the H100 the loop form at 32 warps
# and 16384-column blocks beat the split form by 1.14-1.17x at 2048-3001 rows of 128256 columns (one program's row,
# 250 KB, re-read from L2); past the program's share of L2 (256000 columns) a forward re-read meets LRU's evictions.
# PERSISTENT (same day): the loop form on k programs a multiprocessor walking the row blocks, so the rows in flight
# (132 of 250 KB at 128256 fp16 columns and k = 1: 33 MB) fit L2 for the second pass.
# "coop" (same day): the split form in one launch, for few rows (7x32000: 56 programs of 4096 columns; 16x50257: 112 of
# 8192).
TUNABLE_SEEDS = [{"HINTS": False}, {"VARIANT": "rows", "BLOCK_M": 1, "num_warps": 32},
                 {"VARIANT": "coop", "BLOCK_N": 4096, "num_warps": 8},
                 {"VARIANT": "coop", "BLOCK_N": 8192, "num_warps": 16},
                 {"VARIANT": "loop", "BLOCK_N": 16384, "num_warps": 32, "BACKWARD": True},
                 {"VARIANT": "loop", "BLOCK_N": 16384, "num_warps": 32, "BACKWARD": True, "PERSISTENT": 1}]
MAX_PER_THREAD = 64  # float32 values a thread may hold ("loop": half of it, the block and its sums)
MAX_CHUNKS = 1024  # chunks per row in "split"; beyond, the loop form
CHUNK_ALIGN = 64  # chunk boundaries on 64-column multiples keep each chunk's loads aligned
# Shape buckets: upper edges per size constant, ascending (above the last edge: the top bucket).
BUCKETS = {"dim": [8192, 32768, 65536, 131072], "batch_size": [64, 512, 4096]}
# ksuite optimize table: run 20261202-042614 on NVIDIA H200, from the tuning shapes only;
# ksuite optimize table: 14 of 20 buckets tuned at their own shapes (2 at probe shapes), the rest copy their nearest
DISPATCH = {
    'dim<=8192,batch_size<=64': {'VARIANT': 'split', 'BLOCK_M': 1, 'BLOCK_N': 4096, 'num_warps': 8},
    'dim<=8192,batch_size<=512': {'VARIANT': 'rows', 'BLOCK_M': 1, 'BLOCK_N': 4096, 'num_warps': 8},
    'dim<=8192,batch_size<=4096': {'VARIANT': 'rows', 'BLOCK_M': 1, 'BLOCK_N': 4096, 'num_warps': 8},
    'dim<=8192,batch_size>4096': {'VARIANT': 'rows', 'BLOCK_M': 1, 'BLOCK_N': 8192, 'num_warps': 8},
    'dim<=32768,batch_size<=64': {'VARIANT': 'split', 'BLOCK_M': 1, 'BLOCK_N': 4096, 'num_warps': 8},
    'dim<=32768,batch_size<=512': {'VARIANT': 'rows', 'BLOCK_M': 1, 'BLOCK_N': 4096, 'num_warps': 8},
    'dim<=32768,batch_size<=4096': {'VARIANT': 'rows', 'BLOCK_M': 1, 'BLOCK_N': 4096, 'num_warps': 8},
    'dim<=32768,batch_size>4096': {'VARIANT': 'rows', 'BLOCK_M': 1, 'BLOCK_N': 8192, 'num_warps': 8},
    'dim<=65536,batch_size<=64': {'VARIANT': 'split', 'BLOCK_M': 2, 'BLOCK_N': 4096, 'num_warps': 8},
    'dim<=65536,batch_size<=512': {'VARIANT': 'split', 'BLOCK_M': 1, 'BLOCK_N': 4096, 'num_warps': 8},
    'dim<=65536,batch_size<=4096': {'VARIANT': 'rows', 'BLOCK_M': 1, 'BLOCK_N': 8192, 'num_warps': 8},
    'dim<=65536,batch_size>4096': {'VARIANT': 'rows', 'BLOCK_M': 1, 'BLOCK_N': 8192, 'num_warps': 8},
    'dim<=131072,batch_size<=64': {'VARIANT': 'split', 'BLOCK_M': 1, 'BLOCK_N': 4096, 'num_warps': 8},
    'dim<=131072,batch_size<=512': {'VARIANT': 'rows', 'BLOCK_M': 1, 'BLOCK_N': 4096, 'num_warps': 8},
    'dim<=131072,batch_size<=4096': {'VARIANT': 'split', 'BLOCK_M': 1, 'BLOCK_N': 8192, 'num_warps': 8},
    'dim<=131072,batch_size>4096': {'VARIANT': 'split', 'BLOCK_M': 1, 'BLOCK_N': 8192, 'num_warps': 8},
    'dim>131072,batch_size<=64': {'VARIANT': 'split', 'BLOCK_M': 1, 'BLOCK_N': 4096, 'num_warps': 8},
    'dim>131072,batch_size<=512': {'VARIANT': 'split', 'BLOCK_M': 1, 'BLOCK_N': 8192, 'num_warps': 8},
    'dim>131072,batch_size<=4096': {'VARIANT': 'split', 'BLOCK_M': 1, 'BLOCK_N': 16384, 'num_warps': 8},
    'dim>131072,batch_size>4096': {'VARIANT': 'split', 'BLOCK_M': 1, 'BLOCK_N': 16384, 'num_warps': 8},
}
# DISPATCH is the table of the GPU named here; `ksuite optimize` on another GPU writes that GPU's own table into
# DISPATCH_BY_GPU (its results folder name -> table), and dispatch_table() runs it there.
DISPATCH_GPU = "nvidia-h200"
DISPATCH_BY_GPU = {
    'nvidia-h100-80gb-hbm3': {
        # ksuite optimize table: run 20261207-103211 on NVIDIA H100 80GB HBM3,
        # ksuite optimize table: from the tuning shapes only;
        # ksuite optimize table: 14 of 20 buckets tuned at their own shapes,
        # ksuite optimize table: the rest copy the nearest tuned bucket's entry:
        # ksuite optimize table: dim<=8192,batch_size<=64 dim<=8192,batch_size<=512 dim<=8192,batch_size<=4096
        # ksuite optimize table: dim<=8192,batch_size>4096 dim<=131072,batch_size>4096 dim>131072,batch_size>4096;
        # ksuite optimize table: this run: 1 searched, 1 at probe shapes, 1 edge probe;
        # ksuite optimize table: the entries no search on this GPU has timed are DISPATCH's, from nvidia-h200
        'dim<=8192,batch_size<=64': {'num_warps': 32},
        'dim<=8192,batch_size<=512': {},
        'dim<=8192,batch_size<=4096': {},
        'dim<=8192,batch_size>4096': {'BLOCK_N': 8192},
        'dim<=32768,batch_size<=64': {'num_warps': 32},
        'dim<=32768,batch_size<=512': {},
        'dim<=32768,batch_size<=4096': {},
        'dim<=32768,batch_size>4096': {'BLOCK_N': 8192},
        'dim<=65536,batch_size<=64': {'VARIANT': 'split', 'BLOCK_M': 2, 'BLOCK_N': 8192, 'HINTS': False},
        'dim<=65536,batch_size<=512': {'VARIANT': 'split'},
        'dim<=65536,batch_size<=4096': {'BLOCK_N': 8192},
        'dim<=65536,batch_size>4096': {'BLOCK_N': 8192},
        'dim<=131072,batch_size<=64': {'VARIANT': 'split'},
        'dim<=131072,batch_size<=512': {},
        'dim<=131072,batch_size<=4096': {'BLOCK_N': 16384, 'num_warps': 32},
        'dim<=131072,batch_size>4096': {'BLOCK_N': 16384, 'num_warps': 32},
        'dim>131072,batch_size<=64': {'VARIANT': 'split'},
        'dim>131072,batch_size<=512': {'VARIANT': 'split', 'BLOCK_N': 8192},
        'dim>131072,batch_size<=4096': {'VARIANT': 'split', 'BLOCK_N': 16384},
        'dim>131072,batch_size>4096': {'VARIANT': 'split', 'BLOCK_N': 16384},
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
def softmax_rows_kernel(x_ptr, y_ptr, M, N, stride_xm, stride_xn, stride_ym,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, X_EVICTION: tl.constexpr = "evict_first"):
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    mask = (offs_m < M)[:, None] & (offs_n < N)[None, :]
    x_rows = x_ptr + offs_m.to(tl.int64)[:, None] * stride_xm
    y_rows = y_ptr + offs_m.to(tl.int64)[:, None] * stride_ym
    x = tl.load(x_rows + offs_n[None, :] * stride_xn, mask=mask, other=float("-inf"),
                eviction_policy=X_EVICTION).to(tl.float32)
    z = tl.exp(x - tl.max(x, axis=1)[:, None])  # padding lanes: exp(-inf) = 0
    inv_s = 1.0 / tl.sum(z, axis=1)
    tl.store(y_rows + offs_n[None, :], (z * inv_s[:, None]).to(y_ptr.dtype.element_ty), mask=mask,
             eviction_policy=X_EVICTION)


@triton.jit
def row_span(rows, col_lo, n, stride_xm, ALIGN: tl.constexpr):
    """Columns [col_lo, col_lo + n) of each row as element indices [lo, hi), cut into an ALIGN-aligned
    body [a0, a0 + body) and a head and tail of under ALIGN elements each. ALIGN > 1 (contiguous
    input): indices count from x_ptr itself, so the body's addresses are 16-byte aligned ([BLOCK_M, 1]
    columns); ALIGN = 1: they count from the row's start and the body is the whole span (scalars)."""
    if ALIGN > 1:
        lo = rows * stride_xm + col_lo
        hi = lo + n
        a0 = tl.multiple_of((lo + ALIGN - 1) // ALIGN * ALIGN, ALIGN)
        body = tl.multiple_of(tl.maximum(hi // ALIGN * ALIGN - a0, 0), ALIGN)
        lo, hi, a0, body = lo[:, None], hi[:, None], a0[:, None], body[:, None]
    else:
        lo = col_lo
        hi = col_lo + n
        a0 = col_lo
        body = n
    return lo, hi, a0, body


@triton.jit
def edge_block(lo, hi, a0, body, ALIGN: tl.constexpr):
    """The head [lo, min(a0, hi)) and the tail [a0 + body, hi) of each row ([BLOCK_M, 1] columns), as
    one 2*ALIGN-wide block: element indices and mask (under ALIGN elements each: never in the body)."""
    e = tl.arange(0, 2 * ALIGN)[None, :]
    head = e < ALIGN
    g = tl.where(head, lo + e, a0 + body + (e - ALIGN))
    mask = g < tl.where(head, tl.minimum(a0, hi), hi)
    return g, mask


@triton.jit
def softmax_loop_kernel(x_ptr, y_ptr, M, N, stride_xm, stride_xn, stride_ym,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, ALIGN: tl.constexpr,
                        X_EVICTION: tl.constexpr = "evict_first", BACKWARD: tl.constexpr = False,
                        PERSISTENT: tl.constexpr = False):
    if PERSISTENT:  # a grid of a few programs per multiprocessor, each walking row blocks pid, pid + grid, ...
        for row_block in range(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.num_programs(0)):
            softmax_loop_rows(row_block, x_ptr, y_ptr, M, N, stride_xm, stride_xn, stride_ym,
                              BLOCK_M, BLOCK_N, ALIGN, X_EVICTION, BACKWARD)
    else:
        softmax_loop_rows(tl.program_id(0), x_ptr, y_ptr, M, N, stride_xm, stride_xn, stride_ym,
                          BLOCK_M, BLOCK_N, ALIGN, X_EVICTION, BACKWARD)


@triton.jit
def softmax_loop_rows(pid, x_ptr, y_ptr, M, N, stride_xm, stride_xn, stride_ym,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, ALIGN: tl.constexpr,
                      X_EVICTION: tl.constexpr, BACKWARD: tl.constexpr):
    """Row block `pid` of the loop form: an online first pass, then the re-read that writes."""
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = offs_m < M
    rows = tl.minimum(offs_m, M - 1).to(tl.int64)  # rows past M redo the last row; their stores are masked
    lo, hi, a0, body = row_span(rows, 0, N, stride_xm, ALIGN)
    if ALIGN > 1:  # indices from x_ptr (y has x's strides), unit column stride
        x_base = x_ptr
        y_base = y_ptr
        sx = 1
        n_body = tl.max(tl.max(body, axis=1), axis=0).to(tl.int32)  # the longest body of the rows
    else:
        x_base = x_ptr + (rows * stride_xm)[:, None]
        y_base = y_ptr + (rows * stride_ym)[:, None]
        sx = stride_xn
        n_body = N

    # Pass 1 (online): m the running row max, acc the per-lane sums of exp(x - m), rescaled when m grows.
    m = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, n_body, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        mask = offs_n[None, :] < body
        x = tl.load(x_base + (a0 + offs_n[None, :]) * sx, mask=mask,
                    other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=1))
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)  # a row with nothing yet: keep acc at 0
        acc = acc * tl.exp(m - m_use)[:, None] + tl.exp(x - m_use[:, None])
        m = m_new
    if ALIGN > 1:
        g_e, mask_e = edge_block(lo, hi, a0, body, ALIGN)
        x_e = tl.load(x_base + g_e, mask=mask_e, other=float("-inf")).to(tl.float32)
        row_max = tl.maximum(m, tl.max(x_e, axis=1))  # finite: every row has an element
        s = tl.sum(acc, axis=1) * tl.exp(m - row_max) + tl.sum(tl.exp(x_e - row_max[:, None]), axis=1)
        tl.store(y_base + g_e, (tl.exp(x_e - row_max[:, None]) / s[:, None]).to(y_ptr.dtype.element_ty),
                 mask=mask_e & row_mask[:, None])
    else:
        row_max = m
        s = tl.sum(acc, axis=1)

    # Pass 2: re-read the body and write the normalised exponentials, rounded once. BACKWARD walks the blocks
    # last to first: those pass 1 read last are the likeliest still in L2 (a forward walk over rows longer than
    # the program's share of L2 meets the blocks LRU evicted first).
    inv_s = 1.0 / s
    n_blocks = tl.cdiv(n_body, BLOCK_N)
    for i in range(0, n_blocks):
        if BACKWARD:
            start = (n_blocks - 1 - i) * BLOCK_N
        else:
            start = i * BLOCK_N
        offs_n = start + tl.arange(0, BLOCK_N)
        mask = offs_n[None, :] < body
        x = tl.load(x_base + (a0 + offs_n[None, :]) * sx, mask=mask, other=float("-inf"),
                    eviction_policy=X_EVICTION).to(tl.float32)
        y = tl.exp(x - row_max[:, None]) * inv_s[:, None]
        tl.store(y_base + (a0 + offs_n[None, :]), y.to(y_ptr.dtype.element_ty),
                 mask=mask & row_mask[:, None], eviction_policy=X_EVICTION)


@triton.jit
def load_chunk(x_ptr, pid, N, chunk, stride_xm, stride_xn, N_CHUNKS: tl.constexpr, BLOCK_N: tl.constexpr,
               ALIGN: tl.constexpr, EVICT: tl.constexpr):
    """Program pid's chunk (row pid // N_CHUNKS): its body, its head and tail, their indices and masks."""
    rows = (pid // N_CHUNKS + tl.arange(0, 1)).to(tl.int64)
    col_lo = (pid % N_CHUNKS) * chunk
    lo, hi, a0, body = row_span(rows, col_lo, tl.minimum(chunk, N - col_lo), stride_xm, ALIGN)
    if ALIGN > 1:
        x_base = x_ptr
        sx = 1
    else:
        x_base = x_ptr + (rows * stride_xm)[:, None]
        sx = stride_xn
    g = a0 + tl.arange(0, BLOCK_N)[None, :]
    mask = tl.arange(0, BLOCK_N)[None, :] < body
    x = tl.load(x_base + g * sx, mask=mask, other=float("-inf"), eviction_policy=EVICT).to(tl.float32)
    if ALIGN > 1:
        g_e, mask_e = edge_block(lo, hi, a0, body, ALIGN)
        x_e = tl.load(x_base + g_e, mask=mask_e, other=float("-inf"), eviction_policy=EVICT).to(tl.float32)
    else:  # no head or tail
        g_e = tl.zeros([1, 2], dtype=tl.int64)
        mask_e = g_e < 0
        x_e = tl.full([1, 2], float("-inf"), dtype=tl.float32)
    return rows, g, mask, x, g_e, mask_e, x_e


@triton.jit
def softmax_partial_kernel(x_ptr, part_ptr, M, N, chunk, stride_xm, stride_xn,
                           N_CHUNKS: tl.constexpr, BLOCK_N: tl.constexpr, ALIGN: tl.constexpr):
    pid = tl.program_id(0)
    _, _, _, x, _, _, x_e = load_chunk(x_ptr, pid, N, chunk, stride_xm, stride_xn, N_CHUNKS, BLOCK_N, ALIGN,
                                       "evict_last")  # kept in L2 for the second kernel
    m = tl.maximum(tl.max(x, axis=1), tl.max(x_e, axis=1))  # finite: every chunk has an element
    s = tl.sum(tl.exp(x - m[:, None]), axis=1) + tl.sum(tl.exp(x_e - m[:, None]), axis=1)
    tl.store(part_ptr + pid + tl.arange(0, 1), m)
    tl.store(part_ptr + M * N_CHUNKS + pid + tl.arange(0, 1), s)


@triton.jit
def softmax_split_write_kernel(x_ptr, y_ptr, part_ptr, M, N, chunk, stride_xm, stride_xn, stride_ym,
                               N_CHUNKS: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_C: tl.constexpr,
                               ALIGN: tl.constexpr, X_EVICTION: tl.constexpr = "evict_first"):
    pid = M * N_CHUNKS - 1 - tl.program_id(0)  # last chunk first: the first kernel read it last
    rows, g, mask, x, g_e, mask_e, x_e = load_chunk(x_ptr, pid, N, chunk, stride_xm, stride_xn, N_CHUNKS,
                                                    BLOCK_N, ALIGN, X_EVICTION)
    row_max, inv_s = merge_row_pairs(part_ptr, pid // N_CHUNKS, M, N_CHUNKS, BLOCK_C, False)
    store_chunk(y_ptr, rows, g, mask, x, g_e, mask_e, x_e, row_max, inv_s, stride_ym, ALIGN, X_EVICTION)


@triton.jit
def merge_row_pairs(part_ptr, row, M, N_CHUNKS: tl.constexpr, BLOCK_C: tl.constexpr, VOLATILE: tl.constexpr):
    """Row `row`'s (max, sum of exp) pairs merged in chunk order (every program of a row gets the same numbers):
    the row max and 1 / sum_i s_i * exp(m_i - max)."""
    offs_c = tl.arange(0, BLOCK_C)
    part = row * N_CHUNKS + offs_c
    pm = tl.load(part_ptr + part, mask=offs_c < N_CHUNKS, other=float("-inf"), volatile=VOLATILE)
    ps = tl.load(part_ptr + M * N_CHUNKS + part, mask=offs_c < N_CHUNKS, other=0.0, volatile=VOLATILE)
    row_max = tl.max(pm, axis=0)
    return row_max, 1.0 / tl.sum(ps * tl.exp(pm - row_max), axis=0)


@triton.jit
def store_chunk(y_ptr, rows, g, mask, x, g_e, mask_e, x_e, row_max, inv_s, stride_ym, ALIGN: tl.constexpr,
                X_EVICTION: tl.constexpr):
    """A chunk's normalised exponentials, rounded once: its body, then (ALIGN > 1) its head and tail."""
    if ALIGN > 1:
        y_base = y_ptr
    else:
        y_base = y_ptr + (rows * stride_ym)[:, None]
    tl.store(y_base + g, (tl.exp(x - row_max) * inv_s).to(y_ptr.dtype.element_ty), mask=mask,
             eviction_policy=X_EVICTION)
    if ALIGN > 1:
        tl.store(y_base + g_e, (tl.exp(x_e - row_max) * inv_s).to(y_ptr.dtype.element_ty), mask=mask_e)


@triton.jit
def softmax_coop_kernel(x_ptr, y_ptr, part_ptr, sync_ptr, M, N, chunk, stride_xm, stride_xn, stride_ym,
                        N_CHUNKS: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_C: tl.constexpr, ALIGN: tl.constexpr,
                        X_EVICTION: tl.constexpr = "evict_first"):
    """The split form in one kernel: each program keeps its chunk in registers, stores its (max, sum of exp), waits
    at its row's barrier for the others' pairs, merges them in chunk order and writes. x is read once and there is
    no second launch. Every program of the grid must be resident at once (launch_config: at most one a
    multiprocessor), or a program would wait for one that cannot start. sync_ptr holds two counters a row (arrived,
    left), zero on entry; the last program to leave puts both back to zero for the next call."""
    pid = tl.program_id(0)
    rows, g, mask, x, g_e, mask_e, x_e = load_chunk(x_ptr, pid, N, chunk, stride_xm, stride_xn, N_CHUNKS, BLOCK_N,
                                                    ALIGN, X_EVICTION)
    m = tl.maximum(tl.max(x, axis=1), tl.max(x_e, axis=1))  # finite: every chunk has an element
    s = tl.sum(tl.exp(x - m[:, None]), axis=1) + tl.sum(tl.exp(x_e - m[:, None]), axis=1)
    # the pair as scalar atomics, issued like the count after them (by one thread, in order), so the count's
    # release makes them visible to whoever acquires it (a plain store may come from another thread of the program)
    tl.atomic_xchg(part_ptr + pid, tl.max(m, axis=0))
    tl.atomic_xchg(part_ptr + M * N_CHUNKS + pid, tl.max(s, axis=0))
    row = pid // N_CHUNKS
    tl.atomic_add(sync_ptr + 2 * row, 1, sem="release")
    arrived = tl.atomic_add(sync_ptr + 2 * row, 0, sem="acquire")
    while arrived < N_CHUNKS:
        arrived = tl.atomic_add(sync_ptr + 2 * row, 0, sem="acquire")
    row_max, inv_s = merge_row_pairs(part_ptr, row, M, N_CHUNKS, BLOCK_C, True)  # volatile: past L1
    if tl.atomic_add(sync_ptr + 2 * row + 1, 1, sem="acq_rel") == N_CHUNKS - 1:  # every program is past the wait
        tl.atomic_xchg(sync_ptr + 2 * row, 0)
        tl.atomic_xchg(sync_ptr + 2 * row + 1, 0)
    store_chunk(y_ptr, rows, g, mask, x, g_e, mask_e, x_e, row_max, inv_s, stride_ym, ALIGN, X_EVICTION)


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0").lower() in ("1", "true", "on", "yes")


def launch_config(M: int, N: int, sms: int = 132) -> dict:
    """The bucket's tunables, made safe for this exact shape: "rows" only while a row block fits in
    MAX_PER_THREAD values per thread (fewer rows per program first), else "loop"; "split" and "coop" chunks are
    equal, 64-aligned and at most BLOCK_N columns (a one-chunk split is the loop form); "coop" needs its M x chunks
    programs to fit `sms` multiprocessors, one each, else it runs as "split"."""
    t = {**TUNABLES, **dispatch_table().get(bucket_of({"dim": N, "batch_size": M}), {})}
    num_warps = t["num_warps"]
    hints = "evict_first" if t.get("HINTS", True) else ""  # x's last read and y's store
    capacity = MAX_PER_THREAD * 32 * num_warps
    width = triton.next_power_of_2(N)
    block_m = max(1, min(t["BLOCK_M"], triton.next_power_of_2(M)))
    if t["VARIANT"] == "rows" and width <= capacity:
        block_m = min(block_m, triton.next_power_of_2(capacity // width + 1) // 2)
        return dict(VARIANT="rows", BLOCK_M=block_m, BLOCK_N=width, X_EVICTION=hints, num_warps=num_warps)
    block_n = min(t["BLOCK_N"], width, capacity)
    n_chunks = triton.cdiv(N, block_n)
    if t["VARIANT"] in ("split", "coop") and 1 < n_chunks <= MAX_CHUNKS:
        chunk = triton.cdiv(triton.cdiv(N, n_chunks), CHUNK_ALIGN) * CHUNK_ALIGN
        n_chunks = triton.cdiv(N, chunk)
        # "coop" only where every program can be resident at once (one a multiprocessor), and never under the
        # interpreter, which runs programs one after another: a program waiting at its row's barrier would wait for
        # ever. Elsewhere the same chunks run as "split".
        together = t["VARIANT"] == "coop" and M * n_chunks <= sms and not interpreting()
        return dict(VARIANT="coop" if together else "split", chunk=chunk, N_CHUNKS=n_chunks,
                    BLOCK_N=triton.next_power_of_2(chunk), BLOCK_C=triton.next_power_of_2(n_chunks),
                    X_EVICTION=hints, num_warps=num_warps)
    block_n = min(block_n, capacity // 2)
    block_m = max(1, min(block_m, capacity // 2 // block_n))
    return dict(VARIANT="loop", BLOCK_M=block_m, BLOCK_N=block_n, X_EVICTION=hints, BACKWARD=t.get("BACKWARD", False),
                PERSISTENT=t.get("PERSISTENT", 0), num_warps=num_warps)


_sm_counts: dict = {}


def sm_count(device: torch.device) -> int:
    """The device's multiprocessors (4 off a GPU: the interpreter's tests then walk several row blocks a program)."""
    key = str(device)
    if key not in _sm_counts:
        _sm_counts[key] = torch.cuda.get_device_properties(device).multi_processor_count \
            if device.type == "cuda" else 4
    return _sm_counts[key]


_row_barriers: dict = {}


def row_barriers(device: torch.device, rows: int) -> torch.Tensor:
    """The "coop" form's two counters a row, zeroed once per device and left at zero by every launch (its last
    program to leave resets them). One stream at a time: two launches at once on one device would share them."""
    key = str(device)
    if key not in _row_barriers or _row_barriers[key].numel() < 2 * rows:
        _row_barriers[key] = torch.zeros(2 * max(rows, sm_count(device)), dtype=torch.int32, device=device)
    return _row_barriers[key]


def softmax(x: torch.Tensor) -> torch.Tensor:
    assert x.dim() == 2, "x must be [rows, dim]"
    assert x.is_floating_point()
    M, N = x.shape
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    if M == 0 or N == 0:
        return y
    config = launch_config(M, N, sm_count(x.device))
    variant = config.pop("VARIANT")
    # Rows of a contiguous x (and so of y) that start off 16-byte boundaries: aligned bodies.
    align = 16 // x.element_size() if x.is_contiguous() and (N * x.element_size()) % 16 else 1
    args = (M, N, x.stride(0), x.stride(1), y.stride(0))
    if variant == "rows":
        softmax_rows_kernel[(triton.cdiv(M, config["BLOCK_M"]),)](x, y, *args, **config)
    elif variant == "loop":
        row_blocks = triton.cdiv(M, config["BLOCK_M"])
        per_sm = config.pop("PERSISTENT")
        grid = min(row_blocks, per_sm * sm_count(x.device)) if per_sm else row_blocks
        softmax_loop_kernel[(grid,)](x, y, *args, ALIGN=align, PERSISTENT=grid < row_blocks, **config)
    elif variant == "coop":
        chunk = config.pop("chunk")
        part = torch.empty((2 * M * config["N_CHUNKS"],), device=x.device, dtype=torch.float32)  # maxes, then sums
        softmax_coop_kernel[(M * config["N_CHUNKS"],)](x, y, part, row_barriers(x.device, M), M, N, chunk,
                                                        x.stride(0), x.stride(1), y.stride(0), ALIGN=align, **config)
    else:
        chunk, n_chunks, block_c = config.pop("chunk"), config["N_CHUNKS"], config.pop("BLOCK_C")
        hints = config.pop("X_EVICTION")
        part = torch.empty((2 * M * n_chunks,), device=x.device, dtype=torch.float32)  # maxes, then sums
        grid = (M * n_chunks,)
        softmax_partial_kernel[grid](x, part, M, N, chunk, x.stride(0), x.stride(1), ALIGN=align, **config)
        softmax_split_write_kernel[grid](x, y, part, M, N, chunk, x.stride(0), x.stride(1), y.stride(0),
                                         BLOCK_C=block_c, ALIGN=align, X_EVICTION=hints, **config)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmax(x)
