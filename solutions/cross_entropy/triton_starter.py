"""Cross-entropy (forward) starter: one program per row computes that row's loss with an online
log-sum-exp over column blocks; a second one-program kernel sums the row losses in a fixed order
(deterministic, no atomics), divides by the row count and writes the 0-dim result.

Bytes: the fewest is logits read once, int64 targets read once, one scalar written:
M * V * esize + 8 * M + esize. This kernel reads each row once, plus M float32 row losses written
and read back (4 bytes a row, negligible next to V * esize).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

TUNABLES = {"BLOCK_V": 2048, "num_warps": 8, "BLOCK_M": 1024}
# The values `ksuite optimize --strategy search` may try.
TUNABLE_CHOICES = {"BLOCK_V": [1024, 2048, 4096, 8192, 16384], "num_warps": [4, 8, 16, 32], "BLOCK_M": [1024]}


@triton.jit
def row_loss_kernel(logits_ptr, targets_ptr, loss_ptr, V, stride_lm, stride_lv, stride_t,
                    BLOCK_V: tl.constexpr):
    pid = tl.program_id(0)
    row = logits_ptr + pid.to(tl.int64) * stride_lm

    # Online log-sum-exp: m is the max so far, s the sum of exp(x - m) so far, both float32.
    m = float("-inf")
    s = 0.0
    for start in range(0, V, BLOCK_V):
        offs_v = start + tl.arange(0, BLOCK_V)
        x = tl.load(row + offs_v * stride_lv, mask=offs_v < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    lse = m + tl.log(s)

    target = tl.load(targets_ptr + pid.to(tl.int64) * stride_t)
    target_logit = tl.load(row + target * stride_lv).to(tl.float32)
    tl.store(loss_ptr + pid, lse - target_logit)


@triton.jit
def mean_kernel(loss_ptr, out_ptr, M, BLOCK_M: tl.constexpr):
    acc = tl.zeros([BLOCK_M], dtype=tl.float32)
    for start in range(0, M, BLOCK_M):
        offs_m = start + tl.arange(0, BLOCK_M)
        acc += tl.load(loss_ptr + offs_m, mask=offs_m < M, other=0.0)
    mean = tl.sum(acc, axis=0) / M
    tl.store(out_ptr, mean.to(out_ptr.dtype.element_ty))


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    assert logits.dim() == 2 and logits.is_floating_point(), "logits must be [rows, vocab] floats"
    M, V = logits.shape
    assert targets.shape == (M,) and targets.dtype == torch.int64, "targets must be int64 [rows]"
    assert targets.device == logits.device
    assert M > 0 and V > 0
    # Precondition (not checked, a check would synchronise): 0 <= targets < V.
    row_loss = torch.empty((M,), device=logits.device, dtype=torch.float32)
    out = torch.empty((), device=logits.device, dtype=logits.dtype)
    BLOCK_V = min(TUNABLES["BLOCK_V"], triton.next_power_of_2(V))
    row_loss_kernel[(M,)](logits, targets, row_loss, V, logits.stride(0), logits.stride(1),
                          targets.stride(0), BLOCK_V=BLOCK_V, num_warps=TUNABLES["num_warps"])
    BLOCK_M = min(TUNABLES["BLOCK_M"], triton.next_power_of_2(M))
    mean_kernel[(1,)](row_loss, out, M, BLOCK_M=BLOCK_M, num_warps=4)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, targets):
        return cross_entropy(logits, targets)
