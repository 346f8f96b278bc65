"""Before any child starts: the selected problems load, declare the dtypes asked for, and say what they lack.

A problem file that does not load, a `--dtype` a problem does not declare, or `--shapes
workload|tuning|heldout` on a problem without a workload (it would time nothing), is one usage error line
here rather than a failure record per implementation later; a foreign file without META is said to be
checked at its own shape only, since that is all it can be.
"""

from __future__ import annotations

from collections.abc import Callable

import click

from harness import ProblemRef
from harness.dtype_choice import DtypeChoiceError, canonical_request, select_dtypes
from harness.loader import load_problem


def own_shape_note(ref: ProblemRef, shape: dict) -> str:
    sizes = ", ".join(f"{k}={v}" for k, v in shape.items()) or "no size constants"
    return (f"{ref.name}: no META, so it is checked at its own shape only ({sizes}), in float32, with "
            "KernelBench's tolerances")


WORKLOAD_SETS = ("workload", "tuning", "heldout")


def preflight(refs: list[ProblemRef], dtypes: tuple[str, ...], echo: Callable[[str], None],
              shapes: str = "all") -> tuple[str, ...]:
    """The --dtype request in canonical words (aliases mapped), valid for every problem in `refs`.
    Raises LoadError (a problem that does not load), DtypeChoiceError naming each problem's dtypes, or a
    click.UsageError for a workload shape set on a problem that declares no workload."""
    asked = canonical_request(dtypes)
    refused = []
    for i, ref in enumerate(refs):
        loaded = load_problem(ref.path, f"ksuite_preflight_{i}")
        meta = loaded.meta
        if shapes in WORKLOAD_SETS and meta.workload_fn is None and not meta.workload_extra:
            raise click.UsageError(f"{ref.path}: declares no workload (META \"workload\"), so --shapes {shapes} "
                                   "has no shapes; use --shapes large or all")
        try:
            select_dtypes(list(loaded.meta.dtypes), asked, str(ref.path))
        except DtypeChoiceError as exc:
            refused.append(str(exc))
        if getattr(loaded.module, "META", None) is None:
            echo(own_shape_note(ref, loaded.defaults))
    if refused:
        raise DtypeChoiceError("; ".join(refused))
    return asked
