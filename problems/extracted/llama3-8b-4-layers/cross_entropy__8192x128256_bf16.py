"""cross_entropy at 8192x128256 bfloat16, extracted by `ksuite extract` from llama3-8b:4-layers
(bfloat16, batch 4 x 2048, forward, profiled on NVIDIA H200): 4.8 % of the step, 1 calls per step,
in loss.

Source: problems/cross_entropy.py, with the model's shape as the size constants.

Cross-entropy loss, forward only: mean over rows of logsumexp(logits[i]) - logits[i, target[i]].

The loss at the end of every language model, over vocabularies of 32k-256k entries. Each row is read
once to get its log-sum-exp (with a running max for stability) and the target logit, and the whole
[rows, vocab] matrix collapses to one number, so it is a read-only, memory-bound reduction.

Output: a 0-dim tensor in the logits' dtype, as torch.nn.functional.cross_entropy returns it. The
harness compares it with this Model run in float64 on the same (dtype-rounded) logits.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
vocab_size = 128256


class Model(nn.Module):
    """Cross-entropy written with plain ops, the way eager model code writes it."""

    def __init__(self):
        super().__init__()

    def forward(self, logits, targets):
        row_max = logits.max(dim=-1, keepdim=True).values
        lse = row_max.squeeze(-1) + torch.log(torch.exp(logits - row_max).sum(dim=-1))
        target_logit = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        return (lse - target_logit).mean()


class ModelFused(Model):
    """The same op through PyTorch's fused kernel. (On CPU, float16 F.cross_entropy sums the row
    losses in float16 and overflows to inf past ~6000 rows or with 'large' logits; CUDA's does not.)"""

    def forward(self, logits, targets):
        return F.cross_entropy(logits, targets)


class ModelLiger(Model):
    """Liger-Kernel's Triton cross-entropy (an optional baseline: pip install liger-kernel). No input
    requires a gradient here, so it computes the loss only; its mean is already in the logits' dtype."""

    def forward(self, logits, targets):
        from liger_kernel.transformers.functional import liger_cross_entropy

        return liger_cross_entropy(logits, targets)


def get_inputs():
    return [torch.randn(batch_size, vocab_size), torch.randint(0, vocab_size, (batch_size,))]


def get_init_inputs():
    return []


META = {
    "dtypes": ["bfloat16"],
    "shapes": [{"batch_size": 8192, "vocab_size": 128256}],
    # the shape the model runs: what `ksuite bench` times
    "large_shapes": [{"batch_size": 8192, "vocab_size": 128256}],
    "bound": "memory",
    "goal_pct_sol": 93,
    "small_shapes": [{"batch_size": 64, "vocab_size": 256}],
    "edge_shapes": [{"batch_size": 1, "vocab_size": 1}, {"batch_size": 3, "vocab_size": 1000},
                    {"batch_size": 37, "vocab_size": 4097}, {"batch_size": 5, "vocab_size": 33000}],
    "tolerances": {"float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2), "float32": (5e-7, 5e-7)},
    "bytes": lambda s, esize: s["batch_size"] * s["vocab_size"] * esize + 8 * s["batch_size"] + esize,
    "flops": lambda s, esize: 4 * s["batch_size"] * s["vocab_size"],
    "stability": ["large", "tiny", "mixed", "constant_rows"],
    "strided_inputs": True,
    "deterministic": True,
}
