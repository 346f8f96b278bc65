"""swiglu_act for every shape: one kernel family, a dispatch table from shape bucket to launch configuration.

out = silu(g) * u with silu(g) = g / (1 + exp(-g)) (one exp, one fast divide), computed in float32,
rounded once. A plain elementwise op at copy speed, so what differs by shape is only the program size,
the order programs walk memory and the cache hints: at 8192x14336 the starter's 2-D tiles (4096
elements, 4 warps) took 174.5 us, triton_flat's 2048-element pieces with evict_first 178.9, and
torch.compile's flat pointwise kernel (no hints) 165.7. So one kernel with two forms, picked per
bucket of (cols, rows):
- tiles (FLAT False): [BLOCK_SIZE / BLOCK_N rows, BLOCK_N columns], the row tiles of one column block
  first (the starter's grid order), any strides: triton_starter is BLOCK_SIZE 4096, BLOCK_N 1024, 4
  warps, no hint;
- flat (FLAT True): the tensors as one vector of rows * cols elements, one contiguous BLOCK_SIZE piece
  of g, u and out per program (non-contiguous g or u take row and column indices): triton_flat is
  BLOCK_SIZE 2048, 4 warps, evict_first;
and EVICT_FIRST puts the evict_first hint on all three tensors or none (compile's layout is flat
without hints: the one pair this family adds); LOADS_TOGETHER issues every load of a tile before the
first is used (volatile loads, no hints on them).
DISPATCH (written by `ksuite optimize`, from timings on the workload's tuning shapes only) maps each
bucket to the tunables; a bucket it does not name runs TUNABLES (the starter's configuration, the
fastest Triton one measured).

Bytes: g and u read once, out written once: 3 * M * N * esize.
"""

import functools
import re

import torch
import triton
import triton.language as tl

TUNABLES = {"FLAT": False, "BLOCK_SIZE": 4096, "BLOCK_N": 1024, "EVICT_FIRST": False, "num_warps": 4,
            "LOADS_TOGETHER": False}
# Down to 256-element programs of one warp: the search of run 20261201-094732 kept 4096 -> 2048 -> 1024 in
# every decode bucket (1.43-1.48x, then 1.07-1.10x) and then had no smaller size to try, while
# torch.compile's smaller pieces stayed 1 us ahead at 7x6400 (4.0 against 5.0 us).
# The flat form walks the rows as one vector (BLOCK_N unused): a search step on BLOCK_N turns FLAT off as well.
TUNABLE_OVERRIDES = {"FLAT": ["BLOCK_N"]}
TUNABLE_CHOICES = {"FLAT": [False, True], "BLOCK_SIZE": [128, 256, 512, 1024, 2048, 4096, 8192],
                   "BLOCK_N": [128, 256, 512, 1024, 2048], "EVICT_FIRST": [False, True], "num_warps": [1, 2, 4, 8, 16],
                   "LOADS_TOGETHER": [False, True]}
