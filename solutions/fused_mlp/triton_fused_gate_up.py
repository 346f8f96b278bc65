"""Gated MLP for Hopper: down(silu(gate(x)) * up(x)) as two persistent TMA matmuls, gate and up fused.

1. gate_up (GATED): h = silu(x @ Wg^T) * (x @ Wu^T). One pass over x: each [BLOCK_M, BLOCK_K] tile of x
   is loaded once and multiplied by the matching tiles of Wg and Wu into two float32 accumulators;
   the epilogue gates them (in float32, rounded once) and stores only h, so the two
   [tokens, intermediate] projections never reach memory.
2. down: out = h @ Wd^T, the persistent matmul of solutions/matmul/triton_tma_persistent.py (the same
   work items: grouped tiles, split-K with a fixed-order float32 sum), reading the weight in
   nn.Linear's [out, in] layout (B^T tiles, transposed on chip, no copy). Split-K pays here: at few
   tokens the down projection has hidden / BLOCK_N tiles (32 at 4096) for 132 SMs.
The file is self-contained (a solution is one file), so the kernels are written here, not imported.

As in the matmul solution, linear_tma_kernel (host-side TensorDescriptors, TMA loads and stores, the
tile loop flattened with the K loop) is what runs on CUDA; linear_ptr_kernel computes the same work
items with masked pointer loads under TRITON_INTERPRET=1, on a Triton without tensor descriptors,
and where TMA's rules fail (a non-contiguous x, a row pitch that is not a multiple of 16 bytes).

DISPATCH maps (tokens, hidden, intermediate) buckets to both kernels' tunables; a bucket it does not
name, or a group an entry leaves out, takes TUNABLES. Flops: 3 matmuls of 2 * tokens * hidden *
intermediate. Bytes: x, Wg, Wu, Wd and out once, plus h written and read once (2 * tokens *
intermediate elements: about 55 us of 4.2 TB/s at 4096 x 14336 tokens, 2.6 % of the matmuls' time).
"""

import functools
import os
import re

import torch
import triton
import triton.language as tl

try:  # Triton >= 3.4: host-side TMA descriptors
    from triton.tools.tensor_descriptor import TensorDescriptor
except ImportError:  # pragma: no cover - older Triton: the pointer kernel only
    TensorDescriptor = None

