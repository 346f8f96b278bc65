"""Persistent matmul C = A @ B for Hopper: TMA tensor descriptors, grouped tile order, split-K for small M.

One program per SM (x PROGRAMS_PER_SM) walks the work items start, start + P, start + 2P, ... where a
work item is one [BLOCK_M, BLOCK_N] tile of C and one of SPLIT_K slices of K; tiles are taken GROUP_M
tall (tutorial 03's order) so that programs running at once share A and B tiles in L2. Each item walks
its K slice in BLOCK_K steps into a float32 accumulator (wgmma on sm_90), then stores C in the input
dtype, or, with SPLIT_K > 1, a float32 partial into a workspace; the slice of a tile that arrives last
(an atomic count per tile) sums the tile's partials in a fixed order (deterministic; never a float16
reduction) and stores C, so split-K costs no second kernel launch.

Two kernels compute the same tiles in the same order with the same helpers:
- matmul_tma_kernel (what runs on CUDA): A, B and C through host-side TensorDescriptors
  (triton.tools.tensor_descriptor, Triton >= 3.4; no triton.set_allocator needed: the descriptors are
  kernel parameters, not built on the device), loads by the tensor-memory accelerator with zero fill
  past the edges, C stored by TMA (EPILOGUE_SUBTILE: two half-width stores, less shared memory), and the
  tile loop flattened with the K loop (FLATTEN) so the next tile's loads overlap this tile's epilogue,
  as Triton's 09-persistent-matmul tutorial does (Triton fuses the two loops only where the K loop's
  bounds do not change with the tile: every item runs k_per_split steps);
- matmul_ptr_kernel: plain masked tl.load / tl.store. It runs under TRITON_INTERPRET=1 (CPU checks;
  interpreters of older Tritons lack descriptors), on a Triton without tensor descriptors (3.2, 3.3),
  and where TMA's rules do not hold: a last dimension that is not contiguous (the suite's strided
  inputs), a row pitch or base address that is not a multiple of 16 bytes (K or N not a multiple of 8).

DISPATCH maps (M, N, K) buckets to tunables; a bucket it does not name takes TUNABLES. SPLIT_K 0 means
"pick": the smallest power of two (at most 16) that gives every SM a work item while each slice keeps
at least MIN_K_TILES steps of K; small M with few tiles (decode: M of 1-64, N of 4096) is where it pays.
Shapes below are M x N x K (the bench prints M x K x N: 6144x768x3072 is 6144 x 3072 x 768 here).
TAIL_SPLIT (without split-K): where the tiles fill some whole waves of programs and the last wave would
leave half the programs or more idle, the tiles of that last wave are split along K instead, so that their
slices fill the programs (stream-K's "data-parallel, then the tail shared" in its simplest form; tail_plan).
Only where a slice plus its partial's cost (written, then read: 12 bytes an element, counted in K steps'
operand bytes) is shorter than the whole tile: at 6144 x 3072 x 768 (576 tiles of 128 x 256: 4 waves and 48
on 132 SMs, 12 K steps a tile) two slices of 6 steps and a partial worth 8 lost on the H200 (55.5 -> 61.1 us,
run 20261203-194922), and the rule now keeps those tiles whole; at 3001 x 28672 x 8192 (128 steps a tile) the
split tail ran 5-9 % faster.
STREAM_K (off unless a bucket's entry turns it on; without split-K, where the tiles leave a wave partly idle):
stream-K's even division, every program taking the same number of K steps of all tiles in tile order, a
tile shared where two or more programs' ranges meet; a tile's parts are summed by the last to arrive, in
program order (_stream_partial; two partial tiles a program at most, so the workspace is 2 x programs
tiles). At 127 x 8192 x 3072 (64 tiles of 128 x 128, 48 K steps) that is 128 programs of 24 steps, where
the table's launch runs 64 programs; at 127 x 9216 x 2304 (72 tiles, 36 steps) 130 programs of 20, where
split-K could only make 144 items (two waves: 0.55x). Timed by table searches on the H200 (the first seed of
each bucket): 0.70-0.99x at every bucket tried (M<=16, M<=256, M<=1024, M>4096 with short K; ledgers
optimize/matmul-20261204-*.tsv), so no entry turns it on.

Flops: 2 * M * N * K. Bytes (fewest): (M * K + K * N + M * N) elements, plus with split-K the float32
workspace written once and read once from L2 (SPLIT_K * M * N * 8 bytes, small where split-K is chosen).
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

# In the order the search tries them: what moves time most first. Where the product is memory-bound
# (M of a few hundred tokens or fewer) that is how many programs stream B (BLOCK_N, SPLIT_K) and how
# many bytes each keeps in flight (BLOCK_K, num_stages); the tile's height and warps come after.
TUNABLES = {"BLOCK_N": 256, "SPLIT_K": 0, "TAIL_SPLIT": True, "STREAM_K": False, "BLOCK_K": 64, "num_stages": 3,
            "BLOCK_M": 128, "num_warps": 8, "GROUP_M": 8, "PROGRAMS_PER_SM": 1, "EPILOGUE_SUBTILE": True,
            "FLATTEN": True, "WAVE_PICK": False, "FILL_N": True}
# The values `ksuite optimize --strategy search` may try (tiles that fit Hopper's 227 KB of shared memory).
TUNABLE_CHOICES = {"BLOCK_M": [16, 32, 64, 128, 256], "BLOCK_N": [32, 64, 128, 256], "BLOCK_K": [32, 64, 128],
                   "num_warps": [4, 8], "num_stages": [2, 3, 4, 5, 6], "GROUP_M": [1, 4, 8, 16],
                   "SPLIT_K": [0, 1, 2, 4, 8, 16], "TAIL_SPLIT": [True, False],
                   "STREAM_K": [False, True], "PROGRAMS_PER_SM": [1, 2],
                   "EPILOGUE_SUBTILE": [True, False], "FLATTEN": [True, False], "WAVE_PICK": [False, True, "tail"],
                   "FILL_N": [True, False]}
# Whole configurations the table search tries before one tunable at a time (suite/optimize/search.py), each
# over a bucket's current entry: moves that single steps cannot make. Two 128 x 128 programs of one warpgroup
# per SM (3 stages: 112 KB each), so that one's epilogue overlaps the other's products, where a K of a few
# hundred leaves the epilogue a large share (6144x768x3072 ran at 0.85x cuBLAS with one 128 x 256 program);
# and the thin, deep tile the search kept for M<=256,N<=4096,K<=4096, for the neighbouring buckets of M 65-256;
# between the two, 64 columns deep in 4 stages (48 KB a stage; 5 would pass 227 KB): at 127 x 3072 x 8192 (K
# 3072, N 8192: 0.82-0.84x cuBLAS, 64 programs of 128 x 128 on 132 SMs stream B) it makes 128 programs, one
# wave; searched there on 2026-12-03 (optimize/matmul-20261203-153341.tsv) it lost, 0.74x, as did the thin
# tile (0.65x): narrower tiles cost more than the programs they add. The fourth seed halves the tile's height
# instead (two 64-row programs per column of 128, the second reading B from L2); it lost too, 0.76-0.85x
# (optimize/matmul-20261203-174127.tsv). Why narrow columns lose at M 127: every column of tiles reads all of
# A (127 x 8192: 2 MB) from L2, so the thin tile's 96 columns read 200 MB from L2 for 50 MB of B from memory.
# The last seed keeps 128-wide columns (24 at N 3072: 48 MB of A) and fills the SMs by splitting K instead
# (SPLIT_K 0: the launch picks 4 there; 5 stages of 32 KB); the search's single steps never tried the two
# together (a split of the thin tile's 96 columns makes two waves). Searched on 2026-12-03 (optimize/
# matmul-20261203-190747.tsv) it tied the bucket's entry, 1.001x [0.996, 1.005]: not kept.
# First of all, stream-K over the bucket's own tile (one change, but the budget of a bucket's search would
# not reach it after the seeds below and the tile and split steps).
TUNABLE_SEEDS = [{"STREAM_K": True},
                 {"WAVE_PICK": "tail"},
                 {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3, "TAIL_SPLIT": True},
                 {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 3,
                  "PROGRAMS_PER_SM": 2},
                 {"BLOCK_M": 128, "BLOCK_N": 32, "BLOCK_K": 128, "num_warps": 4, "num_stages": 5, "SPLIT_K": 1},
                 {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 128, "num_warps": 4, "num_stages": 4, "SPLIT_K": 1},
                 {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 128, "num_warps": 4, "num_stages": 4, "SPLIT_K": 1},
                 {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 5, "SPLIT_K": 0}]
# WAVE_PICK: between these tiles, the one whose last wave of programs wastes least, each tile's time
# scaled by its flop rate relative to the first. Measured on the H200 at tuning shapes (results/
# nvidia-h200/rounds/20261201-1202-followup-variants.tsv): 128 x 128 tiles in 4 warps run at about 0.9x the
# rate of 128 x 256 ones in 8 warps; the rule predicted the measured ratio of the two within 4 % at four
# of five shapes (M 127 to 1000) and picked the faster one at all five.
# WAVE_PICK "tail" (2026-12-07, not yet timed): the same rule, a tile's last wave counted as TAIL_SPLIT would run it
# (its tiles split along K into slices plus their partials, tail_plan) where that applies. The rule predates
# TAIL_SPLIT, so it counts a last wave of 52 of 132 programs as a whole wave: at 1000 x 14336 x 4096 (held-out
# 1000x4096x14336, 0.90x cuBLAS paired on the H200) 128 x 256 tiles cost 4 waves to it and 128 x 128 ones 7 x
# 0.5 / 0.9 = 3.89, so it picks 128 x 128, where 128 x 256 with the split tail costs 3 + (32 + 8) / 64 = 3.63; at
# 509 x 28672 x 8192 the same (3.56 against 3.89). A seed too (the whole 128 x 256 tile, tail split).
# While WAVE_PICK is on it picks the tile, and FILL_N narrows BLOCK_N at decode, so a search step on one of these
# turns the switch off as well (scripts/tunable_audit.py found those steps compiling to the same kernels).
TUNABLE_OVERRIDES = {"WAVE_PICK": ["BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"], "FILL_N": ["BLOCK_N"]}
WAVE_TILES = ({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3, "rate": 1.0},
              {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 4, "rate": 0.9})
# FILL_N (decode, M of 16 or fewer, where split-K is not picked or not wanted): BLOCK_N halved (down
# to 32) while twice the tiles still fit in one wave of programs. A decode product streams B once; with 50-64
# column tiles (N 6400-8192 at BLOCK_N 128) only that many of 132 SMs pull it (run 20261204-191555: 7x1600x6400
# at 41 % of the copy rate, 11.8 us against cuBLAS's 10.4-10.7 with 100 programs). A narrower tile costs another
# read of A from L2, at M <= 16 a few KB; at M 127 it costs more than it gives (the 64-wide seeds lost there,
# 0.74-0.85x), so the rule stops at 16 rows.
FILL_N_MAX_M = 16
MIN_K_TILES = 4  # BLOCK_K steps a split-K slice keeps at least, when SPLIT_K is picked
MAX_SPLIT_K = 16
DEFAULT_SMS = 132  # H100 / H200 SXM: where no CUDA device answers (offline compile for sm_90)
INTERPRETER_SMS = 3  # under the interpreter: few programs, so each walks several work items
# Shape buckets: upper edges per size constant, ascending (above the last edge: the top bucket).
# M first: tokens decide the tile; N and K: Llama 3 8B/70B, Qwen2.5 projections (3584..29568).
BUCKETS = {"M": [16, 64, 256, 1024, 4096], "N": [4096, 16384], "K": [4096, 8192]}
# Hand-written from Hopper tile practice, then changed where the H200 measured (scripts/hopper_variants.py
# --plan tuning, tuning-set shapes only): decode sizes take thin tiles (BLOCK_N 128 for N <= 16384:
# 1.05x cuBLAS against 0.75-0.87x for 64) and, past 4096 columns, no split-K (--plan split, rounds/
# 20261201-1454-split-variants.tsv: even summed in the kernel, 2 or 4 slices lost at all 4 decode shapes,
# 0.56-0.85x against 0.93-1.07x unsplit), M of 257 to 1024 picks its tile by the wave rule (WAVE_PICK),
# larger M takes TUNABLES' 128 x 256 tiles in 8 warps. Buckets of M <= 64 and N <= 4096 are the prior.
# M of 65 to 256 (2026-12-03): the tiles the wave rule picks at M 127, written out, so that a table search
# (`ksuite optimize matmul --from triton_tma_persistent`) can move the tile, its depth and its stages,
# which the rule would override. Then `ksuite optimize matmul --from triton_tma_persistent --bucket ...` (run
# 20261203-080639 on the H200, tuning and probe shapes only; 36 experiments, log in results/nvidia-h200/rounds/
# 20261203-0806-matmul-buckets-optimize.log) kept BLOCK_N 32, BLOCK_K 128 and 5 stages for M<=256,N<=4096,K<=4096
# (1.59x at the probe shape 127x2304x3072) and 5 stages for M<=256,N<=16384,K<=4096 (1.09x at 127x2304x9216),
# nothing for M>4096,N<=4096,K<=4096. Those two entries are copied here from its kept rows: the device
# call's file limit held back the file it wrote.
# ksuite optimize table: run 20261204-191305 on NVIDIA H200, from the tuning shapes only;
# ksuite optimize table: 36 of 54 buckets tuned at their own shapes, the rest copy their nearest
DISPATCH = {
    'M<=16,N<=4096,K<=4096': {'BLOCK_M': 16, 'BLOCK_N': 64, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5},
    'M<=16,N<=4096,K<=8192': {'BLOCK_M': 16, 'BLOCK_N': 64, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5},
    'M<=16,N<=4096,K>8192': {'BLOCK_M': 16, 'BLOCK_N': 64, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5},
    'M<=16,N<=16384,K<=4096':
        {'BLOCK_N': 128, 'SPLIT_K': 1, 'BLOCK_K': 128, 'num_stages': 4, 'BLOCK_M': 64, 'num_warps': 4},
    'M<=16,N<=16384,K<=8192':
        {'BLOCK_M': 16, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5, 'SPLIT_K': 1},
    'M<=16,N<=16384,K>8192':
        {'BLOCK_M': 16, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5, 'SPLIT_K': 1},
    'M<=16,N>16384,K<=4096':
        {'BLOCK_M': 16, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5, 'SPLIT_K': 1},
    'M<=16,N>16384,K<=8192': {'BLOCK_N': 128, 'SPLIT_K': 1, 'num_warps': 4, 'PROGRAMS_PER_SM': 2},
    'M<=16,N>16384,K>8192': {'BLOCK_N': 128, 'SPLIT_K': 1, 'num_warps': 4, 'PROGRAMS_PER_SM': 2},
    'M<=64,N<=4096,K<=4096': {'BLOCK_M': 64, 'BLOCK_N': 64, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4},
    'M<=64,N<=4096,K<=8192': {'BLOCK_M': 64, 'BLOCK_N': 64, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4},
    'M<=64,N<=4096,K>8192': {'BLOCK_M': 64, 'BLOCK_N': 64, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4},
    'M<=64,N<=16384,K<=4096': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4},
    'M<=64,N<=16384,K<=8192': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4},
    'M<=64,N<=16384,K>8192': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4},
    'M<=64,N>16384,K<=4096': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4},
    'M<=64,N>16384,K<=8192': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4},
    'M<=64,N>16384,K>8192': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4},
    'M<=256,N<=4096,K<=4096': {'BLOCK_N': 32, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5, 'SPLIT_K': 1},
    'M<=256,N<=4096,K<=8192': {'BLOCK_N': 32, 'SPLIT_K': 1, 'BLOCK_K': 128, 'num_stages': 5, 'num_warps': 4},
    'M<=256,N<=4096,K>8192': {'BLOCK_N': 32, 'SPLIT_K': 1, 'BLOCK_K': 128, 'num_stages': 5, 'num_warps': 4},
    'M<=256,N<=16384,K<=4096': {'BLOCK_N': 128, 'num_warps': 4, 'num_stages': 5, 'SPLIT_K': 1},
    'M<=256,N<=16384,K<=8192': {'BLOCK_N': 128, 'num_stages': 5, 'num_warps': 4},
    'M<=256,N<=16384,K>8192': {'BLOCK_N': 128, 'num_stages': 5, 'num_warps': 4},
    'M<=256,N>16384,K<=4096': {'SPLIT_K': 1},
    'M<=256,N>16384,K<=8192': {'SPLIT_K': 1},
    'M<=256,N>16384,K>8192': {'SPLIT_K': 1},
    'M<=1024,N<=4096,K<=4096': {'SPLIT_K': 1, 'WAVE_PICK': True},
    'M<=1024,N<=4096,K<=8192': {'SPLIT_K': 1, 'WAVE_PICK': True},
    'M<=1024,N<=4096,K>8192': {'SPLIT_K': 1, 'WAVE_PICK': True},
    'M<=1024,N<=16384,K<=4096': {'SPLIT_K': 1, 'WAVE_PICK': True},
    'M<=1024,N<=16384,K<=8192': {'SPLIT_K': 1, 'WAVE_PICK': True},
    'M<=1024,N<=16384,K>8192': {'SPLIT_K': 1, 'WAVE_PICK': True},
    'M<=1024,N>16384,K<=4096': {'SPLIT_K': 1, 'WAVE_PICK': True},
    'M<=1024,N>16384,K<=8192': {'SPLIT_K': 1, 'WAVE_PICK': True},
    'M<=1024,N>16384,K>8192': {'SPLIT_K': 1, 'WAVE_PICK': True},
    'M<=4096,N<=4096,K<=4096': {},
    'M<=4096,N<=4096,K<=8192': {},
    'M<=4096,N<=4096,K>8192': {},
    'M<=4096,N<=16384,K<=4096': {},
    'M<=4096,N<=16384,K<=8192': {},
    'M<=4096,N<=16384,K>8192': {},
    'M<=4096,N>16384,K<=4096': {},
    'M<=4096,N>16384,K<=8192': {},
    'M<=4096,N>16384,K>8192': {},
    'M>4096,N<=4096,K<=4096': {},
    'M>4096,N<=4096,K<=8192': {},
    'M>4096,N<=4096,K>8192': {},
    'M>4096,N<=16384,K<=4096': {},
    'M>4096,N<=16384,K<=8192': {},
    'M>4096,N<=16384,K>8192': {},
    'M>4096,N>16384,K<=4096': {},
    'M>4096,N>16384,K<=8192': {},
    'M>4096,N>16384,K>8192': {},
}
# DISPATCH is the table of the GPU named here; `ksuite optimize` on another GPU writes that GPU's own table into
# DISPATCH_BY_GPU (its results folder name -> table), and dispatch_table() runs it there.
DISPATCH_GPU = "nvidia-h200"
DISPATCH_BY_GPU = {
    'nvidia-h100-80gb-hbm3': {
        # ksuite optimize table: run 20261207-151245 on NVIDIA H100 80GB HBM3,
        # ksuite optimize table: from the tuning shapes only;
        # ksuite optimize table: 36 of 54 buckets tuned at their own shapes,
        # ksuite optimize table: the rest copy the nearest tuned bucket's entry:
        # ksuite optimize table: M<=16,N<=4096,K>8192 M<=16,N<=16384,K>8192 M<=16,N>16384,K>8192
        # ksuite optimize table: M<=64,N<=4096,K>8192 M<=64,N<=16384,K>8192 M<=64,N>16384,K>8192
        # ksuite optimize table: M<=256,N<=4096,K>8192 M<=256,N<=16384,K>8192 M<=256,N>16384,K>8192
        # ksuite optimize table: M<=1024,N<=4096,K>8192 M<=1024,N<=16384,K>8192 M<=1024,N>16384,K>8192
        # ksuite optimize table: M<=4096,N<=4096,K>8192 M<=4096,N<=16384,K>8192 M<=4096,N>16384,K>8192
        # ksuite optimize table: M>4096,N<=4096,K>8192 M>4096,N<=16384,K>8192 M>4096,N>16384,K>8192;
        # ksuite optimize table: this run: 2 searched, 1 at probe shapes, 1 edge probe;
        # ksuite optimize table: the entries no search on this GPU has timed are DISPATCH's, from nvidia-h200
        'M<=16,N<=4096,K<=4096': {'BLOCK_M': 16, 'BLOCK_N': 64, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5},
        'M<=16,N<=4096,K<=8192': {'BLOCK_M': 16, 'BLOCK_N': 64, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5},
        'M<=16,N<=4096,K>8192': {'BLOCK_M': 16, 'BLOCK_N': 64, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5},
        'M<=16,N<=16384,K<=4096':
            {'BLOCK_N': 128, 'SPLIT_K': 1, 'BLOCK_K': 128, 'num_stages': 4, 'BLOCK_M': 64, 'num_warps': 4},
        'M<=16,N<=16384,K<=8192':
            {'BLOCK_M': 16, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5, 'SPLIT_K': 1},
        'M<=16,N<=16384,K>8192':
            {'BLOCK_M': 16, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5, 'SPLIT_K': 1},
        'M<=16,N>16384,K<=4096':
            {'BLOCK_M': 16, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5, 'SPLIT_K': 1},
        'M<=16,N>16384,K<=8192': {'BLOCK_N': 128, 'SPLIT_K': 1, 'num_warps': 4, 'PROGRAMS_PER_SM': 2},
        'M<=16,N>16384,K>8192': {'BLOCK_N': 128, 'SPLIT_K': 1, 'num_warps': 4, 'PROGRAMS_PER_SM': 2},
        'M<=64,N<=4096,K<=4096': {'BLOCK_M': 64, 'BLOCK_N': 64, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4},
        'M<=64,N<=4096,K<=8192': {'BLOCK_M': 64, 'BLOCK_N': 64, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4},
        'M<=64,N<=4096,K>8192': {'BLOCK_M': 64, 'BLOCK_N': 64, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4},
        'M<=64,N<=16384,K<=4096': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4},
        'M<=64,N<=16384,K<=8192': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4},
        'M<=64,N<=16384,K>8192': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4},
        'M<=64,N>16384,K<=4096': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4},
        'M<=64,N>16384,K<=8192': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4},
        'M<=64,N>16384,K>8192': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 4},
        'M<=256,N<=4096,K<=4096': {'BLOCK_N': 32, 'BLOCK_K': 128, 'num_warps': 4, 'num_stages': 5, 'SPLIT_K': 1},
        'M<=256,N<=4096,K<=8192': {'BLOCK_N': 32, 'SPLIT_K': 1, 'BLOCK_K': 128, 'num_stages': 5, 'num_warps': 4},
        'M<=256,N<=4096,K>8192': {'BLOCK_N': 32, 'SPLIT_K': 1, 'BLOCK_K': 128, 'num_stages': 5, 'num_warps': 4},
        'M<=256,N<=16384,K<=4096': {'BLOCK_N': 128, 'num_warps': 4, 'num_stages': 5, 'SPLIT_K': 1},
        'M<=256,N<=16384,K<=8192': {'BLOCK_N': 128, 'num_stages': 5, 'num_warps': 4},
        'M<=256,N<=16384,K>8192': {'BLOCK_N': 128, 'num_stages': 5, 'num_warps': 4},
        'M<=256,N>16384,K<=4096': {'SPLIT_K': 1},
        'M<=256,N>16384,K<=8192': {'SPLIT_K': 1},
        'M<=256,N>16384,K>8192': {'SPLIT_K': 1},
        'M<=1024,N<=4096,K<=4096': {'SPLIT_K': 1, 'WAVE_PICK': True},
        'M<=1024,N<=4096,K<=8192': {'SPLIT_K': 1, 'WAVE_PICK': True},
        'M<=1024,N<=4096,K>8192': {'SPLIT_K': 1, 'WAVE_PICK': True},
        'M<=1024,N<=16384,K<=4096': {'BLOCK_N': 128, 'num_stages': 5, 'num_warps': 4, 'FILL_N': False},
        'M<=1024,N<=16384,K<=8192': {'SPLIT_K': 1, 'WAVE_PICK': True},
        'M<=1024,N<=16384,K>8192': {'SPLIT_K': 1, 'WAVE_PICK': True},
        'M<=1024,N>16384,K<=4096': {'SPLIT_K': 1, 'WAVE_PICK': True},
        'M<=1024,N>16384,K<=8192':
            {'BLOCK_N': 128, 'SPLIT_K': 1, 'num_warps': 4, 'PROGRAMS_PER_SM': 2, 'WAVE_PICK': 'tail', 'FILL_N': False},
        'M<=1024,N>16384,K>8192':
            {'BLOCK_N': 128, 'SPLIT_K': 1, 'num_warps': 4, 'PROGRAMS_PER_SM': 2, 'WAVE_PICK': 'tail', 'FILL_N': False},
        'M<=4096,N<=4096,K<=4096': {},
        'M<=4096,N<=4096,K<=8192': {},
        'M<=4096,N<=4096,K>8192': {},
        'M<=4096,N<=16384,K<=4096': {},
        'M<=4096,N<=16384,K<=8192': {},
        'M<=4096,N<=16384,K>8192': {},
        'M<=4096,N>16384,K<=4096': {},
        'M<=4096,N>16384,K<=8192': {},
        'M<=4096,N>16384,K>8192': {},
        'M>4096,N<=4096,K<=4096': {},
        'M>4096,N<=4096,K<=8192': {},
        'M>4096,N<=4096,K>8192': {},
        'M>4096,N<=16384,K<=4096': {},
        'M>4096,N<=16384,K<=8192': {},
        'M>4096,N<=16384,K>8192': {},
        'M>4096,N>16384,K<=4096': {},
        'M>4096,N>16384,K<=8192': {},
        'M>4096,N>16384,K>8192': {},
    },
}


def bucket_of(sizes: dict) -> str:
    """'M<=16,N<=4096,K<=4096': each size's first range whose edge it does not pass."""
    return ",".join(next((f"{k}<={e}" for e in edges if sizes[k] <= e), f"{k}>{edges[-1]}")
                    for k, edges in BUCKETS.items())


