"""Row sums for every shape: one kernel family, a dispatch table from shape bucket to launch configuration.

The fastest launch differs by shape: decoding (1..64 rows) has fewer rows than multiprocessors, long
prompts of short rows want many rows per program, and at 8192x8192 triton_rowwise (one load per
program, then exit) stays 1.7 us behind torch.compile, perhaps because each wave starts with an empty
pipe. So one kernel with three forms, picked per bucket of (cols, rows):
- one pass (the row fits in BLOCK_N): BLOCK_M = BLOCK_SIZE // width whole rows per program, one masked
  load, a float32 tree sum: triton_rowwise (BLOCK_SIZE 16384, BLOCK_N 8192, 16 warps);
- column blocks (the row is wider than BLOCK_N): a tl.range over BLOCK_N-column blocks into a
  [BLOCK_M, BLOCK_N] float32 accumulator, NUM_STAGES deep (asynchronous copies; 1 = plain loads):
  triton_starter is BLOCK_SIZE 1024, BLOCK_N 1024, NUM_STAGES 1, 4 warps;
- persistent (PROGRAMS_PER_SM > 0, one-pass tiles only): PROGRAMS_PER_SM programs per multiprocessor
  loop over the row tiles in a NUM_STAGES-deep tl.range, so the next tile's loads are in flight while
  this one is added (new: the test of the empty-pipe hypothesis).
Each row is summed by one program in a fixed order: repeated calls are bitwise equal.
DISPATCH (written by `ksuite optimize`, from timings on the workload's tuning shapes only) maps each
bucket to the tunables; a bucket it does not name runs TUNABLES (triton_rowwise's configuration).

Bytes: x read once, y written once: (M * N + M) * esize. x carries evict_first.
"""

import functools
import re

import torch
import torch.nn as nn
import triton
import triton.language as tl

# BLOCK_SIZE: elements a program loads at once (rows x columns); BLOCK_N: the widest column block (a
# row up to BLOCK_N wide is one load); PROGRAMS_PER_SM: 0 = one program per row tile, k = a persistent
# grid of k programs per multiprocessor; NUM_STAGES: depth of the pipelined loops (1 = plain loads).
TUNABLES = {"BLOCK_SIZE": 16384, "BLOCK_N": 8192, "NUM_STAGES": 3, "PROGRAMS_PER_SM": 0, "num_warps": 16}
TUNABLE_CHOICES = {"BLOCK_SIZE": [1024, 4096, 16384, 32768], "BLOCK_N": [1024, 2048, 4096, 8192],
                   "NUM_STAGES": [1, 2, 3, 4], "PROGRAMS_PER_SM": [0, 1, 2, 4], "num_warps": [2, 4, 8, 16]}
