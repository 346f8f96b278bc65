"""`--shape` and `--baselines`: what the user picked, checked before anything runs, so a typo is a usage
error naming what would fit instead of a run that quietly measures something else."""

from __future__ import annotations

import click

from harness.loader import load_problem
from harness.shape_spec import ShapeSpecError, custom_shapes
from harness.spec import BASELINES


def shape_specs(refs: list, specs: tuple[str, ...]) -> tuple[str, ...]:
    """The --shape texts, once each of them fits every selected problem's size constants."""
    for i, ref in enumerate(refs if specs else []):
        problem = load_problem(ref.path, f"ksuite_shape_{i}")
        try:
            custom_shapes(problem, specs)
        except ShapeSpecError as exc:
            raise click.UsageError(f"{ref.path}: --shape: {exc}") from None
    return tuple(specs)


def baseline_names(text: str | None, no_baselines: bool = False) -> tuple[str, ...] | None:
    """--baselines compile,liger as a tuple of known names; None when not given (every baseline)."""
    if text is None:
        return None
    if no_baselines:
        raise click.UsageError("--baselines and --no-baselines contradict each other; pass one")
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in BASELINES]
    if unknown or not names:
        raise click.UsageError(f"--baselines {text!r}: unknown {', '.join(unknown) or 'empty list'}; "
                               f"the baselines are {', '.join(BASELINES)}")
    return names