@functools.cache
def this_gpu() -> str:
    """This GPU as ksuite names its results folder ('nvidia-h200'; Triton's interpreter: 'cpu-interpreter'):
    the key of its own table in DISPATCH_BY_GPU."""
    if not torch.cuda.is_available():
        return "cpu-interpreter"
    return re.sub(r"[^a-z0-9]+", "-", torch.cuda.get_device_name().lower()).strip("-")


def dispatch_table(gpu: str | None = None) -> dict:
    """`gpu`'s table (a results folder name; None: this GPU): its own where a search on it wrote one, else DISPATCH."""
    return DISPATCH_BY_GPU.get(gpu or this_gpu(), DISPATCH)


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
def _sum_partials(acc, tile_ptr, slice_elems, ok, counter, split, SPLITS: tl.constexpr):
    """Store this K slice's float32 partial at tile_ptr + split * slice_elems; the slice that arrives last
    gets the sum of all SPLITS partials, slice 0 first (a fixed order: deterministic), and resets the tile's
    arrival counter for the next call. Returns (is this the last slice, the sum: zeros unless last)."""
    tl.store(tile_ptr + split * slice_elems, acc, mask=ok)
    tl.debug_barrier()  # every thread's partial is written before the arrival is counted (release below)
    arrived = tl.atomic_add(counter, 1, sem="acq_rel", scope="gpu")
    last = arrived == SPLITS - 1
    total = tl.zeros(acc.shape, dtype=tl.float32)
    if last:
        for s in range(SPLITS):  # .cg: from L2, where the other slices' stores are, never a stale L1 line
            total += tl.load(tile_ptr + s * slice_elems, mask=ok, other=0.0, cache_modifier=".cg")
        tl.atomic_xchg(counter, 0, sem="relaxed", scope="gpu")
    return last, total


