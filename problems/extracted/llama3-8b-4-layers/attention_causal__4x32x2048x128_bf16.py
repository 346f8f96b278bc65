"""attention_causal at 4x32x2048x128 bfloat16, extracted by `ksuite extract` from llama3-8b:4-layers
(bfloat16, batch 4 x 2048, forward, profiled on NVIDIA H200): 2.8 % of the step, 4 calls per step,
in layers.*.self_attn.attn.

Source: problems/attention_causal.py, with the model's shape as the size constants.

Causal scaled dot-product attention, q, k, v [batch, heads, seq, head_dim].

out = softmax(q @ k^T / sqrt(head_dim) + causal_mask) @ v, query i attending to keys 0..i.
The softmax runs in float32 (or wider) and its result is cast back to the input dtype before @ v,
as eager attention code does.
"""

import math

import torch
import torch.nn.functional as F

batch_size = 4
num_heads = 32
seq_len = 2048
head_dim = 128


class Model(torch.nn.Module):
    def forward(self, q, k, v):
        seq = q.shape[-2]
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
        future = torch.ones(seq, seq, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
        # float32 for half inputs; float64 stays float64 (the harness's reference)
        probs = torch.softmax(scores.to(torch.promote_types(scores.dtype, torch.float32)), dim=-1)
        return probs.to(q.dtype) @ v


class ModelFused(torch.nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []


META = {
    "dtypes": ["bfloat16"],
    "shapes": [{"batch_size": 4, "num_heads": 32, "seq_len": 2048, "head_dim": 128}],
    # the shape the model runs: what `ksuite bench` times
    "large_shapes": [{"batch_size": 4, "num_heads": 32, "seq_len": 2048, "head_dim": 128}],
    "bound": "compute",
    "small_shapes": [{"batch_size": 1, "num_heads": 2, "seq_len": 64, "head_dim": 32}],
    "edge_shapes": [
        {"batch_size": 1, "num_heads": 1, "seq_len": 1, "head_dim": 64},
        {"batch_size": 1, "num_heads": 3, "seq_len": 77, "head_dim": 64},
        {"batch_size": 2, "num_heads": 1, "seq_len": 130, "head_dim": 80},
    ],
    "tolerances": {"float16": (5e-3, 5e-3), "bfloat16": (4e-2, 4e-2), "float32": (5e-6, 1e-5)},
    "bytes": lambda s, esize: 4 * s["batch_size"] * s["num_heads"] * s["seq_len"] * s["head_dim"] * esize,
    "flops": lambda s, esize: 4 * s["batch_size"] * s["num_heads"] * s["seq_len"] ** 2 * s["head_dim"] // 2,
    "stability": ["tiny"],
    "strided_inputs": True,
    "deterministic": True,
}
