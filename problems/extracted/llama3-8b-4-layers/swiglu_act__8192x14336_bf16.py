"""swiglu_act at 8192x14336 bfloat16, extracted by `ksuite extract` from llama3-8b:4-layers
(bfloat16, batch 4 x 2048, forward, profiled on NVIDIA H200): 2.7 % of the step, 4 calls per step,
in layers.*.mlp.act.

Source: problems/swiglu_act.py, with the model's shape as the size constants.

SwiGLU activation: silu(g) * u, elementwise over two [rows, cols] tensors.

silu(g) = g * sigmoid(g). This is the gating step between the gate/up and the down projections of a
Llama-style MLP (the projections themselves are in fused_mlp).
"""

import torch
import torch.nn.functional as F

rows = 8192
cols = 14336


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
    "dtypes": ["bfloat16"],
    "shapes": [{"rows": 8192, "cols": 14336}],
    # the shape the model runs: what `ksuite bench` times
    "large_shapes": [{"rows": 8192, "cols": 14336}],
    "bound": "memory",
    "goal_pct_sol": 95,
    "small_shapes": [{"rows": 64, "cols": 256}],
    "edge_shapes": [{"rows": 1, "cols": 1}, {"rows": 37, "cols": 1000}, {"rows": 3, "cols": 4097}],
    "tolerances": {"float16": (2e-3, 3e-3), "bfloat16": (1e-2, 2.5e-2), "float32": (1e-7, 1e-6)},
    "bytes": lambda s, esize: 3 * s["rows"] * s["cols"] * esize,
    "flops": lambda s, esize: 5 * s["rows"] * s["cols"],
    "stability": ["tiny", "constant_rows"],
    "strided_inputs": True,
    "deterministic": True,
}