@triton.jit
def _split_partial(acc, ws_ptr, cnt_ptr, pid_m, pid_n, split, num_pid_m, num_pid_n, N,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, SPLIT_K: tl.constexpr):
    """Split-K over every tile: the workspace is [SPLIT_K, num_pid_m * BLOCK_M, N], one counter per tile."""
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)  # workspace rows: padded, no mask
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    slice_elems = (num_pid_m * BLOCK_M).to(tl.int64) * N
    return _sum_partials(acc, ws_ptr + offs_m[:, None] * N + offs_n[None, :], slice_elems, offs_n[None, :] < N,
                         cnt_ptr + pid_m * num_pid_n + pid_n, split, SPLIT_K)


@triton.jit
def _tail_partial(acc, ws_ptr, cnt_ptr, slot, split, tail_tiles,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, TAIL_SPLIT: tl.constexpr):
    """The last wave's tiles, split: the workspace is [TAIL_SPLIT, tail_tiles, BLOCK_M, BLOCK_N] (whole tiles,
    no mask), one counter per tail tile (slot)."""
    cols = tl.arange(0, BLOCK_N)
    in_tile = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + cols[None, :]
    tile_elems: tl.constexpr = BLOCK_M * BLOCK_N
    tile_ptr = ws_ptr + slot.to(tl.int64) * tile_elems + in_tile
    slice_elems = tail_tiles.to(tl.int64) * tile_elems
    return _sum_partials(acc, tile_ptr, slice_elems, cols[None, :] < BLOCK_N, cnt_ptr + slot, split, TAIL_SPLIT)


