"""Triton starter for swiglu_act: out = silu(g) * u, one program per [BLOCK_M, BLOCK_N] tile.

Bytes: g and u read once, out written once: 3 * rows * cols elements. Computed in float32.
"""

import torch
import triton
import triton.language as tl

TUNABLES = {"BLOCK_M": 4, "BLOCK_N": 1024, "num_warps": 4}


@triton.jit
def swiglu_kernel(
    g_ptr, u_ptr, out_ptr,
    M, N,
    stride_gm, stride_gn, stride_um, stride_un,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)

    g = tl.load(g_ptr + offs_m[:, None] * stride_gm + offs_n[None, :] * stride_gn, mask=mask, other=0.0)
    u = tl.load(u_ptr + offs_m[:, None] * stride_um + offs_n[None, :] * stride_un, mask=mask, other=0.0)
    g = g.to(tl.float32)
    out = g * tl.sigmoid(g) * u.to(tl.float32)

    # out is a new contiguous [M, N] tensor
    tl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], out.to(out_ptr.dtype.element_ty), mask=mask)


def swiglu(g, u):
    assert g.dim() == 2 and g.shape == u.shape, "g and u must be [rows, cols] of one shape"
    assert g.dtype == u.dtype and g.device == u.device
    M, N = g.shape
    out = torch.empty((M, N), dtype=g.dtype, device=g.device)
    block_m, block_n = TUNABLES["BLOCK_M"], TUNABLES["BLOCK_N"]
    grid = (triton.cdiv(M, block_m), triton.cdiv(N, block_n))
    swiglu_kernel[grid](
        g, u, out,
        M, N,
        g.stride(0), g.stride(1), u.stride(0), u.stride(1),
        BLOCK_M=block_m, BLOCK_N=block_n,
        num_warps=TUNABLES["num_warps"],
    )
    return out


class ModelNew(torch.nn.Module):
    def forward(self, g, u):
        return swiglu(g, u)
