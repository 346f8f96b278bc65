"""A shape the user types (`--shape 4096x4096` or `--shape batch_size=4096,dim=8192`), read against a
problem's size constants, so any shape can be checked and timed, not only META's.

Numbers joined by x follow the size constants in the order the problem file defines them; name=value
pairs may leave constants out, which then keep the file's own value. The caller parses once in the
parent (a usage error before anything runs) and the worker parses the same text again.
"""

from __future__ import annotations


class ShapeSpecError(ValueError):
    """A shape that does not fit the problem: the message names its size constants."""


def size_constants(problem) -> list[str]:
    """The problem's size constants in file order: those META's shapes name, else every int constant."""
    meta = problem.meta
    named = {k for shape in (*meta.small_shapes, *meta.shapes, *meta.large_shapes) for k in shape}
    return [k for k in problem.defaults if k in named] or list(problem.defaults)


def _size(text: str, spec: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise ShapeSpecError(f"shape {spec!r}: {text.strip()!r} is not a whole number") from None
    if value < 1:
        raise ShapeSpecError(f"shape {spec!r}: sizes must be at least 1, got {value}")
    return value


def parse_shape(spec: str, constants: list[str], defaults: dict) -> dict:
    """`spec` as a shape dict over `constants`, in their order."""
    wanted = " x ".join(constants) or "none"
    if "=" in spec:
        given = {}
        for part in spec.split(","):
            name, sep, value = part.partition("=")
            if not sep or name.strip() not in constants:
                raise ShapeSpecError(f"shape {spec!r}: {name.strip()!r} is not a size constant (they are "
                                     f"{', '.join(constants)})")
            given[name.strip()] = _size(value, spec)
        return {k: given.get(k, defaults.get(k)) for k in constants}
    numbers = spec.lower().split("x")
    if len(numbers) != len(constants):
        raise ShapeSpecError(f"shape {spec!r}: {len(numbers)} number{'s' if len(numbers) != 1 else ''} for "
                             f"{len(constants)} size constants ({wanted}); write e.g. "
                             f"{'x'.join(str(defaults.get(k, 1)) for k in constants)} or name=value,...")
    return dict(zip(constants, (_size(n, spec) for n in numbers)))


def custom_shapes(problem, specs: tuple[str, ...]) -> list[dict]:
    """Every spec as a shape of `problem` (ShapeSpecError on the first that does not fit)."""
    constants = size_constants(problem)
    return [parse_shape(spec, constants, problem.defaults) for spec in specs]