@triton.jit
def _stream_partial(acc, ws_ptr, cnt_ptr, tile, program, k_tiles, sk_steps,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """STREAM_K: this program's part of a tile that several programs share. Program p keeps at most two
    partials (slot 2p for the tile its K steps start in, 2p + 1 for the one they end in), so the workspace is
    [2 x programs, BLOCK_M, BLOCK_N] however many tiles there are. The part that arrives last sums the tile's
    parts in program order (deterministic), resets the tile's counter and returns (True, the sum)."""
    cols = tl.arange(0, BLOCK_N)
    in_tile = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + cols[None, :]
    tile_elems: tl.constexpr = BLOCK_M * BLOCK_N
    first = (tile * k_tiles) // sk_steps
    parts = ((tile + 1) * k_tiles - 1) // sk_steps - first + 1
    slot = 2 * program + ((program * sk_steps) // k_tiles != tile).to(tl.int32)
    tl.store(ws_ptr + slot.to(tl.int64) * tile_elems + in_tile, acc)
    tl.debug_barrier()  # every thread's partial is written before the arrival is counted (release below)
    arrived = tl.atomic_add(cnt_ptr + tile, 1, sem="acq_rel", scope="gpu")
    last = arrived == parts - 1
    total = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if last:
        for i in range(parts):
            p = first + i
            p_slot = 2 * p + ((p * sk_steps) // k_tiles != tile).to(tl.int32)
            total += tl.load(ws_ptr + p_slot.to(tl.int64) * tile_elems + in_tile, cache_modifier=".cg")
        tl.atomic_xchg(cnt_ptr + tile, 0, sem="relaxed", scope="gpu")
    return last, total


@triton.jit
def _tma_acc(a_desc, b_desc, off_m, off_n, k_lo, k_hi, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
             BLOCK_K: tl.constexpr, TRANS_B: tl.constexpr):
    """One tile's float32 product over K steps [k_lo, k_hi), operands by TMA."""
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for ki in range(k_lo, k_hi):
        off_k = ki * BLOCK_K
        a = a_desc.load([off_m, off_k])
        if TRANS_B:
            b = b_desc.load([off_n, off_k]).T
        else:
            b = b_desc.load([off_k, off_n])
        acc = tl.dot(a, b, acc)
    return acc


@triton.jit
def _store_tile(c_desc, acc, off_m, off_n, BLOCK_N: tl.constexpr, EPILOGUE_SUBTILE: tl.constexpr):
    """C's tile by TMA (clipped at the edges), as two half-width stores with EPILOGUE_SUBTILE."""
    if EPILOGUE_SUBTILE:
        halves = tl.permute(tl.reshape(acc, (acc.shape[0], 2, BLOCK_N // 2)), (0, 2, 1))
        left, right = tl.split(halves)
        c_desc.store([off_m, off_n], left.to(c_desc.dtype))
        c_desc.store([off_m, off_n + BLOCK_N // 2], right.to(c_desc.dtype))
    else:
        c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


@triton.jit
def matmul_tma_kernel(
    a_desc, b_desc, c_desc, ws_ptr, cnt_ptr,
    M, N, K, k_per_split, tail_tiles, tail_k_per_split, sk_steps,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    SPLIT_K: tl.constexpr, TAIL_SPLIT: tl.constexpr, STREAM_K: tl.constexpr, TRANS_B: tl.constexpr,
    NUM_PROGRAMS: tl.constexpr, EPILOGUE_SUBTILE: tl.constexpr, FLATTEN: tl.constexpr,
):
    # c_desc: C [M, N]; with SPLIT_K > 1, ws_ptr: float32 partials [SPLIT_K, num_pid_m * BLOCK_M, N] and
    # cnt_ptr: int32 arrivals per tile, zero at the start (the last slice of a tile puts its zero back);
    # with TAIL_SPLIT > 1 (SPLIT_K 1), the last tail_tiles tiles are split instead: ws as _tail_partial's;
    # with STREAM_K (tail_tiles = every tile), sk_steps K steps a program: ws as _stream_partial's
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    whole_tiles = num_pid_m * num_pid_n - tail_tiles
    num_work = whole_tiles * SPLIT_K
    for work in tl.range(tl.program_id(0), num_work, NUM_PROGRAMS, flatten=FLATTEN):
        pid_m, pid_n, split, k_lo, _ = _work_item(work, num_pid_m, num_pid_n, k_tiles, k_per_split, GROUP_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        # k_per_split steps for every item, bounds the outer loop does not change: Triton fuses the two loops
        # (FLATTEN) only then. A last slice that ends past K loads zeros there (TMA's fill): they add nothing.
        for kk in range(0, k_per_split):
            off_k = (k_lo + kk) * BLOCK_K
            a = a_desc.load([off_m, off_k])
            if TRANS_B:  # B given as its transpose [N, K] (nn.Linear weights)
                b = b_desc.load([off_n, off_k]).T
            else:
                b = b_desc.load([off_k, off_n])
            acc = tl.dot(a, b, acc)
        if SPLIT_K == 1:
            _store_tile(c_desc, acc, off_m, off_n, BLOCK_N, EPILOGUE_SUBTILE)
        else:
            last, total = _split_partial(acc, ws_ptr, cnt_ptr, pid_m, pid_n, split, num_pid_m, num_pid_n, N,
                                         BLOCK_M, BLOCK_N, SPLIT_K)
            if last:
                _store_tile(c_desc, total, off_m, off_n, BLOCK_N, EPILOGUE_SUBTILE)
    if TAIL_SPLIT > 1:  # every program has done the same number of whole tiles: the tail's slices fill the SMs
        for item in range(tl.program_id(0), tail_tiles * TAIL_SPLIT, NUM_PROGRAMS):
            slot = item % tail_tiles
            split = item // tail_tiles
            pid_m, pid_n, _, _, _ = _work_item(whole_tiles + slot, num_pid_m, num_pid_n, k_tiles, k_tiles, GROUP_M)
            k_lo = split * tail_k_per_split
            acc = _tma_acc(a_desc, b_desc, pid_m * BLOCK_M, pid_n * BLOCK_N, k_lo,
                           min(k_lo + tail_k_per_split, k_tiles), BLOCK_M, BLOCK_N, BLOCK_K, TRANS_B)
            last, total = _tail_partial(acc, ws_ptr, cnt_ptr, slot, split, tail_tiles, BLOCK_M, BLOCK_N, TAIL_SPLIT)
            if last:
                _store_tile(c_desc, total, pid_m * BLOCK_M, pid_n * BLOCK_N, BLOCK_N, EPILOGUE_SUBTILE)
    if STREAM_K:  # program p: K steps [p * sk_steps, (p + 1) * sk_steps) of all tiles' steps in tile order
        k_total = num_pid_m * num_pid_n * k_tiles
        cur = tl.program_id(0) * sk_steps
        end = min(cur + sk_steps, k_total)
        while cur < end:
            tile = cur // k_tiles
            k_lo = cur - tile * k_tiles
            k_hi = min(k_tiles, k_lo + end - cur)
            pid_m, pid_n, _, _, _ = _work_item(tile, num_pid_m, num_pid_n, k_tiles, k_tiles, GROUP_M)
            acc = _tma_acc(a_desc, b_desc, pid_m * BLOCK_M, pid_n * BLOCK_N, k_lo, k_hi, BLOCK_M, BLOCK_N, BLOCK_K,
                           TRANS_B)
            if k_hi - k_lo == k_tiles:
                _store_tile(c_desc, acc, pid_m * BLOCK_M, pid_n * BLOCK_N, BLOCK_N, EPILOGUE_SUBTILE)
            else:
                last, total = _stream_partial(acc, ws_ptr, cnt_ptr, tile, tl.program_id(0), k_tiles, sk_steps,
                                              BLOCK_M, BLOCK_N)
                if last:
                    _store_tile(c_desc, total, pid_m * BLOCK_M, pid_n * BLOCK_N, BLOCK_N, EPILOGUE_SUBTILE)
            cur += k_hi - k_lo


@triton.jit
def _ptr_acc(a_ptr, b_ptr, offs_m, offs_n, k_lo, k_hi, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, UPCAST: tl.constexpr):
    """One tile's float32 product over K steps [k_lo, k_hi), operands by masked pointer loads."""
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for ki in range(k_lo, k_hi):
        offs_k = ki * BLOCK_K + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak,
                    mask=(offs_m[:, None] < M) & (offs_k[None, :] < K), other=0.0)
        b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                    mask=(offs_k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        if UPCAST:  # only under the CPU interpreter, whose tl.dot cannot read bfloat16
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc)
    return acc


@triton.jit
def _ptr_store(c_ptr, values, offs_m, offs_n, M, N, stride_cm, stride_cn):
    """C's tile in its dtype, masked at the edges."""
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, values.to(c_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def matmul_ptr_kernel(
    a_ptr, b_ptr, c_ptr, ws_ptr, cnt_ptr,
    M, N, K, k_per_split, tail_tiles, tail_k_per_split, sk_steps,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    SPLIT_K: tl.constexpr, TAIL_SPLIT: tl.constexpr, STREAM_K: tl.constexpr, NUM_PROGRAMS: tl.constexpr,
    UPCAST: tl.constexpr,
):
    # the same work items as matmul_tma_kernel, with masked pointer loads; ws and cnt as there
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    whole_tiles = num_pid_m * num_pid_n - tail_tiles
    for work in range(tl.program_id(0), whole_tiles * SPLIT_K, NUM_PROGRAMS):
        pid_m, pid_n, split, k_lo, k_hi = _work_item(work, num_pid_m, num_pid_n, k_tiles, k_per_split, GROUP_M)
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = _ptr_acc(a_ptr, b_ptr, offs_m, offs_n, k_lo, k_hi, M, N, K, stride_am, stride_ak, stride_bk,
                       stride_bn, BLOCK_M, BLOCK_N, BLOCK_K, UPCAST)
        if SPLIT_K == 1:
            _ptr_store(c_ptr, acc, offs_m, offs_n, M, N, stride_cm, stride_cn)
        else:
            last, total = _split_partial(acc, ws_ptr, cnt_ptr, pid_m, pid_n, split, num_pid_m, num_pid_n, N,
                                         BLOCK_M, BLOCK_N, SPLIT_K)
            if last:
                _ptr_store(c_ptr, total, offs_m, offs_n, M, N, stride_cm, stride_cn)
    if TAIL_SPLIT > 1:
        for item in range(tl.program_id(0), tail_tiles * TAIL_SPLIT, NUM_PROGRAMS):
            slot = item % tail_tiles
            split = item // tail_tiles
            pid_m, pid_n, _, _, _ = _work_item(whole_tiles + slot, num_pid_m, num_pid_n, k_tiles, k_tiles, GROUP_M)
            offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
            k_lo = split * tail_k_per_split
            acc = _ptr_acc(a_ptr, b_ptr, offs_m, offs_n, k_lo, min(k_lo + tail_k_per_split, k_tiles), M, N, K,
                           stride_am, stride_ak, stride_bk, stride_bn, BLOCK_M, BLOCK_N, BLOCK_K, UPCAST)
            last, total = _tail_partial(acc, ws_ptr, cnt_ptr, slot, split, tail_tiles, BLOCK_M, BLOCK_N, TAIL_SPLIT)
            if last:
                _ptr_store(c_ptr, total, offs_m, offs_n, M, N, stride_cm, stride_cn)
    if STREAM_K:
        k_total = num_pid_m * num_pid_n * k_tiles
        cur = tl.program_id(0) * sk_steps
        end = min(cur + sk_steps, k_total)
        while cur < end:
            tile = cur // k_tiles
            k_lo = cur - tile * k_tiles
            k_hi = min(k_tiles, k_lo + end - cur)
            pid_m, pid_n, _, _, _ = _work_item(tile, num_pid_m, num_pid_n, k_tiles, k_tiles, GROUP_M)
            offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
            acc = _ptr_acc(a_ptr, b_ptr, offs_m, offs_n, k_lo, k_hi, M, N, K, stride_am, stride_ak, stride_bk,
                           stride_bn, BLOCK_M, BLOCK_N, BLOCK_K, UPCAST)
            if k_hi - k_lo == k_tiles:
                _ptr_store(c_ptr, acc, offs_m, offs_n, M, N, stride_cm, stride_cn)
            else:
                last, total = _stream_partial(acc, ws_ptr, cnt_ptr, tile, tl.program_id(0), k_tiles, sk_steps,
                                              BLOCK_M, BLOCK_N)
                if last:
                    _ptr_store(c_ptr, total, offs_m, offs_n, M, N, stride_cm, stride_cn)
            cur += k_hi - k_lo


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


def wave_pick(M: int, N: int, programs: int, K: int | None = None) -> dict:
    """The WAVE_TILES entry with the least predicted time: full waves of programs (the last one partly
    idle) x the tile's area over its rate. Given K (WAVE_PICK "tail"), a last wave that TAIL_SPLIT would split
    counts as its slices' K steps and their partials' over the tile's."""
    def cost(tile: dict) -> float:
        tiles = triton.cdiv(M, tile["BLOCK_M"]) * triton.cdiv(N, tile["BLOCK_N"])
        waves = float(triton.cdiv(tiles, programs))
        if K is not None:
            k_tiles = triton.cdiv(K, tile["BLOCK_K"])
            partial = partial_cost_steps(tile["BLOCK_M"], tile["BLOCK_N"], tile["BLOCK_K"])
            tail, _, per_slice = tail_plan(tiles, programs, k_tiles, partial)
            if tail:
                waves = tiles // programs + (per_slice + partial) / k_tiles
        return waves * tile["BLOCK_M"] * tile["BLOCK_N"] / tile["rate"]
    best = min(WAVE_TILES, key=cost)
    return {k: v for k, v in best.items() if k != "rate"}


def launch_config(M: int, N: int, K: int, sms: int, gpu: str | None = None) -> dict:
    """The bucket's tunables, made safe for this exact shape: no block much larger than the matrix,
    SPLIT_K picked where 0, never more slices than K steps. gpu: whose table (None: this GPU's), so that a caller
    can ask what another GPU would launch (cuda_cutlass_dispatch's routes, for `ksuite inspect --gpu`).
    FLATTEN only without split-K: the tutorial flattens loops whose K trip count is the same
    for every tile; a split's last slice may be shorter, untried on a GPU so far."""
    t = {**TUNABLES, **dispatch_table(gpu).get(bucket_of({"M": M, "N": N, "K": K}), {})}
    if t["WAVE_PICK"]:  # "tail" only where the launch could split a tail: TAIL_SPLIT on, one slice a tile
        tail_known = t["WAVE_PICK"] == "tail" and t["TAIL_SPLIT"] and t["SPLIT_K"] == 1
        t.update(wave_pick(M, N, sms * t["PROGRAMS_PER_SM"], K if tail_known else None))
    block_m = max(16, min(t["BLOCK_M"], triton.next_power_of_2(M)))
    block_n = max(16, min(t["BLOCK_N"], triton.next_power_of_2(N)))
    block_k = max(16, min(t["BLOCK_K"], triton.next_power_of_2(K)))
    k_tiles = triton.cdiv(K, block_k)
    programs = sms * t["PROGRAMS_PER_SM"]
    tiles = triton.cdiv(M, block_m) * triton.cdiv(N, block_n)
    split = t["SPLIT_K"]
    if split == 0:
        split = 1
        while (split * 2 <= MAX_SPLIT_K and tiles * split * 2 <= programs
               and k_tiles >= MIN_K_TILES * split * 2):
            split *= 2
    if t["FILL_N"] and M <= FILL_N_MAX_M and split == 1:
        while block_n > 32 and 2 * tiles <= programs:
            block_n //= 2
            tiles = triton.cdiv(M, block_m) * triton.cdiv(N, block_n)
    k_per_split = triton.cdiv(k_tiles, min(split, k_tiles))
    split = triton.cdiv(k_tiles, k_per_split)  # no empty slice
    partial = partial_cost_steps(block_m, block_n, block_k)
    tail, tail_split, tail_k_per_split = tail_plan(tiles, programs, k_tiles, partial) \
        if t["TAIL_SPLIT"] and split == 1 else (0, 1, k_tiles)
    sk_steps = triton.cdiv(tiles * k_tiles, programs)
    stream = bool(t["STREAM_K"]) and split == 1 and sk_steps >= MIN_K_TILES and tiles % programs != 0
    if stream:  # every tile to the stream-K loop (tail_tiles: the tiles the whole-tile loop leaves)
        tail, tail_split, tail_k_per_split = tiles, 1, k_tiles
        programs = triton.cdiv(tiles * k_tiles, sk_steps)
    return dict(BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=t["GROUP_M"], SPLIT_K=split,
                k_per_split=k_per_split, TAIL_SPLIT=tail_split, tail_tiles=tail, tail_k_per_split=tail_k_per_split,
                STREAM_K=stream, sk_steps=sk_steps if stream else k_tiles,
                programs=min(programs, tiles * split) if not stream else programs,
                num_warps=t["num_warps"], num_stages=t["num_stages"],
                EPILOGUE_SUBTILE=bool(t["EPILOGUE_SUBTILE"]) and block_n >= 32,
                FLATTEN=bool(t["FLATTEN"]) and split == 1)


def partial_cost_steps(block_m: int, block_n: int, block_k: int) -> float:
    """What a slice's partial costs (written, then read with the others: 12 bytes an element) in K steps'
    operand bytes (2 bytes x BLOCK_K x (BLOCK_M + BLOCK_N) a step)."""
    return 6 * block_m * block_n / (block_k * (block_m + block_n))


def tail_plan(tiles: int, programs: int, k_tiles: int, partial_steps: float = 0.0) -> tuple[int, int, int]:
    """(tail tiles, their slices, K steps a slice) for TAIL_SPLIT: where the last wave of whole tiles would
    leave at least half the programs idle, its tiles are split along K so that their slices fill the
    programs (each slice at least MIN_K_TILES steps), the partials summed as split-K's are; every other
    tile stays whole. Only where a slice and its partial (partial_steps: its cost in K steps) take less than
    the whole tile. (0, 1, k_tiles) where that does not apply."""
    tail = tiles % programs
    if tiles <= programs or tail == 0 or tail > programs // 2:
        return 0, 1, k_tiles
    slices = min(MAX_SPLIT_K, programs // tail, k_tiles // MIN_K_TILES)
    per_slice = triton.cdiv(k_tiles, max(slices, 1))
    if slices < 2 or per_slice + partial_steps >= k_tiles:
        return 0, 1, k_tiles
    return tail, triton.cdiv(k_tiles, per_slice), per_slice


def matmul(a: torch.Tensor, b: torch.Tensor, b_is_transposed: bool = False) -> torch.Tensor:
    """C = A @ B for A [M, K] and B [K, N]; with b_is_transposed, `b` holds B^T as [N, K] (so an
    nn.Linear weight W gives x @ W^T without a copy)."""
    assert a.dim() == 2 and b.dim() == 2, "need 2-D A and B"
    M, K = a.shape
    N = b.shape[0] if b_is_transposed else b.shape[1]
    assert (b.shape[1] if b_is_transposed else b.shape[0]) == K, "inner dimensions differ"
    assert a.dtype == b.dtype and a.dtype in (torch.float16, torch.bfloat16), "float16 or bfloat16"
    assert a.device == b.device
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    if M == 0 or N == 0:
        return c
    if K == 0:
        return c.zero_()
    cfg = launch_config(M, N, K, sm_count(a.device))
    split, tail_split, tail, stream = cfg["SPLIT_K"], cfg["TAIL_SPLIT"], cfg["tail_tiles"], cfg["STREAM_K"]
    ws, counters = c, c  # unused without split-K
    if split > 1:
        tiles = triton.cdiv(M, cfg["BLOCK_M"]) * triton.cdiv(N, cfg["BLOCK_N"])
        ws = torch.empty((split, triton.cdiv(M, cfg["BLOCK_M"]) * cfg["BLOCK_M"], N), dtype=torch.float32,
                         device=a.device)
        counters = arrival_counters(a.device, tiles)
    elif tail_split > 1:  # whole tiles of the tail only: at most one tile per program
        ws = torch.empty((tail_split, tail, cfg["BLOCK_M"], cfg["BLOCK_N"]), dtype=torch.float32, device=a.device)
        counters = arrival_counters(a.device, tail)
    elif stream:  # two partial tiles a program at most
        ws = torch.empty((2 * cfg["programs"], cfg["BLOCK_M"], cfg["BLOCK_N"]), dtype=torch.float32, device=a.device)
        counters = arrival_counters(a.device, tail)
    common = dict(BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"], GROUP_M=cfg["GROUP_M"],
                  SPLIT_K=split, TAIL_SPLIT=tail_split, STREAM_K=stream, NUM_PROGRAMS=cfg["programs"],
                  num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    grid = (cfg["programs"],)
    if tma_ok(a, b, c):
        bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
        c_block = [bm, bn // 2] if cfg["EPILOGUE_SUBTILE"] else [bm, bn]
        matmul_tma_kernel[grid](
            TensorDescriptor.from_tensor(a, [bm, bk]),
            TensorDescriptor.from_tensor(b, [bn, bk] if b_is_transposed else [bk, bn]),
            TensorDescriptor.from_tensor(c, c_block), ws, counters,
            M, N, K, cfg["k_per_split"], tail, cfg["tail_k_per_split"], cfg["sk_steps"], TRANS_B=b_is_transposed,
            EPILOGUE_SUBTILE=cfg["EPILOGUE_SUBTILE"], FLATTEN=cfg["FLATTEN"], **common)
    else:
        stride_bk, stride_bn = (b.stride(1), b.stride(0)) if b_is_transposed else (b.stride(0), b.stride(1))
        matmul_ptr_kernel[grid](
            a, b, c, ws, counters, M, N, K, cfg["k_per_split"], tail, cfg["tail_k_per_split"], cfg["sk_steps"],
            a.stride(0), a.stride(1), stride_bk, stride_bn, c.stride(0), c.stride(1),
            UPCAST=interpreting(), **common)
    return c


_COUNTERS: dict = {}


def arrival_counters(device: torch.device, tiles: int) -> torch.Tensor:
    """Split-K's int32 arrival count per tile, zeroed once and kept per (device, stream): the last slice
    of each tile puts its zero back, so a call needs no memset launch. Kept per stream, because two
    matmuls running at once on different streams must not count into each other's tiles."""
    stream = torch.cuda.current_stream(device).cuda_stream if device.type == "cuda" else 0
    key = (str(device), stream)
    have = _COUNTERS.get(key)
    if have is None or have.numel() < tiles:
        have = _COUNTERS[key] = torch.zeros(max(tiles, 1024), dtype=torch.int32, device=device)
    return have


class ModelNew(torch.nn.Module):
    def forward(self, A, B):
        return matmul(A, B)
