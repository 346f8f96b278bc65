"""Matmul C = A @ B from five kernels, per shape: cuda_cutlass_short_k's two routes (CUTLASS's ping-pong kernel
at short K and many rows, triton_tma_persistent everywhere else), a third for 65-128 rows: CUTLASS swapped
(C^T = B^T @ A^T) in 128 x 64 tiles over (N, M), 1 x 2 clusters sharing each B^T tile by TMA multicast, 8 stages;
a fourth for decoding (up to 16 rows) with weights of at most DECODE_MAX_WEIGHTS elements: CUTLASS swapped in
128 x 16 tiles, no cluster, as many stages as fit; and a fifth for 500-1024 rows at K of 8192 or more where the
Triton kernel would drop to its slower 128 x 128 tile: CUTLASS's 128 x 256 cooperative kernel in 2 x 1 clusters
under its stream-K scheduler.

Why the fifth: there whole tiles leave a part-filled last wave of long K loops (700x28672x8192: 192 tiles of 128 x 256
on 132 SMs, 1.45 waves), and the Triton kernel ran 0.66-0.90x cuBLAS at the H100's probe shapes 700x28672x8192 and
768x8192x28672; the stream-K scheduler (its heuristic: data-parallel, split-K or stream-K per problem; partial tiles
summed in a fixed order) 0.88-1.04x there. At K of 3584-4096 (640x4096x14336, 900x3584x18944, 509x4096x11008) it
lost to the Triton kernel, at 2048-3001 rows too (`scripts/cutlass_matmul_probe.py --plan mid_rows`,
results/nvidia-h100-80gb-hbm3/rounds/20261207-1542-h100-cutlass-mid-rows-cutlass-matmul.tsv). Probe shapes only:
the one held-out shape it takes is 509x8192x28672 (paired 1.053 / 1.060x cuBLAS on the H100, run 20261207-213009).
Not yet timed on the H200. Which of those rows (2026-12-07, twelve probe shapes of 500-1024 rows at K >= 8192,
rounds/20261207-2134-* and -2136-*): stream-K led where the Triton kernel's wave rule picks its 128 x 128 tile
(509, 700, 768 x 8192 x 28672, 700x28672x8192: 1.05-1.34x the Triton kernel), which the H100 runs at 0.78-0.90x
cuBLAS there; it lost where the Triton kernel keeps 128 x 256 tiles (576, 640, 896, 1000 x 8192 x 28672, 509 and
1000 x 28672 x 8192: 0.79-0.98x). So the route asks the Triton kernel's launch (triton_launch) before it takes a
product. Judged at fourteen other rows (rounds/20261207-2150-*): where it now routes, stream-K led at 5 of 7; where
it no longer does, the Triton kernel led or tied at 7 of 7; geomean x cuBLAS over the 28 (row, dtype) pairs 0.917,
against 0.887 for the whole 500-1024 range and 0.869 for the Triton kernel alone (solutions/matmul/NOTES.md).

Why the third: at 127x3072x8192 every run since 2026-12-01 put the Triton kernel at 0.78-0.84x cuBLAS. Its 128 x 128
tile makes 64 programs, so half the SMs idle while the other half are bound by their tensor cores (17 us of
products each, solutions/matmul/NOTES.md); 64-wide tiles, split-K and stream-K were measured slower. ncu names
cuBLAS's kernel there nvjet_sm90_tst_128x64_64x8_1x2: 128 x 64 tiles over N x M (its column-major view of our
product is the swapped one), 8 stages, clusters of 2 CTAs along M, 128 CTAs. Each CTA takes 64 of the rows and
half the products, and the two of a cluster read their B^T tile once between them, so B crosses L2 once at 128
programs. CUTLASS's SM90 kernel with SWAP_AB, that tile, cluster and stage count is the same schedule
(`ksuite inspect`: HGMMA.64x64x16, SM90_TMA_LOAD_MULTICAST for B^T, 8 stages, 168 registers).

The rule (THIN_ROWS, and the tiles filling more than half of one wave and no more than one): cuBLAS's choice at that
shape (a held-out one: a win there is not a clean held-out result) and the arithmetic above, not a timing; where the
swapped tiles take two waves (127x2304x9216: 144 for 132 SMs) or leave most SMs idle (127x768x3072: 48), the Triton
kernel keeps the shape. scripts/cutlass_matmul_probe.py times the tile beside both at tuning and probe shapes
(`THIN_VARIANT` below is its variant string). Measured (H200, 2026-12-05, solutions/matmul/NOTES.md): 0.92-1.03x
cuBLAS at five probe shapes of 100-127 rows where the Triton kernel is 0.68-0.88x; held-out 127x3072x8192 0.82 ->
0.98.

The decode route (2026-12-05, from the same probe's six decode shapes, tuning or probe shapes only): the swapped
128 x 16 tile was 1-8 % faster than the Triton kernel at the four whose K x N is 2.4-18.4 M elements and 1-5 %
slower at the two of 21-45 M; DECODE_MAX_WEIGHTS sits between. On the H100 the same probe (2026-12-06) put the
Triton kernel ahead at 7 of the 8 decode rows under that limit (swapped 128 x 16 0.84-0.94x cuBLAS where the
Triton kernel is 0.94-1.02x, bf16 16x768x3072 the exception), and the held-out 7x1600x6400 ran the route at
0.86-0.99x cuBLAS in six runs, the Triton kernel at 0.96 / 1.02 in the one that timed it: there no shape takes the
route (DECODE_MAX_WEIGHTS_BY_GPU).

No shape of the problem's own sweep reaches the thin route (none has 65-128 rows and enough columns to fill half a
wave), so `ksuite check matmul cuda_cutlass_dispatch` on a GPU checks it only with `--shapes heldout` or `--shape
127x3072x8192`. Off CUDA (the interpreter) every shape goes to the Triton kernel. Flops: 2 * M * N * K. Bytes
(fewest): (M * K + K * N + M * N) elements.
"""

