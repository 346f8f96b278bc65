"""ModelNew for KernelBench level1/1_Square_matrix_multiplication_: C = A @ B in fp32, tiled as in
Triton's tutorial 03 (grouped tile order, float32 accumulator, masks for any N).

fp32 inputs on tensor cores: TF32 alone rounds inputs to 10 mantissa bits and errs about 1e-3 on
this problem, so tl.dot runs "tf32x3" (each operand split into a TF32 high and low part, three
products): about fp32 accuracy at several times the rate of fp32 FMA. "ieee" is the slow exact path.

Flops: 2 * N^3. Bytes (fewest): 3 * N^2 * 4.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

TUNABLES = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 8, "num_stages": 3,
            "input_precision": "tf32x3"}
TUNABLE_CHOICES = {"BLOCK_M": [64, 128], "BLOCK_N": [64, 128, 256], "BLOCK_K": [16, 32, 64], "GROUP_M": [4, 8],
                   "num_warps": [4, 8], "num_stages": [2, 3, 4], "input_precision": ["tf32x3", "ieee"]}


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  INPUT_PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    assert a.dim() == 2 and b.dim() == 2 and a.shape[1] == b.shape[0], "A [M, K] @ B [K, N]"
    assert a.dtype == b.dtype == torch.float32 and a.device == b.device
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    t = TUNABLES
    grid = (triton.cdiv(M, t["BLOCK_M"]) * triton.cdiv(N, t["BLOCK_N"]),)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                        c.stride(1), BLOCK_M=t["BLOCK_M"], BLOCK_N=t["BLOCK_N"], BLOCK_K=t["BLOCK_K"],
                        GROUP_M=t["GROUP_M"], INPUT_PRECISION=t["input_precision"], num_warps=t["num_warps"],
                        num_stages=t["num_stages"])
    return c


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return matmul(A, B)
