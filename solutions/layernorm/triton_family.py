"""LayerNorm for every shape: one kernel with two forms, a dispatch table from shape bucket to launch configuration.

Hidden sizes run from 768 to 8192 and token counts from 1 to 32768, and no one launch suits them all:
decoding (a few rows) wants one row per program and few warps, long prompts of short rows want several
rows per program, 5120 columns pad a power-of-two tile by 3/8. So one kernel, two forms, picked per
bucket of (dim, batch_size) by VARIANT:
- "rows": BLOCK_M whole rows per program in registers (one masked load), the mean, then the variance
  around the mean from the same registers (stable, no re-read), the affine transform, one rounding, one
  store: x is read once and y written once. BLOCK_M = 1 or 2 at 8 warps is triton_rowwise's
  configuration (its ROW_TILE of 8192 elements); BLOCK_M = 1 at 8 warps is Liger's launch from 2048
  columns (16 from 8192). LOADS_TOGETHER loads weight and bias beside x, not after the reductions: one
  memory latency in series instead of two, by volatile loads (system-scope in the machine code).
  WEIGHTS_EARLY is Liger's schedule: weight and bias by plain loads before the reductions, issued once x
  is back (two rounds, the second before the first barrier).
- "loop": three passes over BLOCK_N-column blocks (mean, variance around the mean, normalise), the
  later two mostly from L2; BLOCK_M = 1, BLOCK_N = 1024 at 4 warps is triton_starter's configuration,
  BLOCK_N = 4096 triton_rowwise's fallback.
- "two_pass": two passes over BLOCK_N-column blocks: the first merges each block's mean and sum of
  squared deviations into the row's (Chan's parallel Welford update: stable, no E[x^2] - mean^2) with
  evict_last, so the row stays in L2, the second reads it back with evict_first and normalises. Two reads
  of x instead of three, the second from L2: the form torch.compile (max-autotune) takes at 32768x8192,
  where it ran at 97 % of the copy ceiling and "rows" at 93 %.
"loop" and "two_pass" serve rows too long for registers. STATIC_N compiles the row length into them (one compile
per row length, as torch.compile's kernels have it): their column loops unroll and full blocks lose the mask, which
took 5-25 % off rmsnorm's two-pass form on the H100 (solutions/rmsnorm/NOTES.md); not yet timed here.
DISPATCH (written by `ksuite optimize`, from timings on the workload's tuning shapes only) maps each
bucket to VARIANT, BLOCK_M, BLOCK_N and num_warps; a bucket it does not name runs TUNABLES.
launch_config then makes the bucket's entry safe for the exact shape: no block wider than the row (to
a power of two) or taller than the rows, at most MAX_PER_THREAD float32 values per thread in "rows"
(fewer rows per program first, then the loop form), so no choice of the table can spill.

Bytes: x read once, y written once, weight and bias read once: (2 * M * N + 2 * N) * esize. Streamed
x and y carry evict_first, weight and bias evict_last (every program re-reads them from L2); in "rows", HINTS off
leaves x and y with no policy (rmsnorm's same switch was kept at the H100's large shapes, 2026-12-06).
"""

import functools
import re

import torch
import torch.nn as nn
import triton
import triton.language as tl

TUNABLES = {"VARIANT": "rows", "BLOCK_M": 1, "BLOCK_N": 4096, "num_warps": 8, "LOADS_TOGETHER": False,
            "WEIGHTS_EARLY": False, "STATIC_N": False, "HINTS": True}
TUNABLE_CHOICES = {"VARIANT": ["rows", "loop", "two_pass"], "BLOCK_M": [1, 2, 4, 8, 16], "BLOCK_N": [1024, 2048, 4096],
                   "num_warps": [2, 4, 8, 16], "LOADS_TOGETHER": [False, True], "WEIGHTS_EARLY": [False, True],
                   "STATIC_N": [False, True], "HINTS": [True, False]}
