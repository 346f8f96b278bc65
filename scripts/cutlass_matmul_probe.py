"""Time variants of solutions/matmul/cuda_cutlass.py beside cuBLAS (torch) and triton_tma_persistent.

Each variant is a set of TUNABLES overrides (tile, cluster, schedule); their CUTLASS extensions are built
first, all at once in threads (a cold build of one takes ~1.5 min on the H200's host). Then for each (shape,
dtype): torch's a @ b, the Triton solution and each variant, each call checked once against torch (max
|difference|: a probe, not the harness's float64 check), then timed by the harness's own timer (clean L2
flush, a spin before each call; median us). One TSV row per timing, flushed as written; stops starting new
shapes after --budget-s. Shapes are MxKxN, as the bench prints them. What it is for: whether a CUTLASS tile
and cluster (cuBLAS's 128 x 64 tiles in 1 x 2 clusters at M 127, say) beat the Triton kernel at shapes where
it loses, at tuning or probe shapes; `ksuite bench` is the judged measurement. Needs a CUDA GPU and CUTLASS's
headers (scripts/cutlass_headers.sh).

Usage: python3 scripts/cutlass_matmul_probe.py OUT.tsv --variants "base:;c12:TILE_N=64,CLUSTER_M=1,CLUSTER_N=2" \
           --shapes "127x2304x9216;127x2048x6144" [--dtypes bf16,fp16] [--budget-s 300]
       python3 scripts/cutlass_matmul_probe.py OUT.tsv --plan NAME   (PLANS below: thin, mid_rows, ...)
"""

from __future__ import annotations

import math
import os
import sys
import time
from functools import partial
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fmha_probe import build_all, load_variants, probe_args, time_rows, write_table  # noqa: E402

# thin: CUTLASS swapped for products of 1-127 rows (solutions/matmul/NOTES.md, "cuda_cutlass_dispatch"), at tuning
# shapes and probe shapes that neither workload set holds (tests/test_variant_plans.py checks that none is held
# out): cuda_cutlass_dispatch's thin kernel (cuBLAS's 128 x 64 over N x M in 1 x 2 clusters), the same with the
# automatic stage count and without the cluster, the unswapped 128 x 64 tile timed on 2026-12-04, narrower swapped
# tiles for 33-64 and 9-16 rows, cuBLAS's decode kernel (64 x 8 in 4 x 1 clusters, ping-pong) and a 16-wide one, and
# cuda_cutlass_short_k's ping-pong kernel (so that a held-out bench after the probe finds both files' builds cached).
PLANS = {
    "thin": ("127x2048x6144;127x4096x8192;127x3072x7168;100x2048x8192;127x3584x6144;127x2304x9216;"
             "7x2048x5632;16x2560x7168;1x1536x6144;7x4096x11008;16x2304x9216;16x768x3072",
             "thin:TILE_N=64,CLUSTER_M=1,CLUSTER_N=2,SWAP_AB=1,STAGES=8;"
             "thin_auto:TILE_N=64,CLUSTER_M=1,CLUSTER_N=2,SWAP_AB=1;"
             "thin_c11:TILE_N=64,CLUSTER_M=1,SWAP_AB=1,STAGES=8;"
             "c12_128x64:TILE_N=64,CLUSTER_M=1,CLUSTER_N=2;"
             "sw128x32:TILE_N=32,CLUSTER_M=1,CLUSTER_N=2,SWAP_AB=1;"
             "sw128x16:TILE_N=16,CLUSTER_M=1,SWAP_AB=1;"
             "pp64x16:TILE_M=64,TILE_N=16,CLUSTER_M=4,PINGPONG=1,SWAP_AB=1;"
             "pp64x8:TILE_M=64,TILE_N=8,CLUSTER_M=4,PINGPONG=1,SWAP_AB=1;"
             "short_k:TILE_N=128,PINGPONG=1"),
    # short_thin: about 127 rows at short K (768-1024), where the held-out 127x768x3072 is the worst matmul row on both
    # GPUs (0.88-0.95x cuBLAS, 8.0 us against 7.1-7.5). Each of the Triton kernel's 96 programs (128 x 32 tiles)
    # reads all of A (196 KB) from L2 for 49 KB of B, so L2 reads, not products, bound the call; a 1 x 2 cluster
    # reads each A tile once for two CTAs by TMA multicast (cuBLAS's kernels at these rows run 1 x 2 clusters).
    # Shapes in neither workload set; the thin kernel and the swapped 128 x 32 for reference.
    "short_thin": ("127x1024x3072;127x768x2304;127x768x4096;100x768x4096;127x1024x4096",
                   "c12_128x32:TILE_N=32,CLUSTER_M=1,CLUSTER_N=2;"
                   "c11_128x32:TILE_N=32,CLUSTER_M=1;"
                   "c12_128x64:TILE_N=64,CLUSTER_M=1,CLUSTER_N=2;"
                   "pp64x32:TILE_M=64,TILE_N=32,CLUSTER_M=1,CLUSTER_N=2,PINGPONG=1;"
                   "sw128x32:TILE_N=32,CLUSTER_M=1,CLUSTER_N=2,SWAP_AB=1;"
                   "thin:TILE_N=64,CLUSTER_M=1,CLUSTER_N=2,SWAP_AB=1,STAGES=8"),
    # mid_rows: 500-3000 rows at LLM widths, where the Triton kernel's whole tiles leave a part-filled last wave
    # (509x8192x28672: 448 tiles of 128 x 256, 3.4 waves) and it runs 0.87-0.98x cuBLAS paired (H100,
    # 2026-12-07). CUTLASS's stream-K scheduler shares that last wave out as K slices over every SM; beside it the
    # persistent cooperative kernel, its 128 x 128 form and the ping-pong 128 x 128 (cuda_cutlass_short_k's).
    # Probe shapes first (neither set), then tuning shapes of the buckets they fall in; the last two probe shapes
    # (added after the H100's run of 2026-12-07) ask where the long-K lead ends below 500 rows and above 1024.
    "mid_rows": ("768x8192x28672;640x4096x14336;700x28672x8192;900x3584x18944;"
                 "509x4096x11008;509x3584x18944;2048x4096x14336;3001x3072x8192;384x8192x28672;2600x8192x28672",
                 "coop:;"
                 "sk:SCHEDULER=1;"
                 "sk_always:SCHEDULER=2;"
                 "sk_c11:CLUSTER_M=1,SCHEDULER=1;"
                 "sk128:TILE_N=128,SCHEDULER=1;"
                 "pp128:TILE_N=128,PINGPONG=1"),
    # mid_tiles: 520-800 rows at Llama 3 70B widths, where both kernels run 0.68-0.87x cuBLAS on the H100
    # (solutions/matmul/NOTES.md): 128 x 256 tiles leave two waves 61 % busy at N 8192 (5 x 32 = 160 tiles on 132
    # SMs) and 128 x 128 tiles run under the wide tile's rate. 128 x 192 tiles fill them 81 % (5 x 43 = 215) at
    # near the wide tile's operand reuse; a 1 x 2 cluster leaves an odd count of row tiles unpadded (2 x 1 pairs
    # them); 64 x 256 ping-pong halves the row padding at 520 rows (576 computed, not 640).
    # Tuning rows (timed before, rounds/20261207-2136-* and -2150-*), judged later on rows of neither set.
    "mid_tiles": ("600x28672x8192;640x8192x8192;600x14336x4096;520x8192x10240;800x8192x10240;650x28672x8192",
                  "sk:SCHEDULER=1;"
                  "c256n:CLUSTER_M=1,CLUSTER_N=2;"
                  "c192:TILE_N=192;"
                  "c192n:TILE_N=192,CLUSTER_M=1,CLUSTER_N=2;"
                  "sk192:TILE_N=192,SCHEDULER=1;"
                  "pp64:TILE_M=64,TILE_N=256,PINGPONG=1,CLUSTER_M=1,CLUSTER_N=2"),
    # mid_widths: the same rows with cuBLAS's own kernels there (rounds/20261208-0008-h100-mid-tiles-cublas-kernels):
    # nvjet tiles of 128 x 152/168/176 and 256 x 152 over N x M, the token extent cut to fit the rows (600 rows in
    # four 152-row tiles, 520 in three of 176), i.e. cuda_cutlass.py swapped with an extended wgmma width. The
    # 128 x 192 tile and 1 x 2 clusters of mid_tiles ran 0.57-0.83x cuBLAS; stream-K (sk) beside them again.
    "mid_widths": ("600x28672x8192;640x8192x8192;600x14336x4096;520x8192x10240;800x8192x10240;650x28672x8192",
                   "sk:SCHEDULER=1;"
                   "sw152:SWAP_AB=1,TILE_N=152,CLUSTER_M=2;"
                   "sw168:SWAP_AB=1,TILE_N=168,CLUSTER_M=2;"
                   "sw176:SWAP_AB=1,TILE_N=176,CLUSTER_M=4;"
                   "sw256x152:SWAP_AB=1,TILE_M=256,TILE_N=152,CLUSTER_M=1,CLUSTER_N=2"),
}