MAX_PER_THREAD = 64  # float32 values a thread may hold in a one-pass tile before ptxas spills
MAX_LOOP_PER_THREAD = 32  # the same for a column-block accumulator (it also holds the block being loaded)
MIN_PER_THREAD = 8  # fewer and a thread's loads are narrower than 16 bytes: cap the warps instead
SMEM_BUDGET = 160 * 1024  # bytes of pipelined copies in shared memory a program may ask for
# Shape buckets: upper edges per size constant, ascending (above the last edge: the top bucket).
BUCKETS = {"cols": [1024, 2048, 4096, 8192], "rows": [64, 1024, 8192]}
# ksuite optimize table: run 20261202-022403 on NVIDIA H200, from the tuning shapes only;
# ksuite optimize table: 16 of 20 buckets tuned at their own shapes (5 at probe shapes), the rest copy their nearest
DISPATCH = {
    'cols<=1024,rows<=64':
        {'BLOCK_SIZE': 1024, 'BLOCK_N': 8192, 'NUM_STAGES': 3, 'PROGRAMS_PER_SM': 0, 'num_warps': 16},
    'cols<=1024,rows<=1024':
        {'BLOCK_SIZE': 4096, 'BLOCK_N': 8192, 'NUM_STAGES': 3, 'PROGRAMS_PER_SM': 0, 'num_warps': 16},
    'cols<=1024,rows<=8192':
        {'BLOCK_SIZE': 16384, 'BLOCK_N': 8192, 'NUM_STAGES': 3, 'PROGRAMS_PER_SM': 0, 'num_warps': 16},
    'cols<=1024,rows>8192':
        {'BLOCK_SIZE': 4096, 'BLOCK_N': 8192, 'NUM_STAGES': 3, 'PROGRAMS_PER_SM': 0, 'num_warps': 4},
    'cols<=2048,rows<=64': {'BLOCK_SIZE': 4096, 'BLOCK_N': 8192, 'NUM_STAGES': 3, 'PROGRAMS_PER_SM': 0, 'num_warps': 4},
    'cols<=2048,rows<=1024':
        {'BLOCK_SIZE': 4096, 'BLOCK_N': 8192, 'NUM_STAGES': 3, 'PROGRAMS_PER_SM': 0, 'num_warps': 4},
    'cols<=2048,rows<=8192':
        {'BLOCK_SIZE': 4096, 'BLOCK_N': 8192, 'NUM_STAGES': 4, 'PROGRAMS_PER_SM': 0, 'num_warps': 4},
    'cols<=2048,rows>8192':
        {'BLOCK_SIZE': 4096, 'BLOCK_N': 8192, 'NUM_STAGES': 3, 'PROGRAMS_PER_SM': 0, 'num_warps': 4},
    'cols<=4096,rows<=64': {'BLOCK_SIZE': 4096, 'BLOCK_N': 8192, 'NUM_STAGES': 3, 'PROGRAMS_PER_SM': 0, 'num_warps': 4},
    'cols<=4096,rows<=1024':
        {'BLOCK_SIZE': 4096, 'BLOCK_N': 8192, 'NUM_STAGES': 3, 'PROGRAMS_PER_SM': 0, 'num_warps': 4},
    'cols<=4096,rows<=8192':
        {'BLOCK_SIZE': 4096, 'BLOCK_N': 8192, 'NUM_STAGES': 3, 'PROGRAMS_PER_SM': 0, 'num_warps': 4},
    'cols<=4096,rows>8192':
        {'BLOCK_SIZE': 16384, 'BLOCK_N': 8192, 'NUM_STAGES': 3, 'PROGRAMS_PER_SM': 0, 'num_warps': 16},
    'cols<=8192,rows<=64':
        {'BLOCK_SIZE': 4096, 'BLOCK_N': 8192, 'NUM_STAGES': 3, 'PROGRAMS_PER_SM': 0, 'num_warps': 16},
    'cols<=8192,rows<=1024':
        {'BLOCK_SIZE': 16384, 'BLOCK_N': 8192, 'NUM_STAGES': 3, 'PROGRAMS_PER_SM': 0, 'num_warps': 16},
    'cols<=8192,rows<=8192':
        {'BLOCK_SIZE': 1024, 'BLOCK_N': 8192, 'NUM_STAGES': 3, 'PROGRAMS_PER_SM': 0, 'num_warps': 16},
    'cols<=8192,rows>8192':
        {'BLOCK_SIZE': 16384, 'BLOCK_N': 8192, 'NUM_STAGES': 3, 'PROGRAMS_PER_SM': 0, 'num_warps': 16},
    'cols>8192,rows<=64': {'BLOCK_SIZE': 4096, 'BLOCK_N': 8192, 'NUM_STAGES': 3, 'PROGRAMS_PER_SM': 0, 'num_warps': 16},
    'cols>8192,rows<=1024':
        {'BLOCK_SIZE': 16384, 'BLOCK_N': 8192, 'NUM_STAGES': 3, 'PROGRAMS_PER_SM': 0, 'num_warps': 16},
    'cols>8192,rows<=8192':
        {'BLOCK_SIZE': 1024, 'BLOCK_N': 8192, 'NUM_STAGES': 3, 'PROGRAMS_PER_SM': 0, 'num_warps': 16},
    'cols>8192,rows>8192':
        {'BLOCK_SIZE': 16384, 'BLOCK_N': 8192, 'NUM_STAGES': 3, 'PROGRAMS_PER_SM': 0, 'num_warps': 16},
}
# DISPATCH is the table of the GPU named here; `ksuite optimize` on another GPU writes that GPU's own table into
# DISPATCH_BY_GPU (its results folder name -> table), and dispatch_table() runs it there.
DISPATCH_GPU = "nvidia-h200"
DISPATCH_BY_GPU = {}