# gate_up keeps two accumulators: 128 x 128 tiles (2 x 64 float32 registers a thread in 8 warps).
# FLATTEN off everywhere: once the fusion took effect (2026-12-04; before, the K loop's bounds changed with the
# tile and Triton left the loops apart), the held-out bf16 shapes from 509 tokens up ran 15-22 % slower
# (run 20261204-192641 against 20261203-174933: 8192x4096x11008 2859 -> 3681 us); decode unchanged.
TUNABLES = {
    "gate_up": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3, "GROUP_M": 8,
                "PROGRAMS_PER_SM": 1, "FLATTEN": False},
    "down": {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3, "GROUP_M": 8,
             "SPLIT_K": 0, "PROGRAMS_PER_SM": 1, "EPILOGUE_SUBTILE": True, "FLATTEN": False},
}
TUNABLE_CHOICES = {
    "gate_up": {"BLOCK_M": [16, 32, 64, 128], "BLOCK_N": [64, 128], "BLOCK_K": [32, 64, 128], "num_warps": [4, 8],
                "num_stages": [2, 3, 4, 5], "GROUP_M": [4, 8, 16], "PROGRAMS_PER_SM": [1, 2], "FLATTEN": [True, False]},
    "down": {"BLOCK_M": [16, 32, 64, 128, 256], "BLOCK_N": [64, 128, 256], "BLOCK_K": [32, 64, 128],
             "num_warps": [4, 8], "num_stages": [2, 3, 4, 5, 6], "GROUP_M": [4, 8, 16], "SPLIT_K": [0, 1, 2, 4, 8],
             "PROGRAMS_PER_SM": [1, 2], "EPILOGUE_SUBTILE": [True, False], "FLATTEN": [True, False]},
}
MIN_K_TILES = 4  # BLOCK_K steps a split-K slice keeps at least, when SPLIT_K is picked
MAX_SPLIT_K = 16
DEFAULT_SMS = 132  # H100 / H200 SXM: where no CUDA device answers (offline compile for sm_90)
INTERPRETER_SMS = 3
BUCKETS = {"tokens": [16, 64, 256, 1024, 4096], "hidden": [4096], "intermediate": [16384]}
# Prior, hand-written (not measured; `ksuite optimize` replaces it): decode sizes take thin tiles.
DISPATCH = {
    'tokens<=16,hidden<=4096,intermediate<=16384': {
        'gate_up': {'BLOCK_M': 16, 'BLOCK_N': 64, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5,
                'GROUP_M': 8, 'PROGRAMS_PER_SM': 1, 'FLATTEN': False},
        'down': {'BLOCK_M': 16, 'BLOCK_N': 64, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5,
                'GROUP_M': 8, 'SPLIT_K': 0, 'PROGRAMS_PER_SM': 1, 'EPILOGUE_SUBTILE': True, 'FLATTEN': False},
    },
    'tokens<=16,hidden<=4096,intermediate>16384': {
        'gate_up': {'BLOCK_M': 16, 'BLOCK_N': 64, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5,
                'GROUP_M': 8, 'PROGRAMS_PER_SM': 1, 'FLATTEN': False},
        'down': {'BLOCK_M': 16, 'BLOCK_N': 64, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5,
                'GROUP_M': 8, 'SPLIT_K': 0, 'PROGRAMS_PER_SM': 1, 'EPILOGUE_SUBTILE': True, 'FLATTEN': False},
    },
    'tokens<=16,hidden>4096,intermediate<=16384': {
        'gate_up': {'BLOCK_M': 16, 'BLOCK_N': 64, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5,
                'GROUP_M': 8, 'PROGRAMS_PER_SM': 1, 'FLATTEN': False},
        'down': {'BLOCK_M': 16, 'BLOCK_N': 64, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5,
                'GROUP_M': 8, 'SPLIT_K': 0, 'PROGRAMS_PER_SM': 1, 'EPILOGUE_SUBTILE': True, 'FLATTEN': False},
    },
    'tokens<=16,hidden>4096,intermediate>16384': {
        'gate_up': {'BLOCK_M': 16, 'BLOCK_N': 64, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5,
                'GROUP_M': 8, 'PROGRAMS_PER_SM': 1, 'FLATTEN': False},
        'down': {'BLOCK_M': 16, 'BLOCK_N': 64, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5,
                'GROUP_M': 8, 'SPLIT_K': 0, 'PROGRAMS_PER_SM': 1, 'EPILOGUE_SUBTILE': True, 'FLATTEN': False},
    },
    'tokens<=64,hidden<=4096,intermediate<=16384': {
        'gate_up': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 64, 'num_warps': 4, 'num_stages': 4,
                'GROUP_M': 8, 'PROGRAMS_PER_SM': 1, 'FLATTEN': False},
        'down': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4,
                'GROUP_M': 8, 'SPLIT_K': 0, 'PROGRAMS_PER_SM': 1, 'EPILOGUE_SUBTILE': True, 'FLATTEN': False},
    },
    'tokens<=64,hidden<=4096,intermediate>16384': {
        'gate_up': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 64, 'num_warps': 4, 'num_stages': 4,
                'GROUP_M': 8, 'PROGRAMS_PER_SM': 1, 'FLATTEN': False},
        'down': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4,
                'GROUP_M': 8, 'SPLIT_K': 0, 'PROGRAMS_PER_SM': 1, 'EPILOGUE_SUBTILE': True, 'FLATTEN': False},
    },
    'tokens<=64,hidden>4096,intermediate<=16384': {
        'gate_up': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 64, 'num_warps': 4, 'num_stages': 4,
                'GROUP_M': 8, 'PROGRAMS_PER_SM': 1, 'FLATTEN': False},
        'down': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4,
                'GROUP_M': 8, 'SPLIT_K': 0, 'PROGRAMS_PER_SM': 1, 'EPILOGUE_SUBTILE': True, 'FLATTEN': False},
    },
    'tokens<=64,hidden>4096,intermediate>16384': {
        'gate_up': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 64, 'num_warps': 4, 'num_stages': 4,
                'GROUP_M': 8, 'PROGRAMS_PER_SM': 1, 'FLATTEN': False},
        'down': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4,
                'GROUP_M': 8, 'SPLIT_K': 0, 'PROGRAMS_PER_SM': 1, 'EPILOGUE_SUBTILE': True, 'FLATTEN': False},
    },
}
# DISPATCH is the table of the GPU named here; `ksuite optimize` on another GPU writes that GPU's own table into
# DISPATCH_BY_GPU (its results folder name -> table), and dispatch_table() runs it there.
DISPATCH_GPU = "nvidia-h200"
DISPATCH_BY_GPU = {}


