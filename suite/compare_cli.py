"""`ksuite compare BASE NEW`: two recorded runs side by side (suite/run_compare.py decides; this prints)."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict

import click
from tabulate import tabulate

from suite.report import num_text, shape_text
from suite.results_store import ResultsError, find_run
from suite.run_compare import REGRESSIONS, compare, counts


@click.command("compare")
@click.argument("base")
@click.argument("new", required=False)
@click.option("--threshold", default=5.0, show_default=True, help="Percent change below which a time is 'same'.")
@click.option("--only-changes", is_flag=True, help="Hide rows whose status is 'same'.")
@click.option("--format", "fmt", type=click.Choice(["table", "md", "json"]), default="table", show_default=True)
def compare_cmd(base, new, threshold, only_changes, fmt):
    """Compare run NEW (default: the newest) with run BASE: per implementation, shape and dtype, the two
    medians, their ratio and % of speed of light, and a status. Exit 1 if anything got slower or wrong."""
    try:
        base_run, new_run = find_run(base), find_run(new)
        base_records, new_records = base_run.read(), new_run.read()
    except ResultsError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    rows = compare(base_records, new_records, threshold / 100.0)
    shown = [r for r in rows if not (only_changes and r.status == "same")]
    gpus = [sorted({r.gpu for r in recs}) for recs in (base_records, new_records)]
    if fmt == "json":
        click.echo(json.dumps([{**asdict(r), "ratio": r.ratio} for r in shown], indent=1))
    else:
        table = [[r.problem, r.implementation, shape_text(r.shape), r.dtype, num_text(r.base_us, ".1f"),
                  num_text(r.new_us, ".1f"), num_text(r.ratio, ".2f"), num_text(r.base_pct_sol, ".0f"),
                  num_text(r.new_pct_sol, ".0f"), r.status] for r in shown]
        click.echo(f"base {base_run.run_id} ({', '.join(gpus[0])}) -> new {new_run.run_id} ({', '.join(gpus[1])})")
        click.echo(tabulate(table, headers=["problem", "implementation", "shape", "dtype", "base us", "new us",
                                            "new/base", "base %SOL", "new %SOL", "status"],
                            tablefmt="github" if fmt == "md" else "simple"))
    tally = counts(rows)
    click.echo(", ".join(f"{n} {status}" for status, n in sorted(tally.items())), err=fmt == "json")
    sys.exit(1 if any(tally.get(s) for s in REGRESSIONS) else 0)


commands = [compare_cmd]