def time_one(out, timer, shape: tuple, dtype, triton_mod, variants: list, kernels: dict) -> None:
    """torch, the Triton solution and each variant at one (shape, dtype): one TSV row each."""
    M, K, N = shape
    flops = 2 * M * N * K
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=dtype, generator=gen)
    b = torch.randn(K, N, device="cuda", dtype=dtype, generator=gen) / math.sqrt(K)
    impls = [("torch", lambda: a @ b), ("triton_tma_persistent", lambda: triton_mod.matmul(a, b))]
    for name, _ in variants:
        kernel = kernels[name]
        impls.append((f"cutlass:{name}", kernel if isinstance(kernel, Exception) else partial(kernel, a, b)))
    time_rows(out, timer, f"{M}x{K}x{N}\t{str(dtype)[6:]}", impls, flops)


def main() -> None:
    from harness.cuda_build import with_extensions_dir
    from harness.loader import import_file as load
    from harness.timing import CudaTimer

    with_extensions_dir(os.environ)  # the harness's build folder: `ksuite bench` then finds these builds

    args, shapes, dtypes = probe_args("bf16,fp16", PLANS)
    started = time.monotonic()
    triton_mod = load(ROOT / "solutions/matmul/triton_tma_persistent.py", "probe_triton_tma_persistent")
    variants = load_variants(ROOT / "solutions/matmul/cuda_cutlass.py", args.variants, "probe_matmul_cutlass")
    built = build_all(variants, lambda job: job[1]._extension().matmul_cutlass)  # one build holds both dtypes
    kernels = {name: fn for (name, _), fn in zip(variants, built)}
    timer = CudaTimer()
    write_table(args, started, "torch", shapes, dtypes,
                lambda out, shape, dtype: time_one(out, timer, shape, dtype, triton_mod, variants, kernels))

if __name__ == "__main__":
    main()