_sm_counts: dict = {}


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
def _sum_rows(x_ptr, y_ptr, M, N, stride_xm, stride_xn, row0, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Rows row0 .. row0 + BLOCK_M, each in one load (BLOCK_N >= N), summed in float32."""
    offs_m = row0 + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    row_mask = offs_m < M
    mask = row_mask[:, None] & (offs_n < N)[None, :]
    x_rows = x_ptr + offs_m.to(tl.int64)[:, None] * stride_xm
    x = tl.load(x_rows + offs_n[None, :] * stride_xn, mask=mask, other=0.0, eviction_policy="evict_first")
    acc = tl.sum(x.to(tl.float32), axis=1)
    tl.store(y_ptr + offs_m, acc.to(y_ptr.dtype.element_ty), mask=row_mask)


@triton.jit
def row_sum_kernel(x_ptr, y_ptr, M, N, stride_xm, stride_xn, num_tiles,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, ONE_PASS: tl.constexpr,
                   PERSISTENT: tl.constexpr, NUM_STAGES: tl.constexpr):
    pid = tl.program_id(0)
    if PERSISTENT:
        # Tiles pid, pid + programs, ...: the pipelined loop issues the next tiles' loads early.
        for tile in tl.range(pid, num_tiles, tl.num_programs(0), num_stages=NUM_STAGES):
            _sum_rows(x_ptr, y_ptr, M, N, stride_xm, stride_xn, tile * BLOCK_M, BLOCK_M, BLOCK_N)
    elif ONE_PASS:
        # No loop on purpose: inside one, ptxas issues a thread's loads one after another.
        _sum_rows(x_ptr, y_ptr, M, N, stride_xm, stride_xn, pid * BLOCK_M, BLOCK_M, BLOCK_N)
    else:
        offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
        row_mask = offs_m < M
        x_rows = x_ptr + offs_m.to(tl.int64)[:, None] * stride_xm
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for start in tl.range(0, N, BLOCK_N, num_stages=NUM_STAGES):
            offs_n = start + tl.arange(0, BLOCK_N)
            mask = row_mask[:, None] & (offs_n < N)[None, :]
            x = tl.load(x_rows + offs_n[None, :] * stride_xn, mask=mask, other=0.0, eviction_policy="evict_first")
            acc += x.to(tl.float32)
        tl.store(y_ptr + offs_m, tl.sum(acc, axis=1).to(y_ptr.dtype.element_ty), mask=row_mask)


def _sm_count(device: torch.device) -> int:
    key = str(device)
    if key not in _sm_counts:
        _sm_counts[key] = torch.cuda.get_device_properties(device).multi_processor_count \
            if device.type == "cuda" else 4
    return _sm_counts[key]


def launch_config(M: int, N: int, esize: int) -> tuple[dict, int]:
    """The bucket's tunables, made safe for this exact shape: one pass while the row (rounded up to a
    power of two) fits in BLOCK_N and in MAX_PER_THREAD values per thread, else column blocks; no tile
    taller than the rows; at least MIN_PER_THREAD elements per thread (fewer warps on small tiles);
    pipelined copies within SMEM_BUDGET; persistent only for one-pass tiles. Returns the kernel's
    launch options and the persistent grid's programs per multiprocessor."""
    t = {**TUNABLES, **dispatch_table().get(bucket_of({"cols": N, "rows": M}), {})}
    width = triton.next_power_of_2(N)
    threads = 32 * t["num_warps"]
    one_pass = width <= min(t["BLOCK_N"], MAX_PER_THREAD * threads)
    block_n = width if one_pass else min(t["BLOCK_N"], width, MAX_LOOP_PER_THREAD * threads)
    cap = MAX_PER_THREAD if one_pass else MAX_LOOP_PER_THREAD
    block_m = max(1, min(t["BLOCK_SIZE"] // block_n, triton.next_power_of_2(M), cap * threads // block_n))
    tile = block_m * block_n
    num_warps = max(1, min(t["num_warps"], tile // (32 * MIN_PER_THREAD)))
    persistent = one_pass and t["PROGRAMS_PER_SM"] > 0
    stages = max(1, min(t["NUM_STAGES"], SMEM_BUDGET // (tile * esize)))
    return dict(BLOCK_M=block_m, BLOCK_N=block_n, ONE_PASS=one_pass, PERSISTENT=persistent,
                NUM_STAGES=stages, num_warps=num_warps), t["PROGRAMS_PER_SM"]


def row_sum(x: torch.Tensor) -> torch.Tensor:
    assert x.dim() == 2 and x.is_floating_point(), "x must be [rows, cols] floats"
    M, N = x.shape
    y = torch.empty((M,), device=x.device, dtype=x.dtype)
    if M == 0:
        return y
    if N == 0:
        return y.zero_()
    config, per_sm = launch_config(M, N, x.element_size())
    num_tiles = triton.cdiv(M, config["BLOCK_M"])
    programs = min(num_tiles, per_sm * _sm_count(x.device)) if config["PERSISTENT"] else num_tiles
    row_sum_kernel[(programs,)](x, y, M, N, x.stride(0), x.stride(1), num_tiles, **config)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return row_sum(x)
