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


def baseline_cache_mode(cached: bool, fresh: bool, no_baselines: bool = False) -> str:
    """--cached-baselines / --fresh-baselines as Options.baseline_cache: use, refresh, or off (neither)."""
    if cached and fresh:
        raise click.UsageError("--cached-baselines and --fresh-baselines contradict each other; pass one")
    if no_baselines:  # nothing to cache (the flags may come from the environment of a script)
        return "off"
    return "use" if cached else ("refresh" if fresh else "off")


def baseline_cache_options(command):
    """--cached-baselines, --fresh-baselines and --baseline-max-age, for every command that times baselines; the
    flags can also come from the environment (KSUITE_CACHED_BASELINES=1, KSUITE_FRESH_BASELINES=1), so a round
    script sets them once for every bench it runs."""
    for option in reversed([
        click.option("--cached-baselines", "cached_baselines", is_flag=True, envvar="KSUITE_CACHED_BASELINES",
                     show_envvar=True,
                     help="Reuse a baseline timing kept from an earlier run (same GPU, driver, CUDA, torch, triton, "
                          "problem source, shape, dtype, flush and timer settings, younger than --baseline-max-age) "
                          "instead of timing it again; reused rows are marked, and `ksuite goals` judges nothing "
                          "against them. Baselines timed now are kept for next time."),
        click.option("--fresh-baselines", "fresh_baselines", is_flag=True, envvar="KSUITE_FRESH_BASELINES",
                     show_envvar=True,
                     help="Time every baseline in this run (as without either flag) and keep the timings for a "
                          "later --cached-baselines."),
        click.option("--baseline-max-age", "baseline_max_age", type=click.FloatRange(min=0), default=7.0,
                     metavar="DAYS", show_default=True, help="Days a kept baseline timing stays reusable."),
    ]):
        command = option(command)
    return command
