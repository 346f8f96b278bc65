"""A Llama-style decoder in plain PyTorch: RMSNorm, rotary, causal attention with grouped KV heads,
SwiGLU MLP, LM head and cross-entropy. Random weights; sizes from the published config.json files."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn

from suite.profile.layers import CausalAttention, GatedMLP, RMSNorm, Rotary, TokenCrossEntropy, lm_loss, repeat_kv


@dataclass(frozen=True)
class LlamaConfig:
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    layers: int
    vocab: int
    max_seq: int = 8192
    eps: float = 1e-5
    rope_theta: float = 500000.0

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


SIZES = {
    "llama3-8b": LlamaConfig(hidden=4096, intermediate=14336, heads=32, kv_heads=8, layers=32, vocab=128256),
    "tiny": LlamaConfig(hidden=64, intermediate=128, heads=4, kv_heads=2, layers=2, vocab=256, max_seq=64),
}


class Attention(nn.Module):
    def __init__(self, c: LlamaConfig):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = c.heads, c.kv_heads, c.head_dim
        self.q_proj = nn.Linear(c.hidden, c.heads * c.head_dim, bias=False)
        self.k_proj = nn.Linear(c.hidden, c.kv_heads * c.head_dim, bias=False)
        self.v_proj = nn.Linear(c.hidden, c.kv_heads * c.head_dim, bias=False)
        self.o_proj = nn.Linear(c.heads * c.head_dim, c.hidden, bias=False)
        self.rotary = Rotary(c.head_dim, c.max_seq, c.rope_theta)
        self.attn = CausalAttention()

    def forward(self, x):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = self.rotary(q, k)
        groups = self.heads // self.kv_heads
        out = self.attn(q, repeat_kv(k, groups), repeat_kv(v, groups))
        return self.o_proj(out.transpose(1, 2).reshape(b, s, self.heads * self.head_dim))


class DecoderLayer(nn.Module):
    def __init__(self, c: LlamaConfig):
        super().__init__()
        self.input_layernorm = RMSNorm(c.hidden, c.eps)
        self.self_attn = Attention(c)
        self.post_attention_layernorm = RMSNorm(c.hidden, c.eps)
        self.mlp = GatedMLP(c.hidden, c.intermediate)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class Llama(nn.Module):
    """forward(tokens, targets) -> (logits, loss)."""

    def __init__(self, c: LlamaConfig):
        super().__init__()
        self.config = c
        self.embed_tokens = nn.Embedding(c.vocab, c.hidden)
        self.layers = nn.ModuleList(DecoderLayer(c) for _ in range(c.layers))
        self.norm = RMSNorm(c.hidden, c.eps)
        self.lm_head = nn.Linear(c.hidden, c.vocab, bias=False)
        self.loss = TokenCrossEntropy()
        init_weights(self)

    def forward(self, tokens, targets):
        x = self.embed_tokens(tokens)
        for layer in self.layers:
            x = layer(x)
        logits = self.lm_head(self.norm(x))
        return logits, lm_loss(logits, targets, self.loss)


def init_weights(model: nn.Module, std: float = 0.02) -> None:
    """Hugging Face's initialisation (normal(0, 0.02) for linear and embedding weights, norms at one):
    activations keep a trained model's scale, and it is fast on a GPU (no kaiming bounds per layer)."""
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                module.weight.normal_(0.0, std)
                if getattr(module, "bias", None) is not None:
                    module.bias.zero_()