# LOADS_TOGETHER (every load of a tile issued before the first is used; at 127x3072 ptxas issues the last
# load of the tile only once the first g is back) was kept in 2 of 30 buckets as each searched bucket's first
# step on the H200, 2026-12-05 (in layernorm), and lost up to 0.74x at long rows: no longer a seed, still a
# tunable.
MAX_PER_THREAD = 32  # elements of each input a thread may hold (g and u in float32) without spilling
MIN_PER_THREAD = 8  # fewer and a thread's accesses are narrower than 16 bytes: cap the warps instead
# ... except in the flat form, which keeps at least one a lane: torch.compile's pointwise kernels under about 50k
# elements run 128-256 elements a program on four warps, one or two a lane (its launches for rotary, read from its
# cache on the H200, 2026-12-05: solutions/rotary/NOTES.md), where the 1024-element flat programs here hold eight.
# The seed is that launch; the decode shapes are 7-127 rows of 1600-29568 columns (11k-3.8M elements).
TUNABLE_SEEDS = [{"FLAT": True, "BLOCK_SIZE": 256, "num_warps": 4}]
# Shape buckets: upper edges per size constant, ascending (above the last edge: the top bucket).
BUCKETS = {'cols': [4096, 8192, 16384], 'rows': [16, 128, 512, 4096]}
# ksuite optimize table: run 20261205-155429 on NVIDIA H200,
# ksuite optimize table: from the tuning shapes only;
# ksuite optimize table: 20 of 20 buckets tuned at their own shapes (this run: 3 at probe shapes),
# ksuite optimize table: the rest copy the nearest tuned bucket's entry
DISPATCH = {
    'cols<=4096,rows<=16': {'FLAT': True, 'BLOCK_SIZE': 1024},
    'cols<=4096,rows<=128': {'FLAT': True, 'BLOCK_SIZE': 1024},
    'cols<=4096,rows<=512': {'BLOCK_SIZE': 2048},
    'cols<=4096,rows<=4096': {'BLOCK_SIZE': 2048},
    'cols<=4096,rows>4096': {'FLAT': True, 'BLOCK_SIZE': 2048},
    'cols<=8192,rows<=16': {'FLAT': True, 'BLOCK_SIZE': 1024, 'num_warps': 8},
    'cols<=8192,rows<=128': {'BLOCK_SIZE': 2048},
    'cols<=8192,rows<=512': {'BLOCK_SIZE': 2048},
    'cols<=8192,rows<=4096': {'FLAT': True, 'BLOCK_SIZE': 2048},
    'cols<=8192,rows>4096': {'FLAT': True, 'BLOCK_SIZE': 2048},
    'cols<=16384,rows<=16': {'BLOCK_SIZE': 1024},
    'cols<=16384,rows<=128': {'FLAT': True, 'BLOCK_SIZE': 1024, 'num_warps': 8},
    'cols<=16384,rows<=512': {'FLAT': True, 'BLOCK_SIZE': 1024, 'num_warps': 8},
    'cols<=16384,rows<=4096': {'FLAT': True, 'BLOCK_SIZE': 2048},
    'cols<=16384,rows>4096': {'FLAT': True, 'BLOCK_SIZE': 2048},
    'cols>16384,rows<=16': {'BLOCK_SIZE': 1024},
    'cols>16384,rows<=128': {'FLAT': True, 'BLOCK_SIZE': 2048, 'num_warps': 8},
    'cols>16384,rows<=512': {'FLAT': True, 'BLOCK_SIZE': 2048, 'num_warps': 8},
    'cols>16384,rows<=4096': {'FLAT': True, 'BLOCK_SIZE': 2048},
    'cols>16384,rows>4096': {'FLAT': True, 'BLOCK_SIZE': 2048},
}
# DISPATCH is the table of the GPU named here; `ksuite optimize` on another GPU writes that GPU's own table into
# DISPATCH_BY_GPU (its results folder name -> table), and dispatch_table() runs it there.
DISPATCH_GPU = "nvidia-h200"
DISPATCH_BY_GPU = {
    'nvidia-h100-80gb-hbm3': {
        # ksuite optimize table: run 20261206-050450 on NVIDIA H100 80GB HBM3,
        # ksuite optimize table: from the tuning shapes only;
        # ksuite optimize table: 20 of 20 buckets tuned at their own shapes,
        # ksuite optimize table: the rest copy the nearest tuned bucket's entry;
        # ksuite optimize table: this run: 20 searched, 9 at probe shapes;
        # ksuite optimize table: the entries no search on this GPU has timed are DISPATCH's, from nvidia-h200
        'cols<=4096,rows<=16': {'FLAT': True, 'BLOCK_SIZE': 1024},
        'cols<=4096,rows<=128': {'FLAT': True, 'BLOCK_SIZE': 1024},
        'cols<=4096,rows<=512': {'BLOCK_SIZE': 2048},
        'cols<=4096,rows<=4096': {'BLOCK_SIZE': 2048},
        'cols<=4096,rows>4096': {'FLAT': True, 'BLOCK_SIZE': 2048},
        'cols<=8192,rows<=16': {'FLAT': True, 'BLOCK_SIZE': 1024, 'num_warps': 8},
        'cols<=8192,rows<=128': {'BLOCK_SIZE': 1024},
        'cols<=8192,rows<=512': {'BLOCK_SIZE': 1024},
        'cols<=8192,rows<=4096': {'FLAT': True, 'BLOCK_SIZE': 1024},
        'cols<=8192,rows>4096': {'FLAT': True, 'BLOCK_SIZE': 2048},
        'cols<=16384,rows<=16': {'FLAT': True, 'BLOCK_SIZE': 1024},
        'cols<=16384,rows<=128': {'FLAT': True, 'BLOCK_SIZE': 1024, 'num_warps': 8},
        'cols<=16384,rows<=512': {'FLAT': True, 'BLOCK_SIZE': 1024, 'num_warps': 8},
        'cols<=16384,rows<=4096': {'FLAT': True, 'BLOCK_SIZE': 2048},
        'cols<=16384,rows>4096': {'FLAT': True, 'BLOCK_SIZE': 2048},
        'cols>16384,rows<=16': {'BLOCK_SIZE': 1024},
        'cols>16384,rows<=128': {'FLAT': True, 'BLOCK_SIZE': 1024, 'num_warps': 8},
        'cols>16384,rows<=512': {'FLAT': True, 'BLOCK_SIZE': 2048, 'num_warps': 8},
        'cols>16384,rows<=4096': {'FLAT': True, 'BLOCK_SIZE': 2048},
        'cols>16384,rows>4096': {'FLAT': True, 'BLOCK_SIZE': 2048},
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
def swiglu_kernel(g_ptr, u_ptr, out_ptr, M, N, numel, stride_gm, stride_gn, stride_um, stride_un,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, FLAT: tl.constexpr, CONTIGUOUS: tl.constexpr,
                  EVICTION: tl.constexpr, LOADS_TOGETHER: tl.constexpr):
    if FLAT:
        # one contiguous piece of BLOCK_N elements (BLOCK_M is 1) of the rows * cols vector
        offs = tl.program_id(0).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
        mask = offs < numel
        out_offs = offs
        if CONTIGUOUS:
            g_offs = offs
            u_offs = offs
        else:
            row = offs // N
            col = offs % N
            g_offs = row * stride_gm + col * stride_gn
            u_offs = row * stride_um + col * stride_un
    else:
        # program_id(0) walks the row tiles of one column block
        offs_m = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)[:, None]
        offs_n = (tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N))[None, :]
        mask = (offs_m < M) & (offs_n < N)
        g_offs = offs_m * stride_gm + offs_n * stride_gn
        u_offs = offs_m * stride_um + offs_n * stride_un
        out_offs = offs_m * N + offs_n  # out is a new contiguous [M, N] tensor
    if LOADS_TOGETHER:
        # Volatile loads keep their order in the machine code, and g, needed first, goes last: every load of
        # the tile is out before the first is used. Otherwise ptxas issues the last ones after the first g has
        # arrived, a second memory latency in a call of a few microseconds (`ksuite inspect`: load rounds).
        # No eviction hints on volatile loads.
        u = tl.load(u_ptr + u_offs, mask=mask, other=0.0, volatile=True)
        g = tl.load(g_ptr + g_offs, mask=mask, other=0.0, volatile=True)
    else:
        g = tl.load(g_ptr + g_offs, mask=mask, other=0.0, eviction_policy=EVICTION)
        u = tl.load(u_ptr + u_offs, mask=mask, other=0.0, eviction_policy=EVICTION)
    g = g.to(tl.float32)
    u = u.to(tl.float32)
    out = g / (1.0 + tl.exp(-g)) * u  # exp(-g) = inf for very negative g gives -0, as silu does
    tl.store(out_ptr + out_offs, out.to(out_ptr.dtype.element_ty), mask=mask, eviction_policy=EVICTION)