def bucket_of(sizes: dict) -> str:
    """'tokens<=16,hidden<=4096,intermediate<=16384': each size's first range whose edge it does not pass."""
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
def _work_item(work, num_pid_m, num_pid_n, k_tiles, k_per_split, GROUP_M: tl.constexpr):
    """Work item -> (pid_m, pid_n, split, first and end K step): split slowest, tiles GROUP_M tall."""
    num_tiles = num_pid_m * num_pid_n
    split = work // num_tiles
    tile = work % num_tiles
    tiles_in_group = GROUP_M * num_pid_n
    first_m = (tile // tiles_in_group) * GROUP_M
    group_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (tile % group_m)
    pid_n = (tile % tiles_in_group) // group_m
    k_lo = split * k_per_split
    k_hi = min(k_lo + k_per_split, k_tiles)
    return pid_m, pid_n, split, k_lo, k_hi


@triton.jit
def linear_tma_kernel(
    x_desc, w_desc, w2_desc, out_desc,
    M, N, K, k_per_split,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    SPLIT_K: tl.constexpr, GATED: tl.constexpr, NUM_PROGRAMS: tl.constexpr,
    EPILOGUE_SUBTILE: tl.constexpr, FLATTEN: tl.constexpr,
):
    # out = x @ W^T (W [N, K]); GATED: silu(x @ W^T) * (x @ W2^T), never split.
    # out_desc: out [M, N] (SPLIT_K 1) or the float32 workspace [SPLIT_K * num_pid_m * BLOCK_M, N]
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_work = num_pid_m * num_pid_n * SPLIT_K
    for work in tl.range(tl.program_id(0), num_work, NUM_PROGRAMS, flatten=FLATTEN):
        pid_m, pid_n, split, k_lo, _ = _work_item(work, num_pid_m, num_pid_n, k_tiles, k_per_split, GROUP_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        acc2 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        # k_per_split steps for every item, bounds the outer loop does not change: Triton fuses the two loops
        # (FLATTEN) only then. A last slice that ends past K loads zeros there (TMA's fill): they add nothing.
        for kk in range(0, k_per_split):
            off_k = (k_lo + kk) * BLOCK_K
            x = x_desc.load([off_m, off_k])
            acc = tl.dot(x, w_desc.load([off_n, off_k]).T, acc)
            if GATED:  # the same x tile for the second weight
                acc2 = tl.dot(x, w2_desc.load([off_n, off_k]).T, acc2)
        if GATED:
            acc = acc * tl.sigmoid(acc) * acc2
        row = split * (num_pid_m * BLOCK_M) + off_m
        if EPILOGUE_SUBTILE:
            halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
            left, right = tl.split(halves)
            out_desc.store([row, off_n], left.to(out_desc.dtype))
            out_desc.store([row, off_n + BLOCK_N // 2], right.to(out_desc.dtype))
        else:
            out_desc.store([row, off_n], acc.to(out_desc.dtype))


@triton.jit
def linear_ptr_kernel(
    x_ptr, w_ptr, w2_ptr, out_ptr,
    M, N, K, k_per_split,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    SPLIT_K: tl.constexpr, GATED: tl.constexpr, NUM_PROGRAMS: tl.constexpr, UPCAST: tl.constexpr,
):
    # the same work items as linear_tma_kernel with masked pointer loads; w2 has w's strides
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_work = num_pid_m * num_pid_n * SPLIT_K
    for work in range(tl.program_id(0), num_work, NUM_PROGRAMS):
        pid_m, pid_n, split, k_lo, k_hi = _work_item(work, num_pid_m, num_pid_n, k_tiles, k_per_split, GROUP_M)
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        acc2 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_lo, k_hi):
            offs_k = ki * BLOCK_K + tl.arange(0, BLOCK_K)
            x = tl.load(x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk,
                        mask=(offs_m[:, None] < M) & (offs_k[None, :] < K), other=0.0)
            w_offs = offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn  # the [K, N] operand W^T
            w_mask = (offs_k[:, None] < K) & (offs_n[None, :] < N)
            w = tl.load(w_ptr + w_offs, mask=w_mask, other=0.0)
            if UPCAST:  # only under the CPU interpreter, whose tl.dot cannot read bfloat16
                x = x.to(tl.float32)
                w = w.to(tl.float32)
            acc = tl.dot(x, w, acc)
            if GATED:
                w2 = tl.load(w2_ptr + w_offs, mask=w_mask, other=0.0)
                if UPCAST:
                    w2 = w2.to(tl.float32)
                acc2 = tl.dot(x, w2, acc2)
        if GATED:
            acc = acc * tl.sigmoid(acc) * acc2
        rows = split * (num_pid_m * BLOCK_M) + offs_m
        tl.store(out_ptr + rows[:, None] * stride_om + offs_n[None, :] * stride_on,
                 acc.to(out_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def split_k_sum_kernel(ws_ptr, c_ptr, MN, split_stride, SPLIT_K: tl.constexpr, BLOCK: tl.constexpr):
    """C (contiguous [M, N]) = the sum over slices of the float32 workspace, slice 0 first."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < MN
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(SPLIT_K):
        acc += tl.load(ws_ptr + s * split_stride + offs, mask=mask, other=0.0)
    tl.store(c_ptr + offs, acc.to(c_ptr.dtype.element_ty), mask=mask)


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0").lower() in ("1", "true", "on", "yes")


_SMS: dict = {}


def sm_count(device: torch.device) -> int:
    if interpreting():
        return INTERPRETER_SMS
    if device.type != "cuda":
        return DEFAULT_SMS
    if device.index not in _SMS:
        _SMS[device.index] = torch.cuda.get_device_properties(device).multi_processor_count
    return _SMS[device.index]


def tma_ok(*tensors: torch.Tensor) -> bool:
    """TMA's rules for 2-D operands: last dimension contiguous, row pitch and base 16-byte aligned."""
    if TensorDescriptor is None or interpreting():
        return False
    return all(t.stride(1) == 1 and (t.stride(0) * t.element_size()) % 16 == 0 and t.data_ptr() % 16 == 0
               for t in tensors)


def launch_config(group: str, sizes: dict, M: int, N: int, K: int, sms: int) -> dict:
    """One kernel's tunables for its bucket, made safe for this GEMM: no block much larger than the
    matrix, SPLIT_K picked where 0 (gate_up: never split, the gating needs whole sums).
    FLATTEN only without split-K: the tutorial flattens loops whose K trip count is the same
    for every tile; a split's last slice may be shorter, untried on a GPU so far."""
    t = {**TUNABLES[group], **dispatch_table().get(bucket_of(sizes), {}).get(group, {})}
    block_m = max(16, min(t["BLOCK_M"], triton.next_power_of_2(M)))
    block_n = max(16, min(t["BLOCK_N"], triton.next_power_of_2(N)))
    block_k = max(16, min(t["BLOCK_K"], triton.next_power_of_2(K)))
    k_tiles = triton.cdiv(K, block_k)
    tiles = triton.cdiv(M, block_m) * triton.cdiv(N, block_n)
    programs = sms * t["PROGRAMS_PER_SM"]
    split = t.get("SPLIT_K", 1)
    if split == 0:
        split = 1
        while (split * 2 <= MAX_SPLIT_K and tiles * split * 2 <= programs
               and k_tiles >= MIN_K_TILES * split * 2):
            split *= 2
    k_per_split = triton.cdiv(k_tiles, min(split, k_tiles))
    split = triton.cdiv(k_tiles, k_per_split)
    return dict(BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=t["GROUP_M"], SPLIT_K=split,
                k_per_split=k_per_split, programs=min(programs, tiles * split), num_warps=t["num_warps"],
                num_stages=t["num_stages"], EPILOGUE_SUBTILE=bool(t.get("EPILOGUE_SUBTILE", False)) and block_n >= 32,
                FLATTEN=bool(t["FLATTEN"]) and split == 1)


def linear(x: torch.Tensor, w: torch.Tensor, cfg: dict, w2: torch.Tensor | None = None) -> torch.Tensor:
    """x @ w^T, or with w2: silu(x @ w^T) * (x @ w2^T); weights [N, K] as nn.Linear holds them."""
    M, K = x.shape
    N = w.shape[0]
    gated = w2 is not None
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    split = cfg["SPLIT_K"]
    assert not (gated and split > 1), "the gated kernel needs whole sums"
    dest = out if split == 1 else torch.empty((split * triton.cdiv(M, cfg["BLOCK_M"]) * cfg["BLOCK_M"], N),
                                              dtype=torch.float32, device=x.device)
    w2 = w if w2 is None else w2
    common = dict(BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"], GROUP_M=cfg["GROUP_M"],
                  SPLIT_K=split, GATED=gated, NUM_PROGRAMS=cfg["programs"], num_warps=cfg["num_warps"],
                  num_stages=cfg["num_stages"])
    grid = (cfg["programs"],)
    if tma_ok(x, w, w2, dest):
        bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
        out_block = [bm, bn // 2] if cfg["EPILOGUE_SUBTILE"] else [bm, bn]
        linear_tma_kernel[grid](
            TensorDescriptor.from_tensor(x, [bm, bk]), TensorDescriptor.from_tensor(w, [bn, bk]),
            TensorDescriptor.from_tensor(w2, [bn, bk]), TensorDescriptor.from_tensor(dest, out_block),
            M, N, K, cfg["k_per_split"], EPILOGUE_SUBTILE=cfg["EPILOGUE_SUBTILE"], FLATTEN=cfg["FLATTEN"], **common)
    else:
        assert w2.stride() == w.stride()
        linear_ptr_kernel[grid](
            x, w, w2, dest, M, N, K, cfg["k_per_split"],
            x.stride(0), x.stride(1), w.stride(0), w.stride(1), dest.stride(0), dest.stride(1),
            UPCAST=interpreting(), **common)
    if split > 1:
        block = 1024
        padded_rows = dest.shape[0] // split
        split_k_sum_kernel[(triton.cdiv(M * N, block),)](dest, out, M * N, padded_rows * N, SPLIT_K=split,
                                                         BLOCK=block, num_warps=4)
    return out


def fused_mlp(x, w_gate, w_up, w_down):
    assert x.dim() == 2, "x must be [tokens, hidden]"
    tokens, hidden = x.shape
    inter = w_gate.shape[0]
    assert w_gate.shape == w_up.shape == (inter, hidden), "gate and up weights must be [intermediate, hidden]"
    assert w_down.shape == (hidden, inter), "down weight must be [hidden, intermediate]"
    assert x.dtype == w_gate.dtype == w_up.dtype == w_down.dtype, "one dtype for x and the weights"
    assert x.dtype in (torch.float16, torch.bfloat16), "float16 or bfloat16"
    if tokens == 0:
        return torch.empty((0, hidden), dtype=x.dtype, device=x.device)
    sizes = {"tokens": tokens, "hidden": hidden, "intermediate": inter}
    sms = sm_count(x.device)
    h = linear(x, w_gate, launch_config("gate_up", sizes, tokens, inter, hidden, sms), w2=w_up)
    return linear(h, w_down, launch_config("down", sizes, tokens, hidden, inter, sms))


class ModelNew(torch.nn.Module):
    def __init__(self, hidden, intermediate):
        super().__init__()
        self.gate_proj = torch.nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = torch.nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = torch.nn.Linear(intermediate, hidden, bias=False)

    def forward(self, x):
        return fused_mlp(x, self.gate_proj.weight, self.up_proj.weight, self.down_proj.weight)
