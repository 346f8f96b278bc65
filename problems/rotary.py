"""Rotary position embedding (RoPE), rotate-half convention (GPT-NeoX, Llama).

out = x * cos + rotate_half(x) * sin, with rotate_half(x) = cat(-x[..., d/2:], x[..., :d/2]).
x is [batch, heads, seq, head_dim]; cos and sin are [seq, head_dim] tables passed as inputs (so a
kernel reads them), built the usual way: angle(pos, i) = pos * 10000^(-2i/d), repeated over both halves.
"""

import torch

batch_size = 2
num_heads = 16
seq_len = 1024
head_dim = 128


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Model(torch.nn.Module):
    def forward(self, x, cos, sin):
        return x * cos + rotate_half(x) * sin


class ModelLiger(Model):
    """Liger-Kernel's Triton RoPE (an optional baseline: pip install liger-kernel). Liger rotates q and k
    in one call, in place: k here is a one-head scratch tensor made once per shape (so x is never
    written and no extra kernel runs per call), which adds 1/num_heads to the work the op asks. As in a
    Hugging Face model, Liger first copies q from [batch, heads, seq, dim] into [batch, seq, heads, dim];
    where that layout is already x's (one position, or one head), x is copied instead, as an out-of-place
    caller must."""

    def forward(self, x, cos, sin):
        from liger_kernel.transformers.functional import liger_rope

        k = getattr(self, "_k", None)
        if k is None or k.shape != x[:, :1].shape or k.dtype != x.dtype or k.device != x.device:
            k = self._k = torch.zeros_like(x[:, :1])
        if x.transpose(1, 2).is_contiguous():  # one position or one head: Liger would rotate x itself
            x = x.clone()
        q, _ = liger_rope(x, k, cos, sin)
        return q


def get_inputs():
    x = torch.randn(batch_size, num_heads, seq_len, head_dim)
    inv_freq = 10000.0 ** (-torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = torch.outer(torch.arange(seq_len, dtype=torch.float32), inv_freq)
    angles = torch.cat((angles, angles), dim=-1)
    return [x, angles.cos(), angles.sin()]


def get_init_inputs():
    return []


META = {
    "bound": "memory",
    "goal_pct_sol": 90,  # what the best read+write kernels (norms, softmax) reach on Hopper
    "dtypes": ["float16", "bfloat16"],
    "small_shapes": [{"batch_size": 1, "num_heads": 2, "seq_len": 16, "head_dim": 32}],
    "shapes": [{"batch_size": 2, "num_heads": 16, "seq_len": 1024, "head_dim": 128}],
    # Workload (harness/workloads.py): the query heads of one sequence of `tokens` positions.
    "workload": lambda model, tokens: {"batch_size": 1, "num_heads": model["heads"], "seq_len": tokens,
                                       "head_dim": model["head_dim"]},
    # The one file users should take for every shape; goals on held-out shapes judge it alone.
    "recommended": "triton_family",
    # Heads are independent, and cos and sin ([seq, head_dim], inputs 1 and 2) broadcast over them, whole
    # in every slice: the float64 reference runs a few heads at a time where it would not fit the memory
    # bound whole (2x32x4096x128 in float16 sent it to the host: about 10 s of checks per solution on the
    # H200, 2026-12-01; harness/sliced_reference.py).
    "reference_split_dim": 1,
    "reference_whole_inputs": [1, 2],
    "large_shapes": [
        {"batch_size": 2, "num_heads": 32, "seq_len": 2048, "head_dim": 128},
        {"batch_size": 2, "num_heads": 32, "seq_len": 4096, "head_dim": 128},
    ],
    "edge_shapes": [
        {"batch_size": 1, "num_heads": 1, "seq_len": 1, "head_dim": 2},
        {"batch_size": 1, "num_heads": 3, "seq_len": 77, "head_dim": 64},
        {"batch_size": 2, "num_heads": 5, "seq_len": 33, "head_dim": 96},
    ],
    # Tolerances: 3x the error of the eager Model in each dtype against the float64 reference, measured on
    # the CPU and on an H200 at the small, edge, mid and large shapes (worst case over shapes: float16
    # |err| <= 1.7e-3 + 1e-3 |ref|, bfloat16 <= 1.4e-2 + 4e-3 |ref|, float32 <= 1.2e-7 + 1e-6 |ref|).
    # The atol term is set by cancellation in x * cos - x2 * sin (two terms of ~4, each rounded).
    "tolerances": {"float16": (5e-3, 3e-3), "bfloat16": (4e-2, 2.5e-2), "float32": (4e-7, 3e-6)},
    # read x, cos, sin once; write out once
    "bytes": lambda s, esize: (
        2 * s["batch_size"] * s["num_heads"] * s["seq_len"] * s["head_dim"]
        + 2 * s["seq_len"] * s["head_dim"]
    ) * esize,
    "flops": lambda s, esize: 3 * s["batch_size"] * s["num_heads"] * s["seq_len"] * s["head_dim"],
    # "large" (x100 on x, cos and sin) and "mixed" (rows up to x1000) overflow float16 products.
    "stability": ["tiny", "constant_rows"],
    "strided_inputs": True,
    "deterministic": True,
}
