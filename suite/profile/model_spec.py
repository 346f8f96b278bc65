"""MODEL on the command line -> a model on the device with a way to make its inputs.

Three kinds: a bundled model (`llama3-8b`, `llama3-8b:4-layers`, `tiny`, `gpt2`, `gpt2-tiny`), a Hugging
Face config (`hf:path/config.json`, random weights through transformers), or a factory in a file
(`path/model.py:make`, returning `(model, example_inputs)`). Anything that does not load is a ModelError:
one line naming the model or file and what went wrong.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from suite.profile import gpt2, llama

LAYERS_SUFFIX = re.compile(r"^(\d+)-layers?$")
DTYPE_NAMES = {"bf16": torch.bfloat16, "bfloat16": torch.bfloat16, "fp16": torch.float16, "float16": torch.float16,
               "fp32": torch.float32, "float32": torch.float32, "fp64": torch.float64, "float64": torch.float64}


class ModelError(Exception):
    """A MODEL that does not load; the message names it and the cause."""


@dataclass
class LoadedModel:
    """A model ready to run: `make_inputs(seed)` gives (args, kwargs) on its device."""

    name: str
    module: torch.nn.Module
    make_inputs: Callable[[int], tuple[tuple, dict]]
    dtype: torch.dtype
    device: torch.device
    batch: int
    seq: int
    kind: str  # bundled | hf | factory

    @property
    def slug(self) -> str:
        """The model's folder name under problems/extracted/ ("llama3-8b:4-layers" -> "llama3-8b-4-layers")."""
        return re.sub(r"[^A-Za-z0-9.]+", "-", Path(self.name.removeprefix("hf:")).stem
                      if self.kind != "bundled" else self.name).strip("-").lower()

    def run(self, seed: int = 0):
        args, kwargs = self.make_inputs(seed)
        return self.module(*args, **kwargs)


def dtype_of(name: str) -> torch.dtype:
    if name not in DTYPE_NAMES:
        raise ModelError(f"unknown dtype {name!r}; use one of {', '.join(DTYPE_NAMES)}")
    return DTYPE_NAMES[name]


def bundled_names() -> list[str]:
    return list(llama.SIZES) + list(gpt2.SIZES)


def load_model(spec: str, batch: int = 1, seq: int = 128, dtype: str = "bf16", device: str | None = None
               ) -> LoadedModel:
    """The model MODEL names, built on `device` (default: cuda if present) in `dtype`."""
    torch_dtype = dtype_of(dtype)
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if batch < 1 or seq < 1:
        raise ModelError(f"{spec}: batch and seq must be >= 1 (got {batch} x {seq})")
    if spec.startswith("hf:"):
        return _hf_model(spec, batch, seq, torch_dtype, dev)
    file_part = spec.rsplit(":", 1)[0]
    if file_part.endswith(".py") or spec.endswith(".py"):
        return _factory_model(spec, batch, seq, torch_dtype, dev)
    return _bundled_model(spec, batch, seq, torch_dtype, dev)


def _token_inputs(vocab: int, batch: int, seq: int, device: torch.device):
    def make(seed: int):
        gen = torch.Generator().manual_seed(seed)
        tokens = torch.randint(0, vocab, (batch, seq), generator=gen)
        targets = torch.randint(0, vocab, (batch, seq), generator=gen)
        return (tokens.to(device), targets.to(device)), {}
    return make


def _bundled_model(spec: str, batch: int, seq: int, dtype: torch.dtype, device: torch.device) -> LoadedModel:
    name, _, suffix = spec.partition(":")
    families = {**{n: (llama.Llama, c) for n, c in llama.SIZES.items()},
                **{n: (gpt2.GPT2, c) for n, c in gpt2.SIZES.items()}}
    if name not in families:
        raise ModelError(f"unknown model {spec!r}: bundled models are {', '.join(bundled_names())} "
                         f"(optionally NAME:N-layers); or hf:path/config.json, or path/file.py:factory")
    cls, config = families[name]
    if suffix:
        match = LAYERS_SUFFIX.match(suffix)
        if not match or int(match.group(1)) < 1:
            raise ModelError(f"{spec}: expected NAME:N-layers with N >= 1 (e.g. {name}:4-layers)")
        config = replace(config, layers=int(match.group(1)))
    if cls is gpt2.GPT2 and seq > config.max_seq:
        raise ModelError(f"{spec}: --seq {seq} is longer than its {config.max_seq} learned positions")
    if cls is llama.Llama and seq > config.max_seq:
        config = replace(config, max_seq=seq)
    torch.manual_seed(0)
    with torch.device(device):
        module = cls(config)
    module = module.to(dtype).eval()
    return LoadedModel(spec, module, _token_inputs(config.vocab, batch, seq, device), dtype, device, batch, seq,
                       "bundled")


