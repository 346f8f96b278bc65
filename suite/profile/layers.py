"""The building blocks of the bundled models, one module per op a kernel can replace.

Each op a registry problem covers (RMSNorm, rotary, causal attention, SiLU-and-multiply, the loss) is
its own nn.Module, so the profiler can name the module an op ran in, and `verify` can swap exactly that
module for a solution (suite/profile/swap.py). The maths is what Hugging Face's Llama and GPT-2 do.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    """LlamaRMSNorm: statistics in float32, rounded to the input dtype before the weight."""

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        h = x.to(torch.promote_types(x.dtype, torch.float32))
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(x.dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Rotary(nn.Module):
    """Rotary position embedding (rotate-half, as Llama) applied to q and k, [batch, heads, seq, head_dim]."""

    def __init__(self, head_dim: int, max_seq: int, theta: float = 10000.0):
        super().__init__()
        inv_freq = theta ** (-torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
        angles = torch.outer(torch.arange(max_seq, dtype=torch.float32), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def tables(self, seq: int, dtype: torch.dtype):
        return self.cos[:seq].to(dtype), self.sin[:seq].to(dtype)

    def forward(self, q, k):
        cos, sin = self.tables(q.shape[-2], q.dtype)
        return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


class CausalAttention(nn.Module):
    """softmax(q k^T / sqrt(d) + causal mask) v through SDPA; q, k, v have one head count (GQA's keys and
    values are repeated before, as Hugging Face's repeat_kv does)."""

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class SiLUMul(nn.Module):
    """SwiGLU's gate: silu(g) * u."""

    def forward(self, g, u):
        return F.silu(g) * u


class TokenCrossEntropy(nn.Module):
    """Mean cross-entropy of [rows, vocab] logits against int64 targets."""

    def forward(self, logits, targets):
        return F.cross_entropy(logits, targets)


class GatedMLP(nn.Module):
    """Llama's MLP: down(silu(gate(x)) * up(x))."""

    def __init__(self, hidden: int, intermediate: int):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, hidden, bias=False)
        self.act = SiLUMul()

    def forward(self, x):
        return self.down_proj(self.act(self.gate_proj(x), self.up_proj(x)))


def repeat_kv(x, groups: int):
    """[batch, kv_heads, seq, d] -> [batch, kv_heads * groups, seq, d], each kv head next to its queries."""
    return x if groups == 1 else x.repeat_interleave(groups, dim=1)


def lm_loss(logits, targets, loss_fn: nn.Module):
    """The loss over every position; `targets` are already the next tokens (the inputs are random, so
    shifting would only add a copy of the logits that real training code also avoids)."""
    return loss_fn(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
