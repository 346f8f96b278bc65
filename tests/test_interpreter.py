"""The CPU environment itself: Triton's interpreter runs the kernel patterns the starters use."""

import os

import pytest
import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, y_ptr, N, stride_xm, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):  # loop bound known only at run time
        offs_n = start + tl.arange(0, BLOCK_N)
        acc += tl.load(x_ptr + pid * stride_xm + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    tl.store(y_ptr + pid, tl.sum(acc, axis=0))


def test_tests_run_in_the_interpreter():
    assert os.environ.get("TRITON_INTERPRET") == "1"


@pytest.mark.filterwarnings("ignore:Conversion of an array with ndim > 0:DeprecationWarning")
@pytest.mark.parametrize("n", [1, 16, 37, 100])
def test_runtime_loop_bounds_work_in_the_interpreter(n):
    x = torch.randn(3, n)
    y = torch.empty(3)
    try:
        row_sum_kernel[(3,)](x, y, n, x.stride(0), BLOCK_N=16)
    except Exception as exc:  # noqa: BLE001 - turn an environment break into one clear message
        import numpy

        pytest.fail(f"Triton {triton.__version__} interpreter with numpy {numpy.__version__} cannot run a loop with "
                    f"a run-time bound ({type(exc).__name__}: {exc}); numpy 2.4 breaks it: pin numpy<2.4")
    torch.testing.assert_close(y, x.sum(dim=1), atol=1e-5, rtol=1e-5)