def launch_config(M: int, N: int) -> dict:
    """The bucket's tunables, made safe for this exact shape: no tile wider than the row or taller
    than the rows (the flat form: longer than the vector), rounded up to powers of two; at most
    MAX_PER_THREAD elements per thread (a smaller tile) and at least MIN_PER_THREAD (fewer warps; the flat
    form at least one)."""
    t = {**TUNABLES, **dispatch_table().get(bucket_of({"cols": N, "rows": M}), {})}
    block = min(t["BLOCK_SIZE"], MAX_PER_THREAD * 32 * t["num_warps"])
    if t["FLAT"]:
        block_m, block_n = 1, min(block, triton.next_power_of_2(M * N))
    else:
        block_n = min(t["BLOCK_N"], block, triton.next_power_of_2(N))
        block_m = max(1, min(block // block_n, triton.next_power_of_2(M)))
    per_lane = 1 if t["FLAT"] else MIN_PER_THREAD
    num_warps = max(1, min(t["num_warps"], block_m * block_n // (32 * per_lane)))
    return dict(BLOCK_M=block_m, BLOCK_N=block_n, FLAT=bool(t["FLAT"]),
                EVICTION="evict_first" if t["EVICT_FIRST"] else "", LOADS_TOGETHER=bool(t["LOADS_TOGETHER"]),
                num_warps=num_warps)


def swiglu(g, u):
    assert g.dim() == 2 and g.shape == u.shape, "g and u must be [rows, cols] of one shape"
    assert g.dtype == u.dtype and g.device == u.device
    M, N = g.shape
    out = torch.empty((M, N), dtype=g.dtype, device=g.device)
    if M * N == 0:
        return out
    config = launch_config(M, N)
    if config["FLAT"]:
        grid = (triton.cdiv(M * N, config["BLOCK_N"]),)
    else:
        grid = (triton.cdiv(M, config["BLOCK_M"]), triton.cdiv(N, config["BLOCK_N"]))
    swiglu_kernel[grid](
        g, u, out, M, N, M * N,
        g.stride(0), g.stride(1), u.stride(0), u.stride(1),
        CONTIGUOUS=g.is_contiguous() and u.is_contiguous(), **config,
    )
    return out


class ModelNew(torch.nn.Module):
    def forward(self, g, u):
        return swiglu(g, u)
