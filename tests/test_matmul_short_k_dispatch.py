"""solutions/matmul/cuda_cutlass_short_k.py on a machine without a GPU: which products its CUTLASS ping-pong
kernel takes (short K, many rows; the rest go to triton_tma_persistent beside it), that it names missing
CUTLASS headers, and that the products it hands on are computed right (the Triton path, under the
interpreter)."""

import math

import pytest
import torch
from conftest import SOLUTIONS_DIR

from harness.loader import import_file

PATH = SOLUTIONS_DIR / "matmul" / "cuda_cutlass_short_k.py"


@pytest.fixture(scope="module")
def short_k():
    return import_file(PATH, "ksuite_test_matmul_short_k")


class FakeMatrix:  # the attributes takes() reads, without a GPU
    def __init__(self, rows, cols, dtype=torch.float16, is_cuda=True):
        self.shape, self.dtype, self.is_cuda = (rows, cols), dtype, is_cuda


def product(M, K, N, **kw):
    return FakeMatrix(M, K, **kw), FakeMatrix(K, N, **{k: v for k, v in kw.items() if k == "dtype"})


def test_short_k_at_many_rows_takes_the_cutlass_kernel(short_k):
    assert short_k.takes(*product(6144, 768, 3072))  # GPT-2's MLP at 6144 tokens
    assert short_k.takes(*product(16384, 768, 3072, dtype=torch.bfloat16))
    assert short_k.takes(*product(4096, 1024, 4096))  # SHORT_K_MAX itself
    assert not short_k.takes(*product(3001, 1600, 6400))  # K 1600: measured slower than the Triton kernel
    assert not short_k.takes(*product(127, 768, 3072))  # few rows: the Triton kernel's
    assert not short_k.takes(*product(6144, 768, 3072, is_cuda=False))
    assert not short_k.takes(*product(6144, 768, 3072, dtype=torch.float32))
    assert not short_k.takes(*product(6144, 768, 3070))  # rows of C not a multiple of 16 bytes: no TMA


def test_missing_cutlass_headers_are_named(short_k, monkeypatch, tmp_path):
    monkeypatch.setenv("KSUITE_CUTLASS_DIR", str(tmp_path / "include"))
    monkeypatch.setattr(short_k._CUTLASS, "ROOT", tmp_path)
    assert short_k.unavailable().startswith("CUTLASS headers not found")


def assert_product_right(model, M, K, N):
    """model(a, b) for fp16 stand-ins of M x K and K x N, against the float64 product."""
    torch.manual_seed(0)
    a = torch.randn(M, K).half()
    b = (torch.randn(K, N) / math.sqrt(K)).half()
    c = model(a, b)
    ref = a.double() @ b.double()
    assert c.shape == (M, N) and c.dtype == torch.float16
    assert (c.double() - ref).abs().max() < 1e-3 + 2e-3 * ref.abs().max()


@pytest.mark.parametrize("M,K,N", [(33, 40, 24), (64, 48, 80)])
def test_products_it_hands_on_are_right(short_k, M, K, N):
    assert_product_right(short_k.ModelNew(), M, K, N)
