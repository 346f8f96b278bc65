"""`ksuite goals [RUN]`: which solutions of a recorded run meet their problem's goals (suite/goals.py judges)."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict

import click
from tabulate import tabulate

from suite import exit_codes
from suite.confirm import hint as confirm_hint
from suite.goals import (
    FLOOR,
    GEOMEAN_BAR,
    HELDOUT_GEOMEAN,
    HELDOUT_WON_SHARE,
    WEAK_BASELINE_PCT,
    borrowed_tables,
    evaluate,
    summary_line,
    unmet_pairs,
)
from suite.report import num_text
from suite.results_store import find_run

HEADERS = ["problem", "dtype", "solution", "%SOL at large shapes", "goal", "worst x best", "geomean x (weak)",
           "verdict"]


HELDOUT_HEADERS = ["problem", "dtype", "solution", "held-out shapes won", "geomean x best", "at the ceiling",
                   "worst x best", "verdict"]


def _heldout_row(g) -> list:
    worst = f"{g.worst[0]:.2f} ({g.worst[1]})" if g.worst else "-"
    return [g.problem, g.dtype, g.solution, f"{g.won} of {g.judged}" if g.judged else "-",
            num_text(g.geomean, ".2f"), num_text(g.reach, ".2f"), worst, g.verdict]


def _row(g) -> list:
    large = " / ".join(num_text(p, ".0f") for _, p in g.large) or "-"
    worst = f"{g.worst[0]:.2f} ({g.worst[1]})" if g.worst else "-"
    geo = f"{g.geomean_weak:.2f} ({g.weak_shapes})" if g.geomean_weak else "-"
    return [g.problem, g.dtype, g.solution, large, num_text(g.goal_pct, ".0f"), worst, geo, g.verdict]


HELP = (f"Judge run RUN (default: the newest) against each problem's goals: META goal_pct_sol at the large "
        f"shapes, >= {FLOOR}x the best baseline of the same run at every timed shape, and a geometric mean >= "
        f"{GEOMEAN_BAR}x where that baseline is under {WEAK_BASELINE_PCT:.0f} % of speed of light. A run of held-out "
        f"workload shapes (bench --shapes heldout) is judged by the workload goals: the problem's recommended "
        f"solution at least as fast as the best baseline at {HELDOUT_WON_SHARE:.0%} of the shapes and a geometric "
        f"mean >= {HELDOUT_GEOMEAN}x; 'at the ceiling' is the geometric mean a memory-bound kernel would reach "
        "at the copy ceiling and the run's launch floor, the most any kernel can score in that run. Exit 1 if "
        "some (problem, dtype) of the run has no solution that meets all of them.")


@click.command("goals", help=HELP)
@click.argument("run", required=False)
@click.option("--gpu", "slug", default=None, help="GPU folder under results/ (default: newest run anywhere).")
@click.option("--format", "fmt", type=click.Choice(["table", "md", "json"]), default="table", show_default=True)
def goals_cmd(run, slug, fmt):
    found = find_run(run, slug)  # an unknown run: ResultsError, exit 2 (suite/cli.py)
    records = [r.to_dict() for r in found.read()]
    rows = evaluate(records)
    if fmt == "json":
        click.echo(json.dumps([{**asdict(g), "verdict": g.verdict} for g in rows], indent=1))
    else:
        click.echo(f"run {found.run_id}")
        table = "github" if fmt == "md" else "simple"
        for heldout, headers, make in ((False, HEADERS, _row), (True, HELDOUT_HEADERS, _heldout_row)):
            part = [make(g) for g in rows if g.heldout == heldout]
            if part:
                click.echo(tabulate(part, headers=headers, tablefmt=table, disable_numparse=True,
                                    maxcolwidths=None if fmt == "md" else [None] * (len(headers) - 1) + [70]))
        for line in borrowed_tables(rows):
            click.echo(line)
    close = None if any(r.get("paired") for r in records) else confirm_hint(records, found.run_id)
    if close:  # a run `ksuite confirm` wrote has its close calls paired already
        click.echo(close, err=fmt == "json")
    click.echo(summary_line(rows), err=fmt == "json")
    sys.exit(exit_codes.FAILED if unmet_pairs(rows) else exit_codes.OK)


commands = [goals_cmd]
