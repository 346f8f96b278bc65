"""Workload shapes: the sizes real models run an op at, split once into a tuning set and a held-out set.

META's small/mid/large shapes check correctness and give quick numbers; speed claims are judged on the
shapes users have. A problem's META["workload"] maps one model configuration and a token count to the
problem's size constants (a dict, a list of dicts, or None where the op does not occur):

    "workload": lambda model, tokens: {"batch_size": tokens, "dim": model["hidden"]},

Each model of MODELS gets four token counts, one from each band of TOKEN_BANDS, picked by a hash of the
model's name (so the catalogue, not a person, decides); a problem may add its own shapes (META
"workload_extra", e.g. GPU MODE's benchmark sizes). Shapes over MAX_BYTES are left out. The split is a
hash of the shape itself, so it never changes when models are added, and the held-out set is topped up
from the tuning set (lowest hash first) to at least MIN_HELDOUT shapes. Tuning (`ksuite optimize`) sees
only the tuning set; goals and README tables use the held-out set.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

# Published configurations (config.json of each model on the Hugging Face hub).
MODELS = (
    {"name": "llama-3-8b", "hidden": 4096, "intermediate": 14336, "heads": 32, "kv_heads": 8, "head_dim": 128,
     "vocab": 128256},
    {"name": "llama-3-70b", "hidden": 8192, "intermediate": 28672, "heads": 64, "kv_heads": 8, "head_dim": 128,
     "vocab": 128256},
    {"name": "llama-2-7b", "hidden": 4096, "intermediate": 11008, "heads": 32, "kv_heads": 32, "head_dim": 128,
     "vocab": 32000},
    {"name": "mistral-7b", "hidden": 4096, "intermediate": 14336, "heads": 32, "kv_heads": 8, "head_dim": 128,
     "vocab": 32000},
    {"name": "qwen2.5-7b", "hidden": 3584, "intermediate": 18944, "heads": 28, "kv_heads": 4, "head_dim": 128,
     "vocab": 151936},
    {"name": "qwen2.5-72b", "hidden": 8192, "intermediate": 29568, "heads": 64, "kv_heads": 8, "head_dim": 128,
     "vocab": 151936},
    {"name": "gemma-2-2b", "hidden": 2304, "intermediate": 9216, "heads": 8, "kv_heads": 4, "head_dim": 256,
     "vocab": 256000},
    {"name": "gemma-2-9b", "hidden": 3584, "intermediate": 14336, "heads": 16, "kv_heads": 8, "head_dim": 256,
     "vocab": 256000},
    {"name": "gpt2", "hidden": 768, "intermediate": 3072, "heads": 12, "kv_heads": 12, "head_dim": 64,
     "vocab": 50257},
    {"name": "gpt2-xl", "hidden": 1600, "intermediate": 6400, "heads": 25, "kv_heads": 25, "head_dim": 64,
     "vocab": 50257},
    {"name": "phi-3-mini", "hidden": 3072, "intermediate": 8192, "heads": 32, "kv_heads": 32, "head_dim": 96,
     "vocab": 32064},
)

# Tokens in one call (batch x sequence): decoding (1..64), short prefill, long prefill, training batches.
# Odd counts (primes, non-powers of two) are there on purpose: a kernel tuned on powers of two meets them.
TOKEN_BANDS = (
    (1, 7, 16, 61),
    (127, 256, 509, 1000),
    (2048, 3001, 4096, 6144),
    (8192, 12007, 16384, 32768),
)
MAX_BYTES = 2 * 2**30  # bytes moved per call (META's cost model at 2-byte elements)
HELDOUT_SHARE = 1 / 3
MIN_HELDOUT = 12
SETS = ("tuning", "heldout")


def _unit(text: str) -> float:
    """A stable number in [0, 1) from text (sha256, so every Python and machine agrees)."""
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16) / 16**12


def shape_key(shape: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(shape.items()))


def tokens_for(model: dict) -> list[int]:
    """One token count per band, chosen by the model's name."""
    return [band[int(_unit(f"{model['name']}|{i}") * len(band))] for i, band in enumerate(TOKEN_BANDS)]


@dataclass(frozen=True)
class Workload:
    """A problem's workload shapes, each with its set (tuning | heldout) and where it came from."""

    shapes: tuple[dict, ...]
    sets: dict  # shape_key -> "tuning" | "heldout"
    origins: dict  # shape_key -> "llama-3-8b x 4096 tokens" (or "extra")

    def select(self, which: str) -> list[dict]:
        """'workload' (both sets), 'tuning' or 'heldout', in generation order."""
        if which == "workload":
            return list(self.shapes)
        if which not in SETS:
            raise ValueError(f"unknown shape set {which!r}; use workload, tuning or heldout")
        return [s for s in self.shapes if self.sets[shape_key(s)] == which]

    def set_of(self, shape: dict) -> str | None:
        return self.sets.get(shape_key(shape))


def _as_list(value) -> list[dict]:
    if value is None:
        return []
    return [value] if isinstance(value, dict) else list(value)


def generate(mapping: Callable | None, extra: list[dict] = (), bytes_fn: Callable | None = None,
             models: tuple = MODELS) -> Workload:
    """The workload of one problem: every model x its token counts through `mapping`, plus `extra`."""
    shapes: list[dict] = []
    origins: dict = {}

    def add(shape: dict, origin: str) -> None:
        key = shape_key(shape)
        if key in origins or (bytes_fn is not None and bytes_fn(shape, 2) > MAX_BYTES):
            return
        origins[key] = origin
        shapes.append(dict(shape))

    for model in models if mapping is not None else ():
        for tokens in tokens_for(model):
            for shape in _as_list(mapping(model, tokens)):
                add(shape, f"{model['name']} x {tokens} tokens")
    for shape in extra:
        add(shape, "extra")
    return Workload(tuple(shapes), split(shapes), origins)


def split(shapes: list[dict]) -> dict:
    """shape_key -> set: held out when the shape's hash falls under HELDOUT_SHARE, then topped up to
    MIN_HELDOUT (or all but a third of the shapes, if there are few) from the lowest hashes."""
    ranked = sorted(shapes, key=lambda s: _unit(shape_key(s)))
    held = {shape_key(s) for s in ranked if _unit(shape_key(s)) < HELDOUT_SHARE}
    want = min(MIN_HELDOUT, len(shapes) - len(shapes) // 3)
    for s in ranked:
        if len(held) >= want:
            break
        held.add(shape_key(s))
    return {shape_key(s): ("heldout" if shape_key(s) in held else "tuning") for s in shapes}
