"""`ksuite kernelbench score`: fast_p and geometric-mean speedup against a KernelBench baseline JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from submit.kernelbench import ScoreError, render, score_files


@click.group("kernelbench")
def kernelbench_group():
    """KernelBench scoring."""


@kernelbench_group.command("score")
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--baseline", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="KernelBench's baseline_time_torch.json (or the torch.compile one).")
@click.option("--level", default=None, help="Only this level (e.g. level1).")
@click.option("--json", "as_json", is_flag=True)
def score_cmd(results, baseline, level, as_json):
    """fast_p for p in 0, 0.5, 0.8, 1, 1.5, 2 and the geometric-mean speedup of RESULTS."""
    try:
        result = score_files(results, baseline, level)
    except ScoreError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    if as_json:
        click.echo(json.dumps({"count": result.count, "fast_p": {f"{p:g}": v for p, v in result.fast_p.items()},
                               "geomean_speedup": result.geomean_speedup}))
    else:
        click.echo(render(result))


commands = [kernelbench_group]