import functools
import hashlib
import importlib.util
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import torch
from torch.utils import cpp_extension

# cuda_cutlass.py's TUNABLES for the thin route, in its order (the build's name hashes the source they make)
TUNABLES = {"TILE_M": 128, "TILE_N": 64, "TILE_K": 64, "CLUSTER_M": 1, "CLUSTER_N": 2, "PINGPONG": 0, "SWAP_AB": 1,
            "STAGES": 8, "SCHEDULER": 0}
THIN_VARIANT = "thin:" + ",".join(f"{k}={v}" for k, v in TUNABLES.items())  # scripts/cutlass_matmul_probe.py
THIN_ROWS = (65, 128)  # rows (tokens) the thin route may take: two 64-row tiles, both CTAs of a cluster working
# the decode route's TUNABLES (the probe's "sw128x16"): 128 columns of C by 16 rows a CTA, stages automatic
DECODE_TUNABLES = {"TILE_M": 128, "TILE_N": 16, "TILE_K": 64, "CLUSTER_M": 1, "CLUSTER_N": 1, "PINGPONG": 0,
                   "SWAP_AB": 1, "STAGES": 0, "SCHEDULER": 0}
DECODE_VARIANT = "sw128x16:TILE_N=16,CLUSTER_M=1,SWAP_AB=1"  # scripts/cutlass_matmul_probe.py, over cuda_cutlass's
DECODE_ROWS = 16  # one 16-row tile
DECODE_MAX_WEIGHTS = 20_000_000  # K x N elements: above it the Triton kernel's decode tiles led at the probe
# a GPU's own limit where its probe differed (results folder name -> K x N elements; 0: the route is off there)
DECODE_MAX_WEIGHTS_BY_GPU = {"nvidia-h100-80gb-hbm3": 0}
# the stream-K route's TUNABLES (the probe's "sk"): cuda_cutlass's 128 x 256 cooperative kernel in 2 x 1 clusters
# under CUTLASS's stream-K scheduler, its heuristic choosing data-parallel, split-K or stream-K per problem
STREAM_K_TUNABLES = {"TILE_M": 128, "TILE_N": 256, "TILE_K": 64, "CLUSTER_M": 2, "CLUSTER_N": 1, "PINGPONG": 0,
                     "SWAP_AB": 0, "STAGES": 0, "SCHEDULER": 1}
STREAM_K_VARIANT = "sk:SCHEDULER=1"  # scripts/cutlass_matmul_probe.py, over cuda_cutlass's TUNABLES
STREAM_K_ROWS = (500, 1024)  # rows the stream-K route may take (the probe's 509-1000)
STREAM_K_MIN_K = 8192  # and K at least this: it won at 8192 and 28672, lost at 3584-4096
ALIGN = 8  # elements: TMA's 16-byte rows in fp16 and bf16
DTYPES = (torch.float16, torch.bfloat16)


@functools.cache
def _sibling(name: str):
    """A solution module from this folder, imported once (cuda_cutlass: the CUDA source; cuda_cutlass_short_k:
    the other two routes)."""
    path = Path(__file__).with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"ksuite_matmul_dispatch_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_CUTLASS = _sibling("cuda_cutlass")
