"""Triton starter for fused_mlp: down(silu(gate(x)) * up(x)) as two tiled tl.dot kernels.

1. gate_up_kernel: h = silu(x @ Wg^T) * (x @ Wu^T), one program per [BLOCK_M, BLOCK_N] tile of h
   with two float32 accumulators that share each loaded tile of x; the gating runs in the epilogue,
   so the two [tokens, intermediate] projections never reach memory, only h (in the input dtype).
2. matmul_kernel: out = h @ Wd^T, the tutorial-03 matmul.

Flops: 3 matmuls of 2 * tokens * hidden * intermediate. Bytes: x, Wg, Wu, Wd and out once, plus h
written and read once (2 * tokens * intermediate elements) by this two-kernel split.
"""

import torch
import triton
import triton.language as tl

TUNABLES = {'gate_up': {'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 64, 'GROUP_M': 8, 'num_warps': 8, 'num_stages': 3},
 'down': {'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 32, 'GROUP_M': 8, 'num_warps': 4, 'num_stages': 3}}
# The values `ksuite optimize --strategy search` may try, per GEMM (tiles that fit Hopper's shared memory).
TUNABLE_CHOICES = {
    "gate_up": {"BLOCK_M": [64, 128, 256], "BLOCK_N": [64, 128, 256], "BLOCK_K": [32, 64], "GROUP_M": [8],
                "num_warps": [4, 8], "num_stages": [2, 3, 4]},
    "down": {"BLOCK_M": [64, 128, 256], "BLOCK_N": [64, 128, 256], "BLOCK_K": [32, 64], "GROUP_M": [8],
             "num_warps": [4, 8], "num_stages": [2, 3, 4]},
}


@triton.jit
def tile_of(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """Grouped ordering of the output tiles (tutorial 03): returns (pid_m, pid_n)."""
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def gate_up_kernel(
    x_ptr, wg_ptr, wu_ptr, h_ptr,
    M, N, K,
    stride_xm, stride_xk, stride_wgn, stride_wgk, stride_wun, stride_wuk,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    UPCAST: tl.constexpr,
):
    pid_m, pid_n = tile_of(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    # W is [N, K] (nn.Linear layout); load it as the [K, N] operand W^T
    wg_ptrs = wg_ptr + offs_k[:, None] * stride_wgk + offs_n[None, :] * stride_wgn
    wu_ptrs = wu_ptr + offs_k[:, None] * stride_wuk + offs_n[None, :] * stride_wun

    acc_gate = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc_up = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        w_mask = (offs_k[:, None] < k_left) & (offs_n[None, :] < N)
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        wg = tl.load(wg_ptrs, mask=w_mask, other=0.0)
        wu = tl.load(wu_ptrs, mask=w_mask, other=0.0)
        if UPCAST:  # only under the CPU interpreter, whose tl.dot cannot read bfloat16
            x = x.to(tl.float32)
            wg = wg.to(tl.float32)
            wu = wu.to(tl.float32)
        acc_gate = tl.dot(x, wg, acc_gate)
        acc_up = tl.dot(x, wu, acc_up)
        x_ptrs += BLOCK_K * stride_xk
        wg_ptrs += BLOCK_K * stride_wgk
        wu_ptrs += BLOCK_K * stride_wuk

    h = acc_gate * tl.sigmoid(acc_gate) * acc_up
    # h is a new contiguous [M, N] tensor
    h_ptrs = h_ptr + offs_m[:, None] * N + offs_n[None, :]
    tl.store(h_ptrs, h.to(h_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    UPCAST: tl.constexpr,
):
    pid_m, pid_n = tile_of(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
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
        if UPCAST:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    # c is a new contiguous [M, N] tensor
    c_ptrs = c_ptr + offs_m[:, None] * N + offs_n[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _grid(M, N, t):
    return (triton.cdiv(M, t["BLOCK_M"]) * triton.cdiv(N, t["BLOCK_N"]),)


def _launch_options(t):
    return {k: t[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages")}


def fused_mlp(x, w_gate, w_up, w_down):
    assert x.dim() == 2, "x must be [tokens, hidden]"
    tokens, hidden = x.shape
    inter = w_gate.shape[0]
    assert w_gate.shape == w_up.shape == (inter, hidden), "gate and up weights must be [intermediate, hidden]"
    assert w_down.shape == (hidden, inter), "down weight must be [hidden, intermediate]"
    assert x.dtype == w_gate.dtype == w_up.dtype == w_down.dtype, "one dtype for x and the weights"
    assert x.dtype in (torch.float16, torch.bfloat16), "float16 or bfloat16"
    upcast = x.device.type == "cpu" and x.dtype == torch.bfloat16

    h = torch.empty((tokens, inter), dtype=x.dtype, device=x.device)
    t = TUNABLES["gate_up"]
    gate_up_kernel[_grid(tokens, inter, t)](
        x, w_gate, w_up, h,
        tokens, inter, hidden,
        x.stride(0), x.stride(1), *w_gate.stride(), *w_up.stride(),
        UPCAST=upcast, **_launch_options(t),
    )

    out = torch.empty((tokens, hidden), dtype=x.dtype, device=x.device)
    t = TUNABLES["down"]
    matmul_kernel[_grid(tokens, hidden, t)](
        h, w_down, out,
        tokens, hidden, inter,
        h.stride(0), h.stride(1), w_down.stride(1), w_down.stride(0),
        UPCAST=upcast, **_launch_options(t),
    )
    return out


class ModelNew(torch.nn.Module):
    def __init__(self, hidden, intermediate):
        super().__init__()
        self.gate_proj = torch.nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = torch.nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = torch.nn.Linear(intermediate, hidden, bias=False)

    def forward(self, x):
        return fused_mlp(x, self.gate_proj.weight, self.up_proj.weight, self.down_proj.weight)
