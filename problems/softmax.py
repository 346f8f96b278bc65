"""Softmax along the last dimension: y = exp(x - max(x)) / sum(exp(x - max(x))).

The normalisation inside attention and at the output of every classifier. It needs the row maximum
(for stability) and the row sum of exponentials before it can write anything, so a naive kernel reads
each row three times; an online (running max and sum) kernel reads it twice, or once when the row
fits on chip. Memory-bound.
"""

import torch
import torch.nn as nn

batch_size = 1024
dim = 4096


class Model(nn.Module):
    """Softmax written with plain ops, the way eager model code writes it."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        z = torch.exp(x - x.max(dim=-1, keepdim=True).values)
        return z / z.sum(dim=-1, keepdim=True)


class ModelFused(Model):
    """The same op through PyTorch's fused kernel."""

    def forward(self, x):
        return torch.softmax(x, dim=-1)


class ModelLiger(Model):
    """Liger-Kernel's Triton softmax (an optional baseline: pip install liger-kernel)."""

    def forward(self, x):
        from liger_kernel.transformers.functional import liger_softmax

        return liger_softmax(x)

    @staticmethod
    def unsupported(sizes):
        """liger_softmax puts a row in one block of at most 65536 columns and raises past that."""
        if sizes["dim"] > 65536:
            return f"Liger's softmax takes rows of at most 65536 columns (its own limit), not {sizes['dim']}"
        return None


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


META = {
    "bound": "memory",
    "goal_pct_sol": 90,  # what the best read+write kernels (norms, softmax) reach on Hopper
    "dtypes": ["float16", "bfloat16"],
    "small_shapes": [{"batch_size": 64, "dim": 256}],
    "shapes": [{"batch_size": 1024, "dim": 4096}],
    # Workload (harness/workloads.py): next-token probabilities over the vocabulary, one row per token
    # (shapes past workloads.MAX_BYTES, long prompts over 256k vocabularies, are left out).
    "workload": lambda model, tokens: {"batch_size": tokens, "dim": model["vocab"]},
    # The one file users should take for every shape; goals on held-out shapes judge it alone.
    "recommended": "triton_family",
    "large_shapes": [{"batch_size": 4096, "dim": 4096}, {"batch_size": 8192, "dim": 8192}],
    "edge_shapes": [{"batch_size": 1, "dim": 1}, {"batch_size": 3, "dim": 1000},
                    {"batch_size": 37, "dim": 4097}],
    # Outputs are probabilities (~1/dim, many fp16 subnormals), so rtol does the work and atol only
    # covers the tiny ones. Eager Model vs its float64 run over 4 seeds of small, mid and edge shapes,
    # the large shapes and the stability transforms (CPU): it needs rtol 9e-4 (fp16), 1.8e-2 (bf16),
    # 3.8e-7 (fp32; fused 1.1e-6) at these atols and uses at most 0.35 of these tolerances. Eager is
    # loose because exp() gets x - max already rounded to the dtype. A sequential fp16 accumulator
    # for the sum errs 0.17 relative (bf16: 1.8) and fails.
    "tolerances": {"float16": (1e-5, 5e-3), "bfloat16": (1e-5, 6e-2), "float32": (1e-9, 3e-6)},
    "bytes": lambda s, esize: 2 * s["batch_size"] * s["dim"] * esize,
    "flops": lambda s, esize: 5 * s["batch_size"] * s["dim"],  # max, subtract, exp, sum, divide
    "stability": ["large", "tiny", "mixed", "constant_rows"],
    "strided_inputs": True,
    "deterministic": True,
}
