"""Which registry problem a profiled unit is, and at which of its size constants.

Two levels, tried in order. A module call whose class is one op (RMSNorm, LayerNorm, our Rotary,
CausalAttention, SiLUMul, TokenCrossEntropy, nn.Softmax) is one unit, whatever aten ops it is written
with, so eager RMSNorm's five kernels land in one rmsnorm group. Otherwise the unit is the outermost
aten op under the innermost module (aten::linear in a q_proj, aten::scaled_dot_product_attention, ...),
mapped by the op's name and input shapes. Anything else keeps its op name and is "unmapped".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

LAYER_INDEX = re.compile(r"\.\d+(?=\.|$)")
TRACE_DTYPES = {"c10::BFloat16": "bfloat16", "c10::Half": "float16", "float": "float32", "double": "float64"}


@dataclass(frozen=True)
class Classified:
    key: tuple
    problem: str | None
    op: str
    module_path: str
    module_class: str
    shape: dict | None
    dtype: str | None
    inputs: str


def parse_module_label(name: str) -> tuple[str, str, list[tuple[tuple[int, ...], str]]]:
    """`ksuite.module::layers.0.mlp::GatedMLP::4x2048x4096:bfloat16` -> (path, class, [(shape, dtype)])."""
    _, path, cls, inputs = name.split("::", 3)
    parsed = []
    for item in filter(None, inputs.split(";")):
        dims, _, dtype = item.rpartition(":")
        parsed.append((tuple(int(d) for d in dims.split("x")) if dims else (), dtype))
    return path, cls, parsed


def _rows(x: tuple) -> int:
    return math.prod(x[:-1])


def _bhsd(x: tuple) -> dict | None:
    if len(x) != 4:
        return None
    return {"batch_size": x[0], "num_heads": x[1], "seq_len": x[2], "head_dim": x[3]}


def _rotary(inputs: list) -> dict | None:
    """q and k rotated in one call: as much work as one x of q's heads + k's heads."""
    if len(inputs) < 2 or len(inputs[0][0]) != 4:
        return None
    (q, _), (k, _) = inputs[:2]
    return {"batch_size": q[0], "num_heads": q[1] + k[1], "seq_len": q[2], "head_dim": q[3]}


def _norm_shape(inputs: list) -> dict | None:
    x = inputs[0][0] if inputs else ()
    return {"batch_size": _rows(x), "dim": x[-1]} if x else None


# class name test -> (problem, size constants from the module's (shape, dtype) inputs)
MODULE_RULES = (
    (lambda c: c.endswith("RMSNorm"), "rmsnorm", _norm_shape),
    (lambda c: c.endswith("LayerNorm"), "layernorm", _norm_shape),
    (lambda c: c == "Rotary", "rotary", _rotary),
    (lambda c: c == "CausalAttention", "attention_causal",
     lambda ins: _bhsd(ins[0][0]) if len(ins) >= 3 and ins[0][0] == ins[1][0] == ins[2][0] else None),
    (lambda c: c == "SiLUMul", "swiglu_act",
     lambda ins: {"rows": _rows(ins[0][0]), "cols": ins[0][0][-1]} if ins and ins[0][0] else None),
    (lambda c: c == "TokenCrossEntropy", "cross_entropy",
     lambda ins: {"batch_size": ins[0][0][0], "vocab_size": ins[0][0][1]} if ins and len(ins[0][0]) == 2 else None),
    (lambda c: c == "Softmax", "softmax", _norm_shape),
)


def _matmul(dims: list) -> dict | None:
    """aten::linear (x, W[N, K]), aten::mm / matmul (A, B[K, N]), aten::addmm (bias, A, B)."""
    return None if len(dims) < 2 else {"M": dims[0], "K": dims[1], "N": dims[2]}


def _linear(d):
    return [_rows(d[0]), d[0][-1], d[1][0]] if len(d) >= 2 and d[0] and len(d[1]) == 2 else []


def _mm(d):
    return [_rows(d[0]), d[0][-1], d[1][1]] if len(d) >= 2 and d[0] and len(d[1]) == 2 else []


OP_RULES = {  # outermost aten op -> (problem, size constants from its input dims)
    "aten::linear": ("matmul", lambda d: _matmul(_linear(d))),
    "aten::mm": ("matmul", lambda d: _matmul(_mm(d))),
    "aten::matmul": ("matmul", lambda d: _matmul(_mm(d))),
    "aten::addmm": ("matmul", lambda d: _matmul(_mm(d[1:]))),
    "aten::scaled_dot_product_attention": (
        "attention_causal", lambda d: _bhsd(tuple(d[0])) if len(d) >= 3 and d[0] == d[1] == d[2] else None),
    "aten::rms_norm": ("rmsnorm", lambda d: _norm_shape([(tuple(d[0]), "")]) if d and d[0] else None),
    "aten::layer_norm": ("layernorm", lambda d: _norm_shape([(tuple(d[0]), "")]) if d and d[0] else None),
    "aten::softmax": ("softmax", lambda d: _norm_shape([(tuple(d[0]), "")]) if d and d[0] else None),
    "aten::_softmax": ("softmax", lambda d: _norm_shape([(tuple(d[0]), "")]) if d and d[0] else None),
    "aten::cross_entropy_loss": (
        "cross_entropy", lambda d: {"batch_size": d[0][0], "vocab_size": d[0][1]} if d and len(d[0]) == 2 else None),
}


def _shape_key(shape: dict | None) -> tuple:
    return tuple(sorted(shape.items())) if shape else ()


def _dims_text(d: list) -> str:
    """[4, 28, 2048, 64] -> 4x28x2048x64; a tensor list's [[4, 28, 2048, 64], [...]] -> [4x28x2048x64,...]."""
    if d and all(isinstance(x, list) for x in d):
        return "[" + ",".join(_dims_text(x) for x in d) + "]"
    return "x".join(map(str, d))


def _inputs_text(dims: list, types: list) -> str:
    parts = [f"{_dims_text(d)}:{TRACE_DTYPES.get(t, t)}" for d, t in zip(dims, types) if d]
    return ";".join(parts)


def normalise_path(path: str) -> str:
    """A module path with its layer indices as wildcards (layers.3.mlp -> layers.*.mlp): one group for all layers."""
    return LAYER_INDEX.sub(".*", path)


def classify(module, top):
    """(the unit node, Classified) for the outermost op `top` under the innermost module range `module`
    (attribute.Node objects; module may be None)."""
    path, cls, inputs = parse_module_label(module.name) if module is not None else ("", "", [])
    for test, problem, shape_fn in MODULE_RULES:
        if cls and test(cls):
            shape = shape_fn(inputs)
            if shape is not None:
                dtype = inputs[0][1] if inputs else None
                text = ";".join(f"{'x'.join(map(str, s))}:{d}" for s, d in inputs)
                key = (problem, normalise_path(path), f"module:{cls}", _shape_key(shape), dtype)
                return module, Classified(key, problem, f"module:{cls}", path, cls, shape, dtype, text)
    dims = [list(d) for d in top.args.get("Input Dims", [])]
    types = list(top.args.get("Input type", []))
    dtype = next((TRACE_DTYPES[t] for t in types if t in TRACE_DTYPES), None)
    problem, shape = None, None
    if top.name in OP_RULES:
        problem, shape_fn = OP_RULES[top.name]
        shape = shape_fn(dims)
        problem = problem if shape else None
    text = _inputs_text(dims, types)
    key = (problem, normalise_path(path), top.name, _shape_key(shape) if shape else text, dtype)
    return top, Classified(key, problem, top.name, path, cls, shape, dtype, text)
