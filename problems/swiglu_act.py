"""SwiGLU activation: silu(g) * u, elementwise over two [rows, cols] tensors.

silu(g) = g * sigmoid(g). This is the gating step between the gate/up and the down projections of a
Llama-style MLP (the projections themselves are in fused_mlp).
"""

import torch
import torch.nn.functional as F

rows = 4096
cols = 11008


class Model(torch.nn.Module):
    def forward(self, g, u):
        return g * torch.sigmoid(g) * u


class ModelFused(torch.nn.Module):
    def forward(self, g, u):
        return F.silu(g) * u


class ModelLiger(torch.nn.Module):
    """Liger-Kernel's Triton SiLU-and-multiply (an optional baseline: pip install liger-kernel)."""

    def forward(self, g, u):
        from liger_kernel.transformers.functional import liger_swiglu

        return liger_swiglu(g, u)


def get_inputs():
    return [torch.randn(rows, cols), torch.randn(rows, cols)]


def get_init_inputs():
    return []


META = {
    "bound": "memory",
    "goal_pct_sol": 95,  # a plain elementwise op: copy speed, less only the tail
    "dtypes": ["bfloat16", "float16"],
    "small_shapes": [{"rows": 64, "cols": 256}],
    "shapes": [{"rows": 4096, "cols": 11008}],
    # Workload (harness/workloads.py): the MLP's gate, per token over the intermediate size.
    "workload": lambda model, tokens: {"rows": tokens, "cols": model["intermediate"]},
    # The one file users should take for every shape; goals on held-out shapes judge it alone.
    "recommended": "triton_family",
    "large_shapes": [{"rows": 8192, "cols": 14336}],
    "edge_shapes": [{"rows": 1, "cols": 1}, {"rows": 37, "cols": 1000}, {"rows": 3, "cols": 4097}],
    # Tolerances: about 3x the error of the eager Model in each dtype against the float64 reference,
    # measured on the CPU and on an H200 at every shape (worst case: float16 |err| <= 6e-4 + 1e-3 |ref|,
    # bfloat16 <= 3.1e-3 + 8e-3 |ref|, float32 <= 1e-6 |ref|).
    "tolerances": {"float16": (2e-3, 3e-3), "bfloat16": (1e-2, 2.5e-2), "float32": (1e-7, 1e-6)},
    # read g and u once, write out once
    "bytes": lambda s, esize: 3 * s["rows"] * s["cols"] * esize,
    # exp, add, divide, two multiplies per element
    "flops": lambda s, esize: 5 * s["rows"] * s["cols"],
    # "large" (x100: silu(g) * u up to ~2e5) and "mixed" (rows up to x1000) overflow float16.
    "stability": ["tiny", "constant_rows"],
    "strided_inputs": True,
    "deterministic": True,
}