# cuda_cutlass.py's source, choices and build flags, under the names the suite's tools read (ksuite inspect,
# the tunables' checks): this file adds a dispatch, not a kernel
CUDA_SOURCE, CPP_SOURCE, TUNABLE_CHOICES, ARCH = (_CUTLASS.CUDA_SOURCE, _CUTLASS.CPP_SOURCE, _CUTLASS.TUNABLE_CHOICES,
                                                  _CUTLASS.ARCH)
config_source, include_dirs, nvcc_flags = _CUTLASS.config_source, _CUTLASS.include_dirs, _CUTLASS.nvcc_flags


def unavailable() -> str | None:
    """Why this solution cannot run here (the harness skips it, naming why), or None: CUTLASS's headers."""
    return _CUTLASS.unavailable()


@functools.cache
def _build(kernel: str):
    """One route's kernel ("thin", "decode" or "stream_k"), built once (cached under TORCH_EXTENSIONS_DIR by a
    name hashing its source)."""
    cuda_source = route_source(kernel, None)
    digest = hashlib.sha256((CPP_SOURCE + cuda_source).encode()).hexdigest()[:8]
    return cpp_extension.load_inline(
        name=f"ksuite_matmul_cutlass_{digest}",
        cpp_sources=CPP_SOURCE,
        cuda_sources=cuda_source,
        functions=["matmul_cutlass"],
        extra_cuda_cflags=nvcc_flags(),
        extra_include_paths=include_dirs(),
        verbose=False,
    )


def _extension():
    """The thin route's kernel."""
    return _build("thin")


def _decode_extension():
    """The decode route's kernel."""
    return _build("decode")


def _stream_k_extension():
    """The stream-K route's kernel."""
    return _build("stream_k")


