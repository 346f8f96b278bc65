"""Which modules of a model a solution can replace, and the wrappers that call the solution there.

The mapping (one rule per registry problem; the wrapper keeps the module's own parameters):
  rmsnorm           a module whose class name ends in RMSNorm (ours, LlamaRMSNorm, Qwen2RMSNorm, ...);
                    rows = every position, the solution's ModelNew(dim, eps) gets the module's weight
  layernorm         torch.nn.LayerNorm (and *LayerNorm classes with weight, bias, eps); weight and bias
  rotary            our Rotary (q and k, [batch, heads, seq, head_dim]): the solution rotates q, then k
  attention_causal  our CausalAttention (q, k, v with one head count; GQA keys repeated before it)
  swiglu_act        our SiLUMul, silu(g) * u over [positions, intermediate]
  fused_mlp         a module with gate_proj, up_proj, down_proj bias-free Linears (our GatedMLP,
                    LlamaMLP): the solution's ModelNew(hidden, intermediate) with those three weights
  matmul            torch.nn.Linear: x [positions, in] @ W^T, W^T made contiguous once, bias added after
  cross_entropy     our TokenCrossEntropy, mean loss of [positions, vocab] logits
  softmax           torch.nn.Softmax over the last dimension
Functional calls inside other modules (Hugging Face's apply_rotary_pos_emb, its attention functions) are
not swapped: only modules are, so what changed is always a named module path.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn as nn

from suite.profile import layers


def _flat(x, cols):
    return x.reshape(-1, cols)


class NormSwap(nn.Module):
    def __init__(self, impl, original):
        super().__init__()
        self.impl = impl
        self.impl.weight = original.weight
        if getattr(original, "bias", None) is not None and hasattr(impl, "bias"):
            self.impl.bias = original.bias

    def forward(self, x):
        return self.impl(_flat(x, x.shape[-1])).reshape(x.shape)


class RotarySwap(nn.Module):
    def __init__(self, impl, original):
        super().__init__()
        self.impl, self.original = impl, original

    def forward(self, q, k):
        cos, sin = self.original.tables(q.shape[-2], q.dtype)
        return self.impl(q, cos, sin), self.impl(k, cos, sin)


class CallSwap(nn.Module):
    """The solution called with the module's own arguments (attention, the loss)."""

    def __init__(self, impl, original):
        super().__init__()
        self.impl = impl

    def forward(self, *args):
        return self.impl(*args)


class RowsSwap(nn.Module):
    """Elementwise or row-wise ops: every argument flattened to [rows, last dim] and back."""

    def __init__(self, impl, original):
        super().__init__()
        self.impl = impl

    def forward(self, *args):
        shape = args[0].shape
        return self.impl(*(_flat(a, shape[-1]) for a in args)).reshape(shape)


class LinearSwap(nn.Module):
    def __init__(self, impl, original):
        super().__init__()
        self.impl, self.bias = impl, original.bias
        self.register_buffer("weight_t", original.weight.detach().t().contiguous(), persistent=False)

    def forward(self, x):
        y = self.impl(_flat(x, x.shape[-1]), self.weight_t).reshape(*x.shape[:-1], self.weight_t.shape[1])
        return y if self.bias is None else y + self.bias


class MLPSwap(nn.Module):
    def __init__(self, impl, original):
        super().__init__()
        self.impl = impl
        for name in ("gate_proj", "up_proj", "down_proj"):
            getattr(impl, name).weight = getattr(original, name).weight

    def forward(self, x):
        return self.impl(_flat(x, x.shape[-1])).reshape(x.shape)


def _is_gated_mlp(m) -> bool:
    parts = [getattr(m, n, None) for n in ("gate_proj", "up_proj", "down_proj")]
    return all(isinstance(p, nn.Linear) and p.bias is None for p in parts)


def _eps(m) -> float:
    return float(getattr(m, "eps", getattr(m, "variance_epsilon", 1e-6)))


def _dims(inputs):
    return [tuple(t.shape) for t in inputs if isinstance(t, torch.Tensor)]


@dataclass(frozen=True)
class Rule:
    problem: str
    matches: Callable[[nn.Module], bool]
    wrapper: type
    init_args: Callable[[nn.Module], list]  # the solution's ModelNew(*init_args)
    shape: Callable[[nn.Module, list], dict | None]  # the problem's size constants from the call's inputs


def _norm_shape(m, dims):
    return {"batch_size": math.prod(dims[0][:-1]), "dim": dims[0][-1]} if dims else None


