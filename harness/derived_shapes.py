"""Extra shapes for a problem file without META (a KernelBench file as it comes): its own size only lets a
candidate with that size baked in pass, so the edge stage also checks smaller, odd sizes of its constants.

Each size constant of at least MIN_SIZE is halved and made odd (4096 -> 2047, 16 -> 7), as GPU MODE's
several test sizes sit beside the powers of two: all of them at once, then each on its own. Constants
below MIN_SIZE (a reduction dim, a kernel size, a stride) are left as they are. A shape is kept only where
the reference runs: its Model and get_inputs are built on the meta device and the forward traced there
(no memory, no time); a shape it rejects (a channel count no longer divisible by the groups, a negative
output size) is dropped.
"""

from __future__ import annotations

from types import ModuleType

import torch

MIN_SIZE = 8
MAX_SHAPES = 4


def smaller_odd(value: int) -> int:
    """Half of it, made odd: 4096 -> 2047, 4095 -> 2047, 16 -> 7, 8 -> 3."""
    half = value // 2
    return half if half % 2 else half - 1


def proposals(own: dict) -> list[dict]:
    """All sizes at once, then each size alone, halved and made odd; duplicates dropped."""
    sizes = [k for k, v in own.items() if v >= MIN_SIZE]
    shapes = [{**own, **{k: smaller_odd(own[k]) for k in sizes}}] if sizes else []
    if len(sizes) > 1:
        shapes += [{**own, k: smaller_odd(own[k])} for k in sizes]
    unique = []
    for shape in shapes:
        if shape not in unique:
            unique.append(shape)
    return unique


def reference_runs(module: ModuleType, own: dict, shape: dict) -> bool:
    """Whether the reference builds and runs at this shape, traced on the meta device."""
    try:
        for name, value in shape.items():
            setattr(module, name, value)
        with torch.device("meta"), torch.no_grad():
            model = module.Model(*module.get_init_inputs())
            model(*module.get_inputs())
        return True
    except Exception:  # noqa: BLE001 - any failure means this shape is not one the problem accepts
        return False
    finally:
        for name, value in own.items():
            setattr(module, name, value)


def derived_shapes(module: ModuleType, own: dict) -> tuple[dict, ...]:
    """Up to MAX_SHAPES smaller, odd shapes at which the reference runs."""
    kept = [s for s in proposals(own) if reference_runs(module, own, s)]
    return tuple(kept[:MAX_SHAPES])
