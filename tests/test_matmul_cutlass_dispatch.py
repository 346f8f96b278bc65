"""solutions/matmul/cuda_cutlass_dispatch.py on a machine without a GPU: which products its thin route (CUTLASS
swapped, 128 x 64 tiles over N x M in clusters of two), its decode route (swapped 128 x 16) and its stream-K route
(128 x 256 under CUTLASS's stream-K scheduler) take, that the rest
follow cuda_cutlass_short_k's routes,
and that the products it hands on are computed right (the Triton path, under the interpreter)."""

import pytest
import torch
from conftest import SOLUTIONS_DIR
from test_matmul_short_k_dispatch import assert_product_right, product  # stand-ins without a GPU

from harness.loader import import_file

PATH = SOLUTIONS_DIR / "matmul" / "cuda_cutlass_dispatch.py"
H200_SMS = 132


@pytest.fixture(scope="module")
def dispatch():
    return import_file(PATH, "ksuite_test_matmul_dispatch")


def test_thin_route_takes_rows_of_one_cluster_whose_tiles_fill_one_wave(dispatch):
    assert dispatch.thin_tiles(127, 8192) == 128  # 64 column tiles x one cluster of two 64-row tiles
    assert dispatch.takes_thin(*product(127, 3072, 8192), H200_SMS)  # cuBLAS's swapped 1 x 2 kernel there
    assert dispatch.takes_thin(*product(100, 2048, 8192, dtype=torch.bfloat16), H200_SMS)
    assert dispatch.takes_thin(*product(127, 2048, 6144), H200_SMS)  # 96 CTAs: over half the SMs
    assert not dispatch.takes_thin(*product(127, 2304, 9216), H200_SMS)  # 144 CTAs: a second wave of 12
    assert not dispatch.takes_thin(*product(127, 768, 3072), H200_SMS)  # 48 CTAs: most SMs idle
    assert not dispatch.takes_thin(*product(64, 3072, 8192), H200_SMS)  # one 64-row tile: half of each cluster idle
    assert not dispatch.takes_thin(*product(129, 3072, 8192), H200_SMS)  # a third row tile
    assert not dispatch.takes_thin(*product(127, 3072, 8192), 114)  # the same product on fewer SMs: two waves
    assert not dispatch.takes_thin(*product(127, 3072, 8190), H200_SMS)  # rows of C^T not 16 bytes: no TMA
    assert not dispatch.takes_thin(*product(127, 3072, 8192, dtype=torch.float32), H200_SMS)
    assert not dispatch.takes_thin(*product(127, 3072, 8192, is_cuda=False), H200_SMS)


def test_decode_route_takes_up_to_16_rows_of_weights_up_to_20m_elements(dispatch):
    assert dispatch.takes_decode(*product(7, 1600, 6400))  # the held-out decode shape it is for: 10.2 M
    assert dispatch.takes_decode(*product(16, 2560, 7168, dtype=torch.bfloat16))  # 18.4 M: led at the probe
    assert dispatch.takes_decode(*product(1, 1536, 6144))
    assert not dispatch.takes_decode(*product(16, 2304, 9216))  # 21.2 M: the Triton kernel led
    assert not dispatch.takes_decode(*product(7, 4096, 14336))
    assert not dispatch.takes_decode(*product(17, 1600, 6400))  # a second 16-row tile
    assert not dispatch.takes_decode(*product(7, 1600, 6402))  # rows of C^T not 16 bytes: no TMA
    assert not dispatch.takes_decode(*product(7, 1600, 6400, dtype=torch.float32))
    assert not dispatch.takes_decode(*product(7, 1600, 6400, is_cuda=False))


