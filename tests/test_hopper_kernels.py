"""The Hopper solutions (issue 14) at tiny shapes under the interpreter: both kernels of each, the TMA
one forced where this Triton's interpreter emulates tensor descriptors, against float64; their
dispatch tables against the suite's bucketing; split-K chosen where it pays."""

import importlib.util
import math

import pytest
import torch
from conftest import PROBLEMS_DIR, SOLUTIONS_DIR

from harness.loader import load_problem
from suite.optimize import dispatch

FILES = {"matmul": "triton_tma_persistent", "attention_causal": "triton_flash_tma",
         "fused_mlp": "triton_fused_gate_up"}


def load(problem: str):
    path = SOLUTIONS_DIR / problem / f"{FILES[problem]}.py"
    spec = importlib.util.spec_from_file_location(f"ksuite_hopper_{problem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def force_tma(module, mp):
    """Route to the descriptor kernel under the interpreter, where this Triton can emulate it."""
    if module.TensorDescriptor is None:
        pytest.skip("this Triton has no host-side tensor descriptors")
    if hasattr(module, "TMA_HEAD_DIMS"):  # attention: tma_ok(head_dim, *tensors)
        mp.setattr(module, "tma_ok", lambda head_dim, *tensors: module.tma_block(head_dim) is not None)
    else:
        mp.setattr(module, "tma_ok", lambda *tensors: True)


@pytest.mark.parametrize("tma", [False, True], ids=["pointers", "tma"])
@pytest.mark.parametrize("M, N, K, split, transposed", [(33, 136, 72, 1, False), (5, 64, 1024, 3, True),
                                                         (130, 80, 48, 2, False)])
def test_matmul_kernels_match_float64(monkeypatch, tma, M, N, K, split, transposed):
    mm = load("matmul")
    if tma:
        force_tma(mm, monkeypatch)
    monkeypatch.setattr(mm, "DISPATCH", {})
    monkeypatch.setitem(mm.TUNABLES, "BLOCK_M", 32)
    monkeypatch.setitem(mm.TUNABLES, "BLOCK_N", 32)
    monkeypatch.setitem(mm.TUNABLES, "BLOCK_K", 16)
    monkeypatch.setitem(mm.TUNABLES, "SPLIT_K", split)
    torch.manual_seed(0)
    a = torch.randn(M, K).half()
    b = (torch.randn((N, K) if transposed else (K, N)) / math.sqrt(K)).half()
    c = mm.matmul(a, b, b_is_transposed=transposed)
    ref = a.double() @ (b.double().T if transposed else b.double())
    assert mm.launch_config(M, N, K, mm.sm_count(a.device))["SPLIT_K"] == min(split, math.ceil(K / 16))
    assert (c.double() - ref).abs().max() < 1e-3 + 2e-3 * ref.abs().max()
    # split-K's last slice sums the partials in a fixed order and zeroes its tile's counter: a second
    # call (the timing loop's) is bitwise the same, never summing into a count left from the first
    assert torch.equal(mm.matmul(a, b, b_is_transposed=transposed), c)


def check_x_wt_twice(mm, M, N, K):
    """x @ W^T in float16 against float64, then a second call bitwise the same; returns (x, W)."""
    torch.manual_seed(0)
    a = torch.randn(M, K).half()
    w = (torch.randn(N, K) / math.sqrt(K)).half()
    c = mm.matmul(a, w, b_is_transposed=True)
    ref = a.double() @ w.double().T
    assert (c.double() - ref).abs().max() < 1e-3 + 2e-3 * ref.abs().max()
    assert torch.equal(mm.matmul(a, w, b_is_transposed=True), c)
    return a, w


@pytest.mark.parametrize("tma", [False, True], ids=["pointers", "tma"])
def test_matmul_tail_split_matches_float64(monkeypatch, tma):
    """4 tiles on the interpreter's 3 programs: 3 whole, the last one's K split in 3 slices (5, 5 and 3 steps)."""
    mm = load("matmul")
    if tma:
        force_tma(mm, monkeypatch)
    monkeypatch.setattr(mm, "DISPATCH", {})
    for key, value in {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "SPLIT_K": 1, "TAIL_SPLIT": True}.items():
        monkeypatch.setitem(mm.TUNABLES, key, value)
    M, N, K = 40, 64, 200  # TMA: rows of 16-byte multiples
    cfg = mm.launch_config(M, N, K, mm.sm_count(torch.device("cpu")))
    assert (cfg["SPLIT_K"], cfg["tail_tiles"], cfg["TAIL_SPLIT"], cfg["tail_k_per_split"]) == (1, 1, 3, 5)
    a, w = check_x_wt_twice(mm, M, N, K)  # the second call: the tail's counter was put back to zero
    monkeypatch.setitem(mm.TUNABLES, "TAIL_SPLIT", False)  # the same product, every tile whole
    assert mm.launch_config(M, N, K, 3)["TAIL_SPLIT"] == 1
    ref = a.double() @ w.double().T
    assert (mm.matmul(a, w, b_is_transposed=True).double() - ref).abs().max() < 1e-3 + 2e-3 * ref.abs().max()


@pytest.mark.parametrize("tma", [False, True], ids=["pointers", "tma"])
@pytest.mark.parametrize("M, N, parts", [(40, 64, 2), (40, 32, 2), (20, 32, 3)])
def test_matmul_stream_k_matches_float64(monkeypatch, tma, M, N, parts):
    """STREAM_K on the interpreter's 3 programs, 13 K steps a tile: 4, 2 and 1 tiles, shared by at most
    `parts` programs (a whole tile stored directly, the others' parts summed by the last to arrive)."""
    mm = load("matmul")
    if tma:
        force_tma(mm, monkeypatch)
    monkeypatch.setattr(mm, "DISPATCH", {})
    for key, value in {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "SPLIT_K": 1, "STREAM_K": True}.items():
        monkeypatch.setitem(mm.TUNABLES, key, value)
    K = 200
    cfg = mm.launch_config(M, N, K, 3)
    tiles = math.ceil(M / 32) * math.ceil(N / 32)
    assert cfg["STREAM_K"] and cfg["tail_tiles"] == tiles and cfg["programs"] == 3
    sk = cfg["sk_steps"]
    assert max((((t + 1) * 13 - 1) // sk) - (t * 13) // sk + 1 for t in range(tiles)) == parts
    check_x_wt_twice(mm, M, N, K)  # the second call: counters back at zero, the same sums


def test_matmul_stream_k_only_where_a_wave_is_partly_idle():
    mm = load("matmul")
    for key, value in {"STREAM_K": True, "SPLIT_K": 1}.items():
        mm.TUNABLES[key] = value
    mm.DISPATCH = {}
    assert mm.launch_config(127, 8192, 3072, 132)["STREAM_K"]  # 64 tiles of 128 x 256 for 132 SMs
    assert not mm.launch_config(4224, 8192, 3072, 132)["STREAM_K"]  # 1056 tiles: 8 full waves


def test_matmul_fill_n_narrows_decode_tiles_to_fill_the_sms():
    """Decode (M <= 16): BLOCK_N halves while twice the column tiles fit in one wave; never at M 127."""
    mm = load("matmul")
    decode = mm.launch_config(7, 6400, 1600, 132)  # 50 tiles of 128 -> 100 of 64
    assert (decode["BLOCK_N"], decode["programs"]) == (64, 100)
    assert mm.launch_config(16, 3072, 768, 132)["BLOCK_N"] == 32  # 48 tiles of 64 -> 96 of 32
    assert mm.launch_config(7, 14336, 4096, 132)["BLOCK_N"] == 128  # 112 tiles: 224 would be two waves
    assert mm.launch_config(127, 8192, 3072, 132)["BLOCK_N"] == 128  # A of 127 rows: read once per column
    mm.TUNABLES["FILL_N"] = False
    mm.DISPATCH = {}
    assert mm.launch_config(7, 6400, 1600, 132)["BLOCK_N"] == 256


def test_matmul_tail_plan_on_132_sms():
    """Where the last wave of whole tiles leaves half the SMs or more idle, its tiles are split to fill them."""
    mm = load("matmul")
    assert mm.tail_plan(576, 132, 12) == (48, 2, 6)  # 6144 x 3072 tiles of 128 x 256 at K 768: 4 waves + 48
    assert mm.tail_plan(576, 132, 12, 8.0) == (0, 1, 12)  # ... where a 128 x 256 partial costs 8 of its 12 steps
    assert mm.launch_config(6144, 3072, 768, 132)["TAIL_SPLIT"] == 1
    assert mm.launch_config(3001, 28672, 8192, 132)["TAIL_SPLIT"] == 2  # 128 steps a tile: 48 tiles split
    assert mm.tail_plan(148, 132, 28) == (16, 7, 4)  # decode, 148 thin tiles: 16 left for a second wave
    assert mm.tail_plan(512, 132, 64) == (0, 1, 64)  # 4096^3: the last wave 116 of 132, kept whole
    assert mm.tail_plan(100, 132, 64) == (0, 1, 64)  # fewer tiles than SMs: split-K's case, not the tail's
    assert mm.tail_plan(133, 132, 6) == (0, 1, 6)  # too few K steps to split
    assert mm.launch_config(4096, 4096, 4096, 132)["TAIL_SPLIT"] == 1
    assert mm.launch_config(8192, 8192, 8192, 132)["TAIL_SPLIT"] == 1


def test_matmul_wave_pick_tail_counts_the_split_last_wave():
    """WAVE_PICK "tail": a last wave that TAIL_SPLIT would split costs its slices, not a whole wave. At 1000 x 14336
    x 4096 on 132 SMs the plain rule takes 128 x 128 tiles (7 waves x 0.5 / 0.9 = 3.89 against 4 whole ones of
    128 x 256); counted as split, 128 x 256 costs 3 + (32 + 8) / 64 = 3.63 and wins. WAVE_PICK True is unchanged."""
    mm = load("matmul")
    assert mm.wave_pick(1000, 14336, 132)["BLOCK_N"] == 128
    assert mm.wave_pick(1000, 14336, 132, K=4096)["BLOCK_N"] == 256
    assert mm.partial_cost_steps(128, 256, 64) == 8.0
    bucket = "M<=1024,N<=16384,K<=4096"
    mm.DISPATCH = {bucket: {"SPLIT_K": 1, "WAVE_PICK": True}}
    mm.DISPATCH_BY_GPU = {}
    plain = mm.launch_config(1000, 14336, 4096, 132)
    assert (plain["BLOCK_N"], plain["TAIL_SPLIT"]) == (128, 1)
    mm.DISPATCH = {bucket: {"SPLIT_K": 1, "WAVE_PICK": "tail"}}
    tail = mm.launch_config(1000, 14336, 4096, 132)
    assert (tail["BLOCK_N"], tail["num_warps"], tail["TAIL_SPLIT"], tail["tail_tiles"]) == (256, 8, 2, 52)
    mm.DISPATCH = {bucket: {"SPLIT_K": 0, "WAVE_PICK": "tail"}}  # no tail split unless one slice a tile
    assert mm.launch_config(1000, 14336, 4096, 132)["BLOCK_N"] == 128


def causal_reference(q, k, v):
    group = q.shape[1] // k.shape[1]
    k, v = k.double().repeat_interleave(group, 1), v.double().repeat_interleave(group, 1)
    scores = q.double() @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    seq = q.shape[2]
    scores = scores.masked_fill(torch.ones(seq, seq, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(scores, -1) @ v


@pytest.mark.parametrize("tma", [False, True], ids=["pointers", "tma"])
@pytest.mark.parametrize("heads, kv_heads, seq, head_dim", [(4, 2, 77, 64), (2, 2, 40, 32), (2, 1, 40, 48)])
def test_attention_kernels_match_float64(monkeypatch, tma, heads, kv_heads, seq, head_dim):
    at = load("attention_causal")
    if tma:
        force_tma(at, monkeypatch)
    # 32-query tiles, 16-key tiles: two diagonal key tiles per query tile, off-diagonal ones from the second
    monkeypatch.setattr(at, "DISPATCH", {})
    monkeypatch.setattr(at, "TUNABLES", {"BLOCK_M": 32, "BLOCK_N": 16, "num_warps": 4, "num_stages": 2})
    torch.manual_seed(0)
    q = torch.randn(1, heads, seq, head_dim).half()
    k, v = (torch.randn(1, kv_heads, seq, head_dim).half() for _ in range(2))
    out = at.attention_causal(q, k, v)
    assert (out.double() - causal_reference(q, k, v)).abs().max() < 3e-3
    # head_dim 48 on the TMA path: a 64-wide block, its 16 missing columns zero-filled and never stored
    assert at.tma_block(head_dim) == {64: 64, 32: None, 48: 64}[head_dim]


@pytest.mark.parametrize("tma", [False, True], ids=["pointers", "tma"])
@pytest.mark.parametrize("section", [1, 3, 4])
def test_attention_in_l2_sections_covers_every_tile_once(monkeypatch, tma, section):
    """L2_SECTION_MB's order: (batch, head) pairs in sections (10 pairs in sections of 3: the last one holds
    one), each section's query blocks longest first; every tile is computed once and lands in its place."""
    at = load("attention_causal")
    if tma:
        force_tma(at, monkeypatch)
    monkeypatch.setattr(at, "DISPATCH", {})
    monkeypatch.setattr(at, "TUNABLES", {"BLOCK_M": 16, "BLOCK_N": 16, "num_warps": 4, "num_stages": 2,
                                         "L2_SECTION_MB": 50})
    monkeypatch.setattr(at, "section_of", lambda pairs, kv_bytes, budget_mb: min(section, pairs))
    torch.manual_seed(section)
    q = torch.randn(2, 5, 40, 32).half()
    k, v = (torch.randn(2, 5, 40, 32).half() for _ in range(2))
    assert (at.attention_causal(q, k, v).double() - causal_reference(q, k, v)).abs().max() < 3e-3


def test_attention_sections_hold_the_pairs_whose_k_and_v_fit_the_budget():
    at = load("attention_causal")
    two_mb = 2 * 4096 * 128 * 2  # K and V of one pair at 4096 positions, head_dim 128, 2-byte dtype
    assert at.section_of(64, two_mb, 50) == 16  # 25 fit: the power of two below
    assert at.section_of(64, two_mb, 0) == 64  # off: one section of every pair
    assert at.section_of(3, two_mb, 50) == 3 and at.section_of(64, 64 * two_mb, 50) == 1


@pytest.mark.parametrize("tma", [False, True], ids=["pointers", "tma"])
def test_fused_mlp_matches_float64(monkeypatch, tma):
    mlp = load("fused_mlp")
    if tma:
        force_tma(mlp, monkeypatch)
    torch.manual_seed(0)
    x = torch.randn(17, 64).half()
    wg, wu = (torch.randn(128, 64).div(8).half() for _ in range(2))
    wd = torch.randn(64, 128).div(11).half()
    out = mlp.fused_mlp(x, wg, wu, wd)
    g, u = x.double() @ wg.double().T, x.double() @ wu.double().T
    h = (g * torch.sigmoid(g) * u).half().double()  # h is stored in the input dtype
    ref = h @ wd.double().T
    assert (out.double() - ref).abs().max() < 2e-3


@pytest.mark.parametrize("problem", sorted(FILES))
def test_tables_bucket_shapes_as_the_suite_does(problem):
    module = load(problem)
    source = (SOLUTIONS_DIR / problem / f"{FILES[problem]}.py").read_text()
    buckets = dispatch.read_buckets(source)
    assert set(dispatch.read_table(source)) <= set(dispatch.all_buckets(buckets))
    meta = load_problem(PROBLEMS_DIR / f"{problem}.py", f"ksuite_hopper_p_{problem}").meta
    for shape in list(meta.workload().shapes) + list(meta.large_shapes) + list(meta.edge_shapes):
        assert module.bucket_of({k: shape[k] for k in buckets}) == dispatch.bucket_of(shape, buckets), shape


def test_split_k_only_where_tiles_are_too_few():
    mm, mlp = load("matmul"), load("fused_mlp")
    assert mm.launch_config(7, 4096, 14336, 132)["SPLIT_K"] > 1  # decode, down projection: 64 tiles
    assert mm.launch_config(4096, 4096, 4096, 132)["SPLIT_K"] == 1
    assert mm.launch_config(16, 28672, 8192, 132)["SPLIT_K"] == 1  # 448 tiles already
    sizes = {"tokens": 7, "hidden": 4096, "intermediate": 14336}
    assert mlp.launch_config("gate_up", sizes, 7, 14336, 4096, 132)["SPLIT_K"] == 1  # never: gating
    assert mlp.launch_config("down", sizes, 7, 4096, 14336, 132)["SPLIT_K"] > 1