# LOADS_TOGETHER takes the weight and bias loads first, so a step on WEIGHTS_EARLY turns it off.
TUNABLE_OVERRIDES = {"LOADS_TOGETHER": ["WEIGHTS_EARLY"]}
# LOADS_TOGETHER (weight and bias loaded beside x, as Liger issues them while the mean is reduced) was
# kept in 2 of 30 buckets (this family's 7-64-row ones, in DISPATCH) as each searched bucket's first step on
# the H200, 2026-12-05, and lost up to 0.74x at long rows: no longer a seed, still a tunable.
# The seed: Liger's kernel at the decode shapes where it leads by 0.3-0.4 us, launch and schedule (one row a program,
# 8 warps at 1025-4096 columns, weight and bias by plain loads before the reductions; solutions/layernorm/NOTES.md,
# "Beside Liger's kernel in the machine code"). Its launch with LOADS_TOGETHER, the seed until 2026-12-05, was kept
# at up to 3072 columns and tied at 4096 (1.018x).
# HINTS off (the rows form's x and y with no evict_first; new 2026-12-06) first: rmsnorm's same switch was kept in five
# of the H100's buckets, 1.4-3.7 % at its large shapes (solutions/rmsnorm/NOTES.md).
TUNABLE_SEEDS = [{"HINTS": False},
                 {"VARIANT": "rows", "BLOCK_M": 1, "num_warps": 8, "LOADS_TOGETHER": False, "WEIGHTS_EARLY": True}]
