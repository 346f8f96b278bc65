"""RMSNorm, persistent programs with a register double buffer: each program walks its share of the rows
and issues the loads of its next block of rows before it reduces, scales and stores the current one, so
a multiprocessor always has loads in flight (triton_rowwise loads once per program, then has none while
it reduces and stores). The weight is loaded once per program, not once per row block.

Rows are split so every program gets the same number of row blocks (the last may get fewer), and the grid
is at most what fits on the GPU at once: no second wave, no tail of programs with one extra block.
Rows longer than MAX_FUSED_N take two passes over column blocks, one row block per program.

Bytes: x read once, y written once, weight read once per program: (2 * M * N + N) * esize.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

# ROW_TILE: elements per row block (short rows are packed up to it); ELEMS_PER_THREAD sets num_warps;
# PROGRAMS_PER_SM: resident programs per multiprocessor (105-119 registers at 8 warps: 2 fit, by ptxas);
# MAX_FUSED_N: longest row held in registers; LOOP_BLOCK_N: column block of the two-pass fallback.
TUNABLES = {"ROW_TILE": 8192, "ELEMS_PER_THREAD": 32, "PROGRAMS_PER_SM": 2, "MAX_FUSED_N": 16384,
            "LOOP_BLOCK_N": 4096}
TUNABLE_CHOICES = {"ROW_TILE": [4096, 8192, 16384], "ELEMS_PER_THREAD": [16, 32], "PROGRAMS_PER_SM": [1, 2, 3, 4],
                   "MAX_FUSED_N": [8192, 16384], "LOOP_BLOCK_N": [2048, 4096, 8192]}
CPU_SMS = 4  # the interpreter has no multiprocessors; any count checks the same code


@triton.jit
def rmsnorm_double_buffer_kernel(x_ptr, w_ptr, y_ptr, M, N, stride_xm, stride_xn, stride_ym, eps, blocks_per_program,
                                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    offs_n = tl.arange(0, BLOCK_N)
    col_mask = offs_n < N
    w = tl.load(w_ptr + offs_n, mask=col_mask, other=0.0).to(tl.float32)
    first = pid * blocks_per_program
    offs_m = first * BLOCK_M + tl.arange(0, BLOCK_M)
    mask = (offs_m < M)[:, None] & col_mask[None, :]
    nxt = tl.load(x_ptr + offs_m.to(tl.int64)[:, None] * stride_xm + offs_n[None, :] * stride_xn, mask=mask,
                  other=0.0, eviction_policy="evict_first")
    for b in range(first, first + blocks_per_program):
        x = nxt.to(tl.float32)
        y_offs = offs_m.to(tl.int64)[:, None] * stride_ym + offs_n[None, :]
        y_mask = mask
        # the next block's loads go out before this block's reduction: they land while it computes
        offs_m = (b + 1) * BLOCK_M + tl.arange(0, BLOCK_M)
        mask = (offs_m < M)[:, None] & col_mask[None, :] & (b + 1 < first + blocks_per_program)
        nxt = tl.load(x_ptr + offs_m.to(tl.int64)[:, None] * stride_xm + offs_n[None, :] * stride_xn, mask=mask,
                      other=0.0, eviction_policy="evict_first")
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / N + eps)
        y = x * rstd[:, None] * w[None, :]
        tl.store(y_ptr + y_offs, y.to(y_ptr.dtype.element_ty), mask=y_mask, eviction_policy="evict_first")


@triton.jit
def rmsnorm_two_pass_kernel(x_ptr, w_ptr, y_ptr, N, stride_xm, stride_xn, stride_ym, eps, BLOCK_N: tl.constexpr):
    """One row per program, for rows too long for registers: sum of squares, then normalise (mostly L2)."""
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        offs = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * stride_xm + offs * stride_xn, mask=offs < N, other=0.0).to(tl.float32)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    for start in range(0, N, BLOCK_N):
        offs = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * stride_xm + offs * stride_xn, mask=offs < N, other=0.0,
                    eviction_policy="evict_first").to(tl.float32)
        w = tl.load(w_ptr + offs, mask=offs < N, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * stride_ym + offs, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=offs < N)


def launch_config(M: int, N: int, sms: int) -> dict:
    """Row block shape, warps, and an even split of the row blocks over at most one wave of programs."""
    t = TUNABLES
    block_n = triton.next_power_of_2(N)
    block_m = max(1, min(t["ROW_TILE"] // block_n, triton.next_power_of_2(M)))
    num_warps = max(1, min(16, block_m * block_n // (32 * t["ELEMS_PER_THREAD"])))
    blocks = triton.cdiv(M, block_m)
    per_program = triton.cdiv(blocks, min(blocks, sms * t["PROGRAMS_PER_SM"]))
    return dict(BLOCK_M=block_m, BLOCK_N=block_n, num_warps=num_warps, blocks_per_program=per_program,
                programs=triton.cdiv(blocks, per_program))


def _sm_count(device: torch.device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count if device.type == "cuda" else CPU_SMS


def rmsnorm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    assert x.dim() == 2, "x must be [rows, dim]"
    M, N = x.shape
    assert weight.shape == (N,) and weight.is_contiguous(), "weight must be a contiguous [dim] vector"
    assert x.device == weight.device and x.dtype == weight.dtype
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    if M == 0 or N == 0:
        return y
    if N > TUNABLES["MAX_FUSED_N"]:
        rmsnorm_two_pass_kernel[(M,)](x, weight, y, N, x.stride(0), x.stride(1), y.stride(0), eps,
                                      BLOCK_N=TUNABLES["LOOP_BLOCK_N"], num_warps=8)
        return y
    c = launch_config(M, N, _sm_count(x.device))
    rmsnorm_double_buffer_kernel[(c["programs"],)](x, weight, y, M, N, x.stride(0), x.stride(1), y.stride(0), eps,
                                                    c["blocks_per_program"], BLOCK_M=c["BLOCK_M"],
                                                    BLOCK_N=c["BLOCK_N"], num_warps=c["num_warps"])
    return y


class ModelNew(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        return rmsnorm(x, self.weight, self.eps)
