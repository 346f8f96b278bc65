"""rmsnorm at 8192x4096 bfloat16, extracted by `ksuite extract` from llama3-8b:4-layers
(bfloat16, batch 4 x 2048, forward, profiled on NVIDIA H200): 9.6 % of the step, 9 calls per step,
in layers.*.input_layernorm, layers.*.post_attention_layernorm, norm.

Source: problems/rmsnorm.py, with the model's shape as the size constants.

RMSNorm over the last dimension: y = x * rsqrt(mean(x^2, -1) + eps) * weight.

The normalisation in front of every attention and MLP block of LLaMA-style transformers. It reads a
row, reduces it to one number and rescales it, so it is purely memory-bound: a good kernel moves each
byte once and runs near copy bandwidth, while the plain PyTorch composition below launches five
kernels and makes several round trips through device memory.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
dim = 4096
eps = 1e-6


class Model(nn.Module):
    """RMSNorm written with plain ops, the way eager model code writes it (Hugging Face's
    LlamaRMSNorm): square and average in float32, since x^2 overflows float16 for |x| > 256."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        h = x.to(torch.promote_types(x.dtype, torch.float32))  # float32, or float64 for the reference
        rstd = torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (h * rstd * self.weight).to(x.dtype)


class ModelFused(Model):
    """The same op through PyTorch's fused kernel."""

    def forward(self, x):
        return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)


class ModelLiger(Model):
    """Liger-Kernel's Triton RMSNorm (an optional baseline: pip install liger-kernel), as Liger patches it
    into Llama: casting_mode "llama" (float32 statistics, x rounded to the dtype before the weight)."""

    def forward(self, x):
        from liger_kernel.transformers.functional import liger_rms_norm

        return liger_rms_norm(x, self.weight, self.eps)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim, eps]


META = {
    "dtypes": ["bfloat16"],
    "shapes": [{"batch_size": 8192, "dim": 4096}],
    # the shape the model runs: what `ksuite bench` times
    "large_shapes": [{"batch_size": 8192, "dim": 4096}],
    "bound": "memory",
    "goal_pct_sol": 90,
    "small_shapes": [{"batch_size": 64, "dim": 256}],
    "edge_shapes": [{"batch_size": 1, "dim": 1}, {"batch_size": 3, "dim": 1000},
                    {"batch_size": 37, "dim": 4097}],
    "tolerances": {"float16": (1.5e-3, 1.5e-3), "bfloat16": (1.5e-2, 1.5e-2), "float32": (1e-6, 1e-6)},
    "bytes": lambda s, esize: (2 * s["batch_size"] * s["dim"] + s["dim"]) * esize,
    "flops": lambda s, esize: 4 * s["batch_size"] * s["dim"],
    "stability": ["large", "tiny", "mixed", "constant_rows"],
    "strided_inputs": True,
    "deterministic": True,
}
