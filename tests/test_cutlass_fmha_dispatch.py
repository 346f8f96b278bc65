"""solutions/attention_causal/cuda_cutlass_fmha.py on a machine without a GPU: which shapes its CUTLASS
kernels take (the rest go to the Triton kernel beside it), what it says when CUTLASS's folders are
missing, and that the shapes it hands on are computed right (the Triton path, under the interpreter)."""

import math

import pytest
import torch
from conftest import SOLUTIONS_DIR

from harness.loader import import_file

PATH = SOLUTIONS_DIR / "attention_causal" / "cuda_cutlass_fmha.py"


@pytest.fixture(scope="module")
def fmha():
    return import_file(PATH, "ksuite_test_cutlass_fmha")


def test_head_dims_map_to_the_collectives_tiles(fmha):
    assert [fmha.head_tile(d) for d in (32, 64, 80, 96, 128, 200, 256)] == [64, 64, 128, 128, 128, 256, 256]
    assert fmha.head_tile(36) is None  # rows not a multiple of 16 bytes: no TMA
    assert fmha.head_tile(512) is None  # no tile that wide


def test_only_long_aligned_cuda_sequences_take_the_cutlass_kernel(fmha, monkeypatch):
    class FakeQ:  # the attributes takes() reads, without a GPU
        def __init__(self, shape, dtype=torch.float16, is_cuda=True):
            self.shape, self.dtype, self.is_cuda = shape, dtype, is_cuda

    monkeypatch.setitem(fmha.TUNABLES, "MIN_SEQ", 2048)
    assert fmha.takes(FakeQ((1, 32, 4096, 128)))
    assert fmha.takes(FakeQ((1, 16, 8192, 128), torch.bfloat16))
    assert fmha.takes(FakeQ((1, 16, 8192, 256)))  # 5 K/V stages: measured ahead of Triton and SDPA
    assert fmha.takes(FakeQ((1, 32, 8192, 96)))  # in the 128 tile
    assert not fmha.takes(FakeQ((1, 32, 8192, 64)))  # measured slower than the Triton kernel there
    assert not fmha.takes(FakeQ((1, 32, 4096, 128), is_cuda=False))
    assert not fmha.takes(FakeQ((1, 32, 1024, 128)))  # below MIN_SEQ: launch-bound, Triton's
    assert not fmha.takes(FakeQ((1, 32, 3001, 128)))  # not a multiple of 8 positions
    assert not fmha.takes(FakeQ((1, 32, 4096, 128), torch.float32))
    assert not fmha.takes(FakeQ((64, 64, 32768, 128)))  # past 32-bit strides


def test_missing_cutlass_folders_are_named(fmha, monkeypatch, tmp_path):
    monkeypatch.setenv("KSUITE_CUTLASS_DIR", str(tmp_path / "include"))
    monkeypatch.setattr(fmha, "ROOT", tmp_path)
    assert "88_hopper_fmha" in fmha.unavailable()
    (tmp_path / "include" / "cutlass").mkdir(parents=True)
    (tmp_path / "include" / "cutlass" / "cutlass.h").write_text("")
    assert fmha.unavailable() is not None  # the headers alone are not enough
    kernel = tmp_path / "fmha" / "kernel" / "fmha_kernel_tma_warpspecialized.hpp"
    kernel.parent.mkdir(parents=True)
    kernel.write_text("")
    assert fmha.unavailable() is None
    assert fmha.include_dirs() == [str(tmp_path / "include"), str(tmp_path / "fmha")]


@pytest.mark.parametrize("seq,head_dim", [(40, 32), (77, 64)])
def test_shapes_it_hands_on_are_right(fmha, seq, head_dim, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, seq, head_dim, dtype=torch.float16) for _ in range(3))
    out = fmha.ModelNew()(q, k, v)
    scores = (q.double() @ k.double().transpose(-2, -1)) / math.sqrt(head_dim)
    scores = scores.masked_fill(torch.ones(seq, seq, dtype=torch.bool).triu(1), float("-inf"))
    ref = torch.softmax(scores, dim=-1) @ v.double()
    torch.testing.assert_close(out.double(), ref, atol=5e-3, rtol=5e-3)


def test_no_configuration_offers_fewer_than_three_k_v_stages(fmha):
    """K and V share one ring of stages, and a consumer holds tile j-1's V while it waits for tile j's K and
    V: at 2 stages the kernel deadlocks (head_dim 256 never returned on the H200). Neither the file's
    configuration nor any the search may try has fewer than 3, and the source refuses to compile one."""
    for name in ("STAGES_KV", "STAGES_KV_256"):
        assert fmha.TUNABLES[name] >= 3
        assert min(fmha.TUNABLE_CHOICES[name]) >= 3
    assert 'static_assert(kStages >= 3, "fewer than 3 K/V stages deadlock")' in fmha.CUDA_SOURCE


def test_every_config_field_the_source_reads_is_a_tunable(fmha):
    """The CUDA source reads its switches as Config::NAME from TUNABLES (config_source): a field it reads that
    TUNABLES lacks would fail only in nvcc, on the GPU machine, after a build of about 90 s."""
    import re

    read = set(re.findall(r"Config::([A-Z0-9_]+)", fmha.CUDA_SOURCE))
    assert {"MAINLOOP_LOCKED", "MMA_WARPGROUPS", "OVERLAP", "STAGES_KV"} <= read
    assert read <= {key.upper() for key in fmha.TUNABLES}
    assert set(fmha.TUNABLE_CHOICES) <= set(fmha.TUNABLES)
    struct = fmha.config_source(fmha.TUNABLES)
    assert all(f"static constexpr int {name} = " in struct for name in read)