def test_stream_k_route_takes_long_k_rows_where_the_triton_launch_narrows_its_tile(dispatch):
    """The route's rule, as the H100's probe of 2026-12-07 drew it: 500-1024 rows at K >= 8192, and there only where
    the Triton kernel would run 128 x 128 tiles (where it keeps 128 x 256 ones, it led)."""
    h100 = "nvidia-h100-80gb-hbm3"
    assert dispatch.takes_stream_k(*product(509, 8192, 28672), H200_SMS, h100)  # held-out: 128 x 128, 1.05x paired
    assert dispatch.takes_stream_k(*product(700, 28672, 8192, dtype=torch.bfloat16), H200_SMS, h100)  # 1.27x Triton
    assert dispatch.triton_launch(509, 28672, 8192, H200_SMS, h100)["BLOCK_N"] == 128
    assert not dispatch.takes_stream_k(*product(640, 8192, 28672), H200_SMS, h100)  # 128 x 256: Triton led
    assert not dispatch.takes_stream_k(*product(800, 28672, 8192), H200_SMS, h100)  # 128 x 256: Triton led, 1.04x
    assert not dispatch.takes_stream_k(*product(1000, 8192, 28672), H200_SMS, h100)
    assert not dispatch.takes_stream_k(*product(1000, 4096, 14336), H200_SMS, h100)  # K 4096: the Triton kernel led
    assert not dispatch.takes_stream_k(*product(499, 8192, 28672), H200_SMS, h100)  # rows the probe did not reach
    assert not dispatch.takes_stream_k(*product(1025, 8192, 28672), H200_SMS, h100)
    assert not dispatch.takes_stream_k(*product(509, 8192, 28670), H200_SMS, h100)  # rows of C not 16 bytes: no TMA
    assert not dispatch.takes_stream_k(*product(509, 8192, 28672, dtype=torch.float32), H200_SMS, h100)
    assert not dispatch.takes_stream_k(*product(509, 8192, 28672, is_cuda=False), H200_SMS, h100)
    # each GPU's own Triton table decides: the H200's keeps 128 x 256 tiles with a split tail at 700 x 28672
    assert dispatch.takes_stream_k(*product(700, 8192, 28672), H200_SMS, h100)
    assert not dispatch.takes_stream_k(*product(700, 8192, 28672), H200_SMS, "nvidia-h200")
    assert dispatch.route_kernel({"M": 509, "K": 8192, "N": 28672}, torch.float16, H200_SMS, h100) == "stream_k"
    assert dispatch.route_kernel({"M": 700, "K": 8192, "N": 28672}, torch.float16, H200_SMS, "nvidia-h200") is None
    assert dispatch.route_kernel({"M": 127, "K": 3072, "N": 8192}, torch.float16, H200_SMS) == "thin"  # thin first


def test_only_a_tile_of_an_extended_wgmma_width_turns_cutes_extended_widths_on(dispatch):
    """152, 168 and 176-wide tiles (cuBLAS's at 520-650 rows) need CUTE's extended wgmma widths, defined ahead of
    every header; the routes' own tiles keep their source as it was, so their cached builds keep loading."""
    cutlass, define = dispatch._CUTLASS, "#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED"
    for tunables in (cutlass.TUNABLES, dispatch.TUNABLES, dispatch.DECODE_TUNABLES, dispatch.STREAM_K_TUNABLES):
        assert define not in cutlass.config_source(tunables)
    for width in (152, 168, 176):
        source = cutlass.config_source({**cutlass.TUNABLES, "SWAP_AB": 1, "TILE_N": width})
        assert source.startswith(define + "\n") and f"TILE_N = {width};" in source


def test_stream_k_variant_names_the_routes_tunables(dispatch):
    overrides = dict(item.split("=") for item in dispatch.STREAM_K_VARIANT.split(":", 1)[1].split(","))
    assert {**dispatch._CUTLASS.TUNABLES, **{k: int(v) for k, v in overrides.items()}} == dispatch.STREAM_K_TUNABLES
    assert list(dispatch.STREAM_K_TUNABLES) == list(dispatch._CUTLASS.TUNABLES)  # the build's source, in its order
    assert "static constexpr int SCHEDULER = 1;" in dispatch.route_source("stream_k", torch.float16)


def test_decode_variant_names_the_routes_tunables(dispatch):
    overrides = dict(item.split("=") for item in dispatch.DECODE_VARIANT.split(":", 1)[1].split(","))
    assert {**dispatch._CUTLASS.TUNABLES, **{k: int(v) for k, v in overrides.items()}} == dispatch.DECODE_TUNABLES
    assert list(dispatch.DECODE_TUNABLES) == list(dispatch._CUTLASS.TUNABLES)  # the build's source, in its order


def test_thin_variant_names_the_routes_tunables(dispatch):
    overrides = dict(item.split("=") for item in dispatch.THIN_VARIANT.split(":", 1)[1].split(","))
    assert {k: int(v) for k, v in overrides.items()} == dispatch.TUNABLES
    assert dispatch.TUNABLES["SWAP_AB"] == 1 and set(dispatch.TUNABLES) == set(dispatch._CUTLASS.TUNABLES)


@pytest.mark.parametrize("M,K,N", [(100, 40, 24), (7, 48, 80)])
def test_products_it_hands_on_are_right(dispatch, M, K, N):
    assert_product_right(dispatch.ModelNew(), M, K, N)
