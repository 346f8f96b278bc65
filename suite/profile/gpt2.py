"""A GPT-2-style decoder in plain PyTorch: LayerNorm, learned positions, causal attention, GELU MLP,
an LM head tied to the embedding and cross-entropy. Random weights; sizes from OpenAI's GPT-2 configs."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn

from suite.profile.layers import CausalAttention, TokenCrossEntropy, lm_loss
from suite.profile.llama import init_weights


@dataclass(frozen=True)
class GPT2Config:
    hidden: int
    heads: int
    layers: int
    vocab: int = 50257
    max_seq: int = 1024
    eps: float = 1e-5

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


SIZES = {
    "gpt2": GPT2Config(hidden=768, heads=12, layers=12),
    "gpt2-xl": GPT2Config(hidden=1600, heads=25, layers=48),
    "gpt2-tiny": GPT2Config(hidden=64, heads=4, layers=2, vocab=256, max_seq=64),
}


class Block(nn.Module):
    def __init__(self, c: GPT2Config):
        super().__init__()
        self.heads, self.head_dim = c.heads, c.head_dim
        self.ln_1 = nn.LayerNorm(c.hidden, eps=c.eps)
        self.qkv = nn.Linear(c.hidden, 3 * c.hidden)
        self.attn = CausalAttention()
        self.proj = nn.Linear(c.hidden, c.hidden)
        self.ln_2 = nn.LayerNorm(c.hidden, eps=c.eps)
        self.fc = nn.Linear(c.hidden, 4 * c.hidden)
        self.act = nn.GELU(approximate="tanh")
        self.fc_proj = nn.Linear(4 * c.hidden, c.hidden)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln_1(x)).view(b, s, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        x = x + self.proj(self.attn(q, k, v).transpose(1, 2).reshape(b, s, d))
        return x + self.fc_proj(self.act(self.fc(self.ln_2(x))))


class GPT2(nn.Module):
    """forward(tokens, targets) -> (logits, loss)."""

    def __init__(self, c: GPT2Config):
        super().__init__()
        self.config = c
        self.wte = nn.Embedding(c.vocab, c.hidden)
        self.wpe = nn.Embedding(c.max_seq, c.hidden)
        self.h = nn.ModuleList(Block(c) for _ in range(c.layers))
        self.ln_f = nn.LayerNorm(c.hidden, eps=c.eps)
        self.lm_head = nn.Linear(c.hidden, c.vocab, bias=False)
        self.loss = TokenCrossEntropy()
        init_weights(self)
        self.lm_head.weight = self.wte.weight  # tied, as GPT-2

    def forward(self, tokens, targets):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.wte(tokens) + self.wpe(positions)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return logits, lm_loss(logits, targets, self.loss)