MAX_PER_THREAD = 32  # float32 values of x a thread may hold in "rows" (triton_rowwise's: 64 registers)
MAX_LOOP_TILE = 8192  # elements of one "loop" block (BLOCK_M x BLOCK_N), at most MAX_PER_THREAD a thread
# Shape buckets: upper edges per size constant, ascending (above the last edge: the top bucket).
BUCKETS = {'dim': [1024, 2048, 3072, 4096, 8192], 'batch_size': [64, 128, 1024, 8192]}
# ksuite optimize table: run 20261207-055641 on NVIDIA H200,
# ksuite optimize table: from the tuning shapes only;
# ksuite optimize table: 25 of 30 buckets tuned at their own shapes,
# ksuite optimize table: the rest copy the nearest tuned bucket's entry:
# ksuite optimize table: dim>8192,batch_size<=64 dim>8192,batch_size<=128 dim>8192,batch_size<=1024
# ksuite optimize table: dim>8192,batch_size<=8192 dim>8192,batch_size>8192;
# ksuite optimize table: this run: 6 searched, 3 at probe shapes, 1 edge probe
DISPATCH = {
    'dim<=1024,batch_size<=64': {'BLOCK_N': 2048, 'num_warps': 4},
    'dim<=1024,batch_size<=128': {},
    'dim<=1024,batch_size<=1024': {},
    'dim<=1024,batch_size<=8192': {'BLOCK_M': 2, 'num_warps': 4},
    'dim<=1024,batch_size>8192': {'BLOCK_M': 2, 'num_warps': 2},
    'dim<=2048,batch_size<=64': {'LOADS_TOGETHER': True},
    'dim<=2048,batch_size<=128': {'WEIGHTS_EARLY': True},
    'dim<=2048,batch_size<=1024': {'BLOCK_M': 2, 'num_warps': 16},
    'dim<=2048,batch_size<=8192': {'BLOCK_M': 8, 'num_warps': 4},
    'dim<=2048,batch_size>8192': {'BLOCK_M': 8, 'num_warps': 4, 'HINTS': False},
    'dim<=3072,batch_size<=64': {'LOADS_TOGETHER': True},
    'dim<=3072,batch_size<=128': {'WEIGHTS_EARLY': True},
    'dim<=3072,batch_size<=1024': {},
    'dim<=3072,batch_size<=8192': {'BLOCK_M': 2, 'BLOCK_N': 2048, 'num_warps': 4},
    'dim<=3072,batch_size>8192': {'num_warps': 4},
    'dim<=4096,batch_size<=64': {'num_warps': 16, 'WEIGHTS_EARLY': True},
    'dim<=4096,batch_size<=128': {'WEIGHTS_EARLY': True},
    'dim<=4096,batch_size<=1024': {},
    'dim<=4096,batch_size<=8192': {},
    'dim<=4096,batch_size>8192': {'BLOCK_M': 2, 'HINTS': False},
    'dim<=8192,batch_size<=64': {'WEIGHTS_EARLY': True},
    'dim<=8192,batch_size<=128': {'WEIGHTS_EARLY': True},
    'dim<=8192,batch_size<=1024': {},
    'dim<=8192,batch_size<=8192': {'HINTS': False},
    'dim<=8192,batch_size>8192': {'HINTS': False},
    'dim>8192,batch_size<=64': {'WEIGHTS_EARLY': True},
    'dim>8192,batch_size<=128': {'WEIGHTS_EARLY': True},
    'dim>8192,batch_size<=1024': {},
    'dim>8192,batch_size<=8192': {'HINTS': False},
    'dim>8192,batch_size>8192': {'HINTS': False},
}
# DISPATCH is the table of the GPU named here; `ksuite optimize` on another GPU writes that GPU's own table into
# DISPATCH_BY_GPU (its results folder name -> table), and dispatch_table() runs it there.
DISPATCH_GPU = "nvidia-h200"
DISPATCH_BY_GPU = {
    'nvidia-h100-80gb-hbm3': {
        # ksuite optimize table: run 20261207-081308 on NVIDIA H100 80GB HBM3,
        # ksuite optimize table: from the tuning shapes only;
        # ksuite optimize table: 25 of 30 buckets tuned at their own shapes,
        # ksuite optimize table: the rest copy the nearest tuned bucket's entry:
        # ksuite optimize table: dim>8192,batch_size<=64 dim>8192,batch_size<=128 dim>8192,batch_size<=1024
        # ksuite optimize table: dim>8192,batch_size<=8192 dim>8192,batch_size>8192;
        # ksuite optimize table: this run: 2 searched, 1 at probe shapes, 2 edge probes;
        # ksuite optimize table: the entries no search on this GPU has timed are DISPATCH's, from nvidia-h200
        'dim<=1024,batch_size<=64': {'BLOCK_N': 2048, 'WEIGHTS_EARLY': True},
        'dim<=1024,batch_size<=128': {},
        'dim<=1024,batch_size<=1024': {},
        'dim<=1024,batch_size<=8192': {'BLOCK_M': 2, 'num_warps': 4},
        'dim<=1024,batch_size>8192': {'BLOCK_M': 2, 'num_warps': 2},
        'dim<=2048,batch_size<=64': {'WEIGHTS_EARLY': True},
        'dim<=2048,batch_size<=128': {'WEIGHTS_EARLY': True},
        'dim<=2048,batch_size<=1024': {'BLOCK_M': 2, 'num_warps': 16},
        'dim<=2048,batch_size<=8192': {'BLOCK_M': 8, 'num_warps': 4},
        'dim<=2048,batch_size>8192': {'BLOCK_M': 8, 'num_warps': 4, 'HINTS': False},
        'dim<=3072,batch_size<=64': {'LOADS_TOGETHER': True},
        'dim<=3072,batch_size<=128': {'WEIGHTS_EARLY': True},
        'dim<=3072,batch_size<=1024': {},
        'dim<=3072,batch_size<=8192': {'BLOCK_M': 2, 'BLOCK_N': 2048, 'num_warps': 4},
        'dim<=3072,batch_size>8192': {'num_warps': 4, 'HINTS': False},
        'dim<=4096,batch_size<=64': {'num_warps': 16, 'WEIGHTS_EARLY': True},
        'dim<=4096,batch_size<=128': {'WEIGHTS_EARLY': True},
        'dim<=4096,batch_size<=1024': {},
        'dim<=4096,batch_size<=8192': {},
        'dim<=4096,batch_size>8192': {'BLOCK_M': 2, 'HINTS': False},
        'dim<=8192,batch_size<=64': {'WEIGHTS_EARLY': True},
        'dim<=8192,batch_size<=128': {'WEIGHTS_EARLY': True},
        'dim<=8192,batch_size<=1024': {},
        'dim<=8192,batch_size<=8192': {},
        'dim<=8192,batch_size>8192': {'HINTS': False},
        'dim>8192,batch_size<=64': {'WEIGHTS_EARLY': True},
        'dim>8192,batch_size<=128': {'WEIGHTS_EARLY': True},
        'dim>8192,batch_size<=1024': {},
        'dim>8192,batch_size<=8192': {},
        'dim>8192,batch_size>8192': {'HINTS': False},
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
def column_block(x_rows, row_mask, start, n_cols, stride_xn, BLOCK_N: tl.constexpr, FULL: tl.constexpr,
                 EVICT: tl.constexpr):
    """One column block of BLOCK_M rows as float32 (0 outside the row) and its mask. FULL: the block lies inside
    the row (known only where the row length is a compile-time constant), so no column mask."""
    offs_n = start + tl.arange(0, BLOCK_N)
    if FULL:
        mask = row_mask[:, None]  # broadcast over the block's columns
    else:
        mask = row_mask[:, None] & (offs_n < n_cols)[None, :]
    x = tl.load(x_rows + offs_n[None, :] * stride_xn, mask=mask, other=0.0, eviction_policy=EVICT)
    return x.to(tl.float32), mask


@triton.jit
def welford_block(x_rows, row_mask, start, n_cols, stride_xn, count, mean, m2, BLOCK_N: tl.constexpr,
                  FULL: tl.constexpr):
    """The block's mean and squared deviations merged into the row's (Chan et al.), x kept in L2."""
    x, mask = column_block(x_rows, row_mask, start, n_cols, stride_xn, BLOCK_N, FULL, "evict_last")
    n_b = tl.minimum(n_cols - start, BLOCK_N).to(tl.float32)
    mean_b = tl.sum(x, axis=1) / n_b
    d = tl.where(mask, x - mean_b[:, None], 0.0)
    m2_b = tl.sum(d * d, axis=1)
    total = count + n_b
    delta = mean_b - mean
    mean = mean + delta * (n_b / total)
    m2 = m2 + m2_b + delta * delta * (count * n_b / total)
    return total, mean, m2


@triton.jit
def squared_deviations_block(x_rows, row_mask, start, n_cols, stride_xn, mean, BLOCK_N: tl.constexpr,
                             FULL: tl.constexpr):
    x, mask = column_block(x_rows, row_mask, start, n_cols, stride_xn, BLOCK_N, FULL, "")
    d = tl.where(mask, x - mean[:, None], 0.0)
    return d * d


@triton.jit
def normalise_block(x_rows, y_rows, w_ptr, b_ptr, row_mask, mean, rstd, start, n_cols, stride_xn,
                    BLOCK_N: tl.constexpr, FULL: tl.constexpr):
    """y = (x - mean) * rstd * w + b over one column block; x read the last time (evict_first)."""
    x, mask = column_block(x_rows, row_mask, start, n_cols, stride_xn, BLOCK_N, FULL, "evict_first")
    offs_n = start + tl.arange(0, BLOCK_N)
    if FULL:
        w = tl.load(w_ptr + offs_n, eviction_policy="evict_last").to(tl.float32)
        b = tl.load(b_ptr + offs_n, eviction_policy="evict_last").to(tl.float32)
    else:
        col_mask = offs_n < n_cols
        w = tl.load(w_ptr + offs_n, mask=col_mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
        b = tl.load(b_ptr + offs_n, mask=col_mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
    y = (x - mean[:, None]) * rstd[:, None] * w[None, :] + b[None, :]
    tl.store(y_rows + offs_n[None, :], y.to(y_rows.dtype.element_ty), mask=mask, eviction_policy="evict_first")


@triton.jit
def normalise_row(x_rows, y_rows, w_ptr, b_ptr, row_mask, mean, rstd, N, stride_xn, BLOCK_N: tl.constexpr,
                  N_STATIC: tl.constexpr):
    """The block forms' last pass: every column block normalised and written (unrolled where N_STATIC)."""
    if N_STATIC > 0:
        for start in tl.static_range(0, N_STATIC, BLOCK_N):
            normalise_block(x_rows, y_rows, w_ptr, b_ptr, row_mask, mean, rstd, start, N_STATIC, stride_xn,
                            BLOCK_N, start + BLOCK_N <= N_STATIC)
    else:
        for start in range(0, N, BLOCK_N):
            normalise_block(x_rows, y_rows, w_ptr, b_ptr, row_mask, mean, rstd, start, N, stride_xn, BLOCK_N, False)


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, stride_xm, stride_xn, stride_ym, eps,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, FORM: tl.constexpr, LOADS_TOGETHER: tl.constexpr,
                     WEIGHTS_EARLY: tl.constexpr, N_STATIC: tl.constexpr, EVEN_M: tl.constexpr,
                     X_EVICTION: tl.constexpr = "evict_first"):
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    if EVEN_M:  # every program's rows exist (M a multiple of BLOCK_M): no row predicate on any load or store
        row_mask = tl.full([BLOCK_M], True, tl.int1)
    else:
        row_mask = offs_m < M
    x_rows = x_ptr + offs_m.to(tl.int64)[:, None] * stride_xm
    y_rows = y_ptr + offs_m.to(tl.int64)[:, None] * stride_ym
    # N_STATIC > 0: the row length as a compile-time constant (one compile per row length, as torch.compile
    # does): the column loops of the block forms unroll and every block but a ragged last one loses its mask.
    if N_STATIC > 0:
        n_cols = N_STATIC
    else:
        n_cols = N

    if FORM == 0:
        # Whole rows in registers: load once, mean, variance around it, normalise, write.
        offs_n = tl.arange(0, BLOCK_N)
        col_mask = offs_n < N
        mask = row_mask[:, None] & col_mask[None, :]
        if LOADS_TOGETHER:
            # Volatile loads keep their order in the machine code, and x, needed first, goes last: weight,
            # bias and x go out together, one memory latency for a call of a few microseconds instead of two
            # in series (`ksuite inspect`: load rounds 2-3 -> 1). No eviction hints on volatile loads.
            w = tl.load(w_ptr + offs_n, mask=col_mask, other=0.0, volatile=True)
            b = tl.load(b_ptr + offs_n, mask=col_mask, other=0.0, volatile=True)
            x = tl.load(x_rows + offs_n[None, :] * stride_xn, mask=mask, other=0.0, volatile=True).to(tl.float32)
        else:
            x = tl.load(x_rows + offs_n[None, :] * stride_xn, mask=mask, other=0.0,
                        eviction_policy=X_EVICTION).to(tl.float32)
            if WEIGHTS_EARLY:  # Liger's order: issued before the reductions' barriers, once x is back
                w = tl.load(w_ptr + offs_n, mask=col_mask, other=0.0, eviction_policy="evict_last")
                b = tl.load(b_ptr + offs_n, mask=col_mask, other=0.0, eviction_policy="evict_last")
        mean = tl.sum(x, axis=1) / N
        d = tl.where(mask, x - mean[:, None], 0.0)
        rstd = tl.math.rsqrt(tl.sum(d * d, axis=1) / N + eps)
        if LOADS_TOGETHER or WEIGHTS_EARLY:
            w = w.to(tl.float32)
            b = b.to(tl.float32)
        else:
            # weight and bias after the reductions (L2 hits in a long launch): loaded with x they hold their
            # registers through both reductions
            w = tl.load(w_ptr + offs_n, mask=col_mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
            b = tl.load(b_ptr + offs_n, mask=col_mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
        y = d * rstd[:, None] * w[None, :] + b[None, :]
        tl.store(y_rows + offs_n[None, :], y.to(y_ptr.dtype.element_ty), mask=mask,
                 eviction_policy=X_EVICTION)
    elif FORM == 2:
        # Pass 1: each block's mean and squared deviations merged into the row's (Chan et al.), x kept in
        # L2; pass 2: read back, normalise, write.
        count = tl.zeros([BLOCK_M], dtype=tl.float32)
        mean = tl.zeros([BLOCK_M], dtype=tl.float32)
        m2 = tl.zeros([BLOCK_M], dtype=tl.float32)
        if N_STATIC > 0:
            for start in tl.static_range(0, N_STATIC, BLOCK_N):
                count, mean, m2 = welford_block(x_rows, row_mask, start, n_cols, stride_xn, count, mean, m2,
                                                BLOCK_N, start + BLOCK_N <= N_STATIC)
        else:
            for start in range(0, N, BLOCK_N):
                count, mean, m2 = welford_block(x_rows, row_mask, start, n_cols, stride_xn, count, mean, m2,
                                                BLOCK_N, False)
        rstd = tl.math.rsqrt(m2 / n_cols + eps)
        normalise_row(x_rows, y_rows, w_ptr, b_ptr, row_mask, mean, rstd, N, stride_xn, BLOCK_N, N_STATIC)
    else:
        # Mean, then the variance around it, then normalise, each over column blocks.
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        if N_STATIC > 0:
            for start in tl.static_range(0, N_STATIC, BLOCK_N):
                acc += column_block(x_rows, row_mask, start, n_cols, stride_xn, BLOCK_N,
                                    start + BLOCK_N <= N_STATIC, "")[0]
        else:
            for start in range(0, N, BLOCK_N):
                acc += column_block(x_rows, row_mask, start, n_cols, stride_xn, BLOCK_N, False, "")[0]
        mean = tl.sum(acc, axis=1) / n_cols
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        if N_STATIC > 0:
            for start in tl.static_range(0, N_STATIC, BLOCK_N):
                acc += squared_deviations_block(x_rows, row_mask, start, n_cols, stride_xn, mean, BLOCK_N,
                                                start + BLOCK_N <= N_STATIC)
        else:
            for start in range(0, N, BLOCK_N):
                acc += squared_deviations_block(x_rows, row_mask, start, n_cols, stride_xn, mean, BLOCK_N, False)
        rstd = tl.math.rsqrt(tl.sum(acc, axis=1) / n_cols + eps)
        normalise_row(x_rows, y_rows, w_ptr, b_ptr, row_mask, mean, rstd, N, stride_xn, BLOCK_N, N_STATIC)


def launch_config(M: int, N: int) -> dict:
    """The bucket's tunables, made safe for this exact shape: blocks no wider than the row (to a power
    of two) nor taller than the rows; "rows" holds at most MAX_PER_THREAD values per thread (fewer rows
    per program first, then the loop form); a loop block holds at most MAX_LOOP_TILE elements and as
    many per thread."""
    t = {**TUNABLES, **dispatch_table().get(bucket_of({"dim": N, "batch_size": M}), {})}
    num_warps = t["num_warps"]
    width = triton.next_power_of_2(N)
    block_m = max(1, min(t["BLOCK_M"], triton.next_power_of_2(M)))
    capacity = MAX_PER_THREAD * 32 * num_warps
    if t["VARIANT"] == "rows" and width <= capacity:
        block_m = min(block_m, triton.next_power_of_2(capacity // width + 1) // 2)
        return dict(BLOCK_M=block_m, BLOCK_N=width, FORM=0, LOADS_TOGETHER=bool(t["LOADS_TOGETHER"]),
                    WEIGHTS_EARLY=bool(t["WEIGHTS_EARLY"]) and not t["LOADS_TOGETHER"], N_STATIC=0,
                    EVEN_M=M % block_m == 0, X_EVICTION="evict_first" if t["HINTS"] else "", num_warps=num_warps)
    tile = min(MAX_LOOP_TILE, capacity)
    block_n = min(t["BLOCK_N"], width, tile)
    block_m = max(1, min(block_m, tile // block_n))
    return dict(BLOCK_M=block_m, BLOCK_N=block_n, FORM=2 if t["VARIANT"] == "two_pass" else 1, LOADS_TOGETHER=False,
                WEIGHTS_EARLY=False, N_STATIC=N if t["STATIC_N"] else 0, EVEN_M=M % block_m == 0,
                num_warps=num_warps)


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
