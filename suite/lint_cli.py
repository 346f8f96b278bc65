"""`ksuite lint`: flag degenerate problems (harness/problem_lint.py does the work; this only prints)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from tabulate import tabulate

from suite import exit_codes
from suite.registry import SUITES, Registry


@click.command()
@click.argument("problems", nargs=-1)
@click.option("--suite", "suite_name", default="default", type=click.Choice(list(SUITES)), show_default=True)
@click.option("--shapes", type=click.Choice(["small", "all", "large"]), default="small", show_default=True,
              help="Shapes to run the float64 reference at, on CPU (large ones can take a while).")
@click.option("--kernelbench", "kernelbench", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Use an unmodified KernelBench tree as the registry.")
def lint(problems, suite_name, shapes, kernelbench):
    """Flag problems a kernel can pass without the work: constant output, all-zeros within tolerance,
    an input or parameter the output ignores. Exit 1 if any is flagged."""
    from harness.problem_lint import lint_file

    registry = Registry(kernelbench_dir=kernelbench)
    refs = [registry.problem(p) for p in problems] if problems else registry.problems(suite_name)
    rows = []
    for ref in refs:
        for f in lint_file(ref.path, ref.name, shapes):
            rows.append([f.problem, f.rule, f.dtype or "-", " ".join(f"{k}={v}" for k, v in f.shape.items()),
                         f.detail])
    if rows:
        click.echo(tabulate(rows, headers=["problem", "rule", "dtype", "shape", "finding"]))
    click.echo(f"{len(refs)} problem(s) linted, {len({r[0] for r in rows})} flagged")
    sys.exit(exit_codes.FAILED if rows else exit_codes.OK)


commands = [lint]
