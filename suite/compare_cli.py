"""`ksuite compare BASE NEW`: two recorded runs side by side (suite/run_compare.py decides; this prints)."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

import click
from tabulate import tabulate

from suite import exit_codes
from suite.report import num_text, shape_text
from suite.results_store import find_run, previous_run
from suite.run_compare import REGRESSIONS, compare, counts


def runs_to_compare(base: str, new: str | None) -> tuple:
    """(base, new) run files. With one run named, that run is the new one and the run recorded just before
    it (by run id, on its GPU) the base: what changed in that run, whatever the files' dates say."""
    if new is not None:
        return find_run(base), find_run(new)
    newer = find_run(base)
    return previous_run(newer), newer


def devices_warning(gpus: list[list[str]]) -> str:
    return (f"warning: base ran on {', '.join(gpus[0]) or 'nothing'}, new on {', '.join(gpus[1]) or 'nothing'}: "
            "the ratios compare two devices, not two versions of the code")


def chart_line(rows: list, labels: list[str], path: Path) -> str:
    """Draw the two runs (suite/charts.py); the line saying where the PNG went."""
    from suite.charts import ChartError, compare_chart

    try:
        compare_chart(rows, labels[0], labels[1], path)
    except ChartError as exc:
        raise click.UsageError(str(exc)) from None
    return f"chart: {path}"


@click.command("compare")
@click.argument("base")
@click.argument("new", required=False)
@click.option("--threshold", default=5.0, show_default=True, help="Percent change below which a time is 'same'.")
@click.option("--only-changes", is_flag=True, help="Hide rows whose status is 'same'.")
@click.option("--format", "fmt", type=click.Choice(["table", "md", "json"]), default="table", show_default=True)
@click.option("--chart", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also draw a PNG: per problem, new vs base speed and each run's % of speed of light.")
def compare_cmd(base, new, threshold, only_changes, fmt, chart):
    """Compare run NEW with run BASE (with one run named: that run with the run before it, by run id, on its
    GPU): per implementation, shape and dtype, the two medians, their ratio and % of speed of light, and a
    status. Exit 1 if anything got slower or wrong."""
    base_run, new_run = runs_to_compare(base, new)  # an unknown run: ResultsError, exit 2 (suite/cli.py)
    base_records, new_records = base_run.read(), new_run.read()
    rows = compare(base_records, new_records, threshold / 100.0)
    shown = [r for r in rows if not (only_changes and r.status == "same")]
    gpus = [sorted({r.gpu for r in recs}) for recs in (base_records, new_records)]
    if gpus[0] != gpus[1]:
        click.echo(devices_warning(gpus), err=True)
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
    if chart:
        labels = [f"{run.run_id} ({', '.join(g)})" for run, g in ((base_run, gpus[0]), (new_run, gpus[1]))]
        click.echo(chart_line(rows, labels, chart), err=fmt == "json")
    tally = counts(rows)
    click.echo(", ".join(f"{n} {status}" for status, n in sorted(tally.items())), err=fmt == "json")
    sys.exit(exit_codes.FAILED if any(tally.get(s) for s in REGRESSIONS) else exit_codes.OK)


commands = [compare_cmd]