def _hf_model(spec: str, batch: int, seq: int, dtype: torch.dtype, device: torch.device) -> LoadedModel:
    path = Path(spec[3:])
    if not path.is_file():
        raise ModelError(f"{path}: no such config file (MODEL {spec})")
    try:
        raw = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ModelError(f"{path}: not a JSON config ({exc})") from None
    try:
        from transformers import AutoConfig, AutoModelForCausalLM
    except ImportError:
        raise ModelError(f"{path}: transformers is not installed (pip install 'kernelsuite[hf]')") from None
    try:
        model_type = raw.pop("model_type")
        config = AutoConfig.for_model(model_type, **raw)
        config._attn_implementation = "sdpa"
        torch.manual_seed(0)
        with torch.device(device):
            module = AutoModelForCausalLM.from_config(config)
    except Exception as exc:  # noqa: BLE001 - whatever transformers raises, it is the config's problem
        raise ModelError(f"{path}: transformers could not build a model from it: {type(exc).__name__}: {exc}") \
            from None
    module = module.to(dtype).eval()
    make = _token_inputs(config.vocab_size, batch, seq, device)

    def make_kwargs(seed: int):
        (tokens, targets), _ = make(seed)
        return (), {"input_ids": tokens, "labels": targets}
    return LoadedModel(spec, module, make_kwargs, dtype, device, batch, seq, "hf")


def _factory_model(spec: str, batch: int, seq: int, dtype: torch.dtype, device: torch.device) -> LoadedModel:
    from harness.loader import LoadError, import_file

    file_text, sep, factory_name = spec.rpartition(":")
    if not sep or not file_text.endswith(".py"):
        raise ModelError(f"{spec}: name the factory too, as path/file.py:function")
    path = Path(file_text)
    try:
        module = import_file(path, f"ksuite_model_{re.sub(r'[^A-Za-z0-9_]', '_', path.stem)}")
    except LoadError as exc:
        raise ModelError(str(exc)) from None
    factory = getattr(module, factory_name, None)
    if not callable(factory):
        raise ModelError(f"{path}: no function {factory_name!r} (MODEL {spec})")
    offered = {"batch": batch, "seq": seq, "dtype": dtype, "device": device}
    params = inspect.signature(factory).parameters
    try:
        made = factory(**{k: v for k, v in offered.items() if k in params})
    except Exception as exc:  # noqa: BLE001 - the factory's own failure
        raise ModelError(f"{path}: {factory_name}() raised {type(exc).__name__}: {exc}") from None
    if not (isinstance(made, tuple) and len(made) == 2 and isinstance(made[0], torch.nn.Module)):
        raise ModelError(f"{path}: {factory_name}() must return (model, example_inputs), "
                         f"got {type(made).__name__}")
    model, example = made
    model = model.to(device=device, dtype=dtype).eval()
    args, kwargs = (tuple(example), {}) if not isinstance(example, dict) else ((), dict(example))

    def place(x):
        if not isinstance(x, torch.Tensor):
            return x
        return x.to(device=device, dtype=dtype if x.is_floating_point() else x.dtype)

    def make(seed: int):  # the factory's own example inputs each time: it knows what is valid
        return tuple(place(a) for a in args), {k: place(v) for k, v in kwargs.items()}
    shape = next((a.shape for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)), (1, 1))
    return LoadedModel(spec, model, make, dtype, device, int(shape[0]) if len(shape) else 1,
                       int(shape[1]) if len(shape) > 1 else 1, "factory")


def split_outputs(out) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """(logits, loss) from what a model returned: a (logits, loss) pair, an object with .logits/.loss
    (Hugging Face), or one tensor (logits if it has dimensions, else a loss)."""
    if isinstance(out, torch.Tensor):
        return (out, None) if out.dim() else (None, out)
    if isinstance(out, (tuple, list)):
        tensors = [t for t in out if isinstance(t, torch.Tensor)]
        logits = next((t for t in tensors if t.dim()), None)
        loss = next((t for t in tensors if not t.dim()), None)
        return logits, loss
    return getattr(out, "logits", None), getattr(out, "loss", None)
