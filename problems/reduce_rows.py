"""Row sums: y[i] = sum_j x[i, j], x [rows, cols] -> y [rows], output in the input's dtype.

The simplest reduction, and the building block of norms, losses and pooling. It reads the whole input
and writes almost nothing, so its speed of light is pure read bandwidth; the kernel has to keep enough
loads in flight and accumulate in float32 (a half-precision accumulator loses digits on long rows).
x.sum(-1) is already PyTorch's fused op, so there is no separate ModelFused.
"""

import torch
import torch.nn as nn

rows = 1024
cols = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.sum(dim=-1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []


META = {
    "bound": "memory",
    "goal_pct_sol": 93,  # what the best read-mostly kernels (sums, losses) reach on Hopper
    "dtypes": ["float16", "bfloat16"],
    "small_shapes": [{"rows": 64, "cols": 256}],
    "shapes": [{"rows": 1024, "cols": 4096}],
    # Workload (harness/workloads.py): a statistic per token over the hidden size.
    "workload": lambda model, tokens: {"rows": tokens, "cols": model["hidden"]},
    # The one file users should take for every shape; goals on held-out shapes judge it alone.
    "recommended": "triton_family",
    "large_shapes": [{"rows": 8192, "cols": 8192}, {"rows": 16384, "cols": 4096}],
    "edge_shapes": [{"rows": 1, "cols": 1}, {"rows": 3, "cols": 1000}, {"rows": 37, "cols": 4097}],
    # Eager rounds the exact sum once: worst max|d|/(1+|ref|) over small, mid, edge and large shapes
    # (CPU) is fp16 4.8e-4, bf16 3.8e-3 (half an ulp), fp32 1.9e-5 (summation order); set at about
    # 3-4x that, which still admits a correct kernel that lands one ulp off. An fp16 accumulator
    # errs 0.33 sequentially and 5.7e-2 as 1024 lanes plus a tree (bf16: 3.3 and 0.52) and fails.
    "tolerances": {"float16": (2e-3, 2e-3), "bfloat16": (1.5e-2, 1.5e-2), "float32": (6e-5, 6e-5)},
    "bytes": lambda s, esize: (s["rows"] * s["cols"] + s["rows"]) * esize,
    "flops": lambda s, esize: s["rows"] * s["cols"],
    # No "mixed": rows scaled by up to 1e3 sum to ~6e4 and beyond, past float16's largest value.
    "stability": ["large", "tiny", "constant_rows"],
    "strided_inputs": True,
    "deterministic": True,
}