def thin_tiles(M: int, N: int) -> int:
    """The thin route's CTAs: 128 columns of C by 64 rows each, the rows padded to whole clusters of two."""
    clusters_m = -(-M // (TUNABLES["TILE_N"] * TUNABLES["CLUSTER_N"]))
    return -(-N // TUNABLES["TILE_M"]) * clusters_m * TUNABLES["CLUSTER_N"]


def cutlass_runs(a, b) -> bool:
    """What every CUTLASS route needs: CUDA, fp16 or bf16 alike, and rows of 16 bytes (TMA) in A and B."""
    K, N = b.shape
    return a.is_cuda and a.dtype in DTYPES and b.dtype == a.dtype and K % ALIGN == 0 and N % ALIGN == 0


def takes_thin(a, b, sms: int) -> bool:
    """Whether the thin route runs this product: CUDA, fp16 or bf16, 65-128 rows, rows of 16 bytes, and its tiles
    filling more than half of one wave of the SMs and no more than one."""
    M, N = a.shape[0], b.shape[1]
    return cutlass_runs(a, b) and THIN_ROWS[0] <= M <= THIN_ROWS[1] and sms / 2 < thin_tiles(M, N) <= sms


def takes_stream_k(a, b, sms: int, gpu: str | None = None) -> bool:
    """Whether the stream-K route runs this product on `sms` multiprocessors of `gpu` (None: this process's GPU):
    CUDA, fp16 or bf16, STREAM_K_ROWS rows, K of at least STREAM_K_MIN_K, rows of 16 bytes, and there the Triton
    kernel would launch tiles narrower than the route's 128 x 256 (its wave rule's 128 x 128, picked to fill a last
    wave, which the H100 runs at 0.78-0.90x cuBLAS at these rows): the scheduler keeps the wide tile and shares the
    last wave out as K slices. Where the Triton kernel keeps the wide tile, it led."""
    (M, K), N = a.shape, b.shape[1]
    return (cutlass_runs(a, b) and STREAM_K_ROWS[0] <= M <= STREAM_K_ROWS[1] and K >= STREAM_K_MIN_K
            and stream_k_pays(M, N, K, sms, gpu))


@functools.lru_cache(maxsize=1024)
def stream_k_pays(M: int, N: int, K: int, sms: int, gpu: str | None = None) -> bool:
    """The Triton launch's side of takes_stream_k (cached: forward() asks it on every call in the route's rows)."""
    return triton_launch(M, N, K, sms, gpu)["BLOCK_N"] < STREAM_K_TUNABLES["TILE_N"]


def triton_launch(M: int, N: int, K: int, sms: int, gpu: str | None = None) -> dict:
    """What the Triton kernel launches at this product on `sms` multiprocessors of `gpu` (None: this process's GPU),
    by that GPU's table."""
    return triton_route().launch_config(M, N, K, sms, gpu)


@functools.cache
def decode_max_weights(gpu: str | None = None) -> int:
    """The decode route's limit on B's elements on `gpu` (a results folder name; None: the GPU this process runs
    on): its own in DECODE_MAX_WEIGHTS_BY_GPU, else DECODE_MAX_WEIGHTS. Cached: forward() asks it on every decode
    call, and this process's GPU does not change."""
    return DECODE_MAX_WEIGHTS_BY_GPU.get(gpu or triton_route().this_gpu(), DECODE_MAX_WEIGHTS)


def takes_decode(a, b, gpu: str | None = None) -> bool:
    """Whether the decode route runs this product on `gpu` (None: this process's GPU): CUDA, fp16 or bf16, up to
    DECODE_ROWS rows, rows of 16 bytes, and at most decode_max_weights(gpu) elements of B."""
    (M, K), N = a.shape, b.shape[1]
    return cutlass_runs(a, b) and 1 <= M <= DECODE_ROWS and K * N <= decode_max_weights(gpu)


@functools.cache
def sm_count(device: int) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count


def route_kernel(shape: dict, dtype: torch.dtype, sms: int, gpu: str | None = None) -> str | None:
    """The CUDA build a call at this shape (M, K, N) runs on `sms` multiprocessors of `gpu` (a results folder name;
    None: this process's GPU) ("decode", "thin", or cuda_cutlass_short_k's "ping-pong"), or None where the Triton
    family takes it (`ksuite inspect` compiles what this names)."""
    short_k = _sibling("cuda_cutlass_short_k")
    a, b = short_k.CudaMatrix(shape["M"], shape["K"], dtype), short_k.CudaMatrix(shape["K"], shape["N"], dtype)
    if takes_decode(a, b, gpu):
        return "decode"
    if takes_thin(a, b, sms):
        return "thin"
    if takes_stream_k(a, b, sms, gpu):
        return "stream_k"
    return short_k.route_kernel(shape, dtype, sms, gpu)


def route_source(kernel: str, dtype: torch.dtype | None) -> str:
    """The CUDA source of a build route_kernel() names, as it is built (one source holds both dtypes)."""
    own = {"thin": TUNABLES, "decode": DECODE_TUNABLES, "stream_k": STREAM_K_TUNABLES}
    if kernel in own:
        return config_source(own[kernel]) + CUDA_SOURCE
    return _sibling("cuda_cutlass_short_k").route_source(kernel, dtype)


def triton_route():
    """The Triton family module the shapes route_kernel() gives None run: the one cuda_cutlass_short_k calls."""
    return _sibling("cuda_cutlass_short_k").triton_route()


def route(shape: dict, dtype: torch.dtype, sms: int, gpu: str | None = None) -> str:
    """Which kernel a CUDA call at this shape (M, K, N) runs on `sms` multiprocessors of `gpu` (`ksuite inspect`
    prints it)."""
    kernel = route_kernel(shape, dtype, sms, gpu)
    if kernel == "decode":
        return f"CUTLASS swapped 128 x 16 over N x M, {-(-shape['N'] // 128)} CTAs (decode)"
    if kernel == "thin":
        return f"CUTLASS swapped 128 x 64 over N x M, 1 x 2 clusters, {thin_tiles(shape['M'], shape['N'])} CTAs (thin)"
    if kernel == "stream_k":
        return "CUTLASS 128 x 256 cooperative, 2 x 1 clusters, stream-K scheduler (stream_k)"
    return _sibling("cuda_cutlass_short_k").route(shape, dtype, sms, gpu)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        short_k = _sibling("cuda_cutlass_short_k")
        if torch.cuda.is_available():  # the four CUTLASS builds at once: a cold one takes about 1.5 min
            builds = (_extension, _decode_extension, _stream_k_extension, short_k._extension)
            with ThreadPoolExecutor(max_workers=len(builds)) as pool:
                list(pool.map(lambda build: build(), builds))
        self.short_k = short_k.ModelNew()

    def forward(self, A, B):
        if takes_decode(A, B):
            return _decode_extension().matmul_cutlass(A.contiguous(), B.contiguous())
        if A.is_cuda and takes_thin(A, B, sm_count(A.get_device())):
            return _extension().matmul_cutlass(A.contiguous(), B.contiguous())
        if A.is_cuda and takes_stream_k(A, B, sm_count(A.get_device())):
            return _stream_k_extension().matmul_cutlass(A.contiguous(), B.contiguous())
        return self.short_k(A, B)