RULES = (
    Rule("rmsnorm", lambda m: type(m).__name__.endswith("RMSNorm") and hasattr(m, "weight"), NormSwap,
         lambda m: [m.weight.shape[0], _eps(m)], _norm_shape),
    Rule("layernorm", lambda m: type(m).__name__.endswith("LayerNorm") and getattr(m, "weight", None) is not None
         and getattr(m, "bias", None) is not None, NormSwap, lambda m: [m.weight.shape[0], _eps(m)], _norm_shape),
    Rule("rotary", lambda m: isinstance(m, layers.Rotary), RotarySwap, lambda m: [],
         lambda m, d: {"batch_size": d[0][0], "num_heads": d[0][1] + d[1][1], "seq_len": d[0][2],
                       "head_dim": d[0][3]}),
    Rule("attention_causal", lambda m: isinstance(m, layers.CausalAttention), CallSwap, lambda m: [],
         lambda m, d: dict(zip(("batch_size", "num_heads", "seq_len", "head_dim"), d[0]))),
    Rule("swiglu_act", lambda m: isinstance(m, layers.SiLUMul), RowsSwap, lambda m: [],
         lambda m, d: {"rows": math.prod(d[0][:-1]), "cols": d[0][-1]}),
    Rule("fused_mlp", _is_gated_mlp, MLPSwap, lambda m: [m.gate_proj.in_features, m.gate_proj.out_features],
         lambda m, d: {"tokens": math.prod(d[0][:-1]), "hidden": d[0][-1], "intermediate": m.gate_proj.out_features}),
    Rule("matmul", lambda m: isinstance(m, nn.Linear), LinearSwap, lambda m: [],
         lambda m, d: {"M": math.prod(d[0][:-1]), "K": d[0][-1], "N": m.out_features}),
    Rule("cross_entropy", lambda m: isinstance(m, layers.TokenCrossEntropy), CallSwap, lambda m: [],
         lambda m, d: {"batch_size": d[0][0], "vocab_size": d[0][1]}),
    Rule("softmax", lambda m: isinstance(m, nn.Softmax) and m.dim in (-1, None), RowsSwap, lambda m: [],
         _norm_shape),
)
RULE_OF = {r.problem: r for r in RULES}


@dataclass(frozen=True)
class Site:
    """One module a solution of `problem` could replace, with the shape it runs at."""

    path: str
    problem: str
    shape: dict
    dtype: str


def discover(model: nn.Module, run: Callable[[], object]) -> list[Site]:
    """Every replaceable module and its shape, from one forward pass with hooks (a module may match
    several rules: a GatedMLP is fused_mlp, and its Linears are matmul)."""
    found: dict[tuple, Site] = {}
    handles = []
    for path, module in model.named_modules():
        for rule in RULES:
            if not rule.matches(module):
                continue

            def hook(mod, args, rule=rule, path=path):
                dims = _dims(args)
                shape = rule.shape(mod, dims) if dims else None
                tensor = next((a for a in args if isinstance(a, torch.Tensor) and a.is_floating_point()), None)
                if shape and tensor is not None:
                    dtype = str(tensor.dtype).removeprefix("torch.")
                    found.setdefault((path, rule.problem), Site(path, rule.problem, shape, dtype))
            handles.append(module.register_forward_pre_hook(hook))
    try:
        with torch.no_grad():
            run()
    finally:
        for h in handles:
            h.remove()
    return list(found.values())


def build(site: Site, solution_cls: type, model: nn.Module) -> nn.Module:
    """The wrapper that runs `solution_cls` in place of the module at `site.path`."""
    rule = RULE_OF[site.problem]
    original = model.get_submodule(site.path)
    param = next(original.parameters(), None)
    device = param.device if param is not None else _first_buffer_device(original)
    with torch.device(device):
        impl = solution_cls(*rule.init_args(original))
    dtype = param.dtype if param is not None else None
    if dtype is not None:
        impl = impl.to(dtype)
    return rule.wrapper(impl, original)


def _first_buffer_device(module):
    buf = next(module.buffers(), None)
    return buf.device if buf is not None else torch.device("cpu")


def replace(model: nn.Module, path: str, new: nn.Module) -> nn.Module:
    """Put `new` at `path`; returns what was there."""
    parent_path, _, name = path.rpartition(".")
    parent = model.get_submodule(parent_path) if parent_path else model
    old = getattr(parent, name)
    setattr(parent, name, new)
    return old
