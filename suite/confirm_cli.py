"""`ksuite confirm RUN`: a run's close calls timed again in one process, interleaved (suite/confirm.py)."""

from __future__ import annotations

import sys

import click

from suite.commands import confirm_run
from suite.confirm import COMPUTE_WITHIN, MAX_US, WITHIN
from suite.results_store import find_run

HELP = ("Re-time the close calls of run RUN: solution records under --max-us whose speedup over the best baseline "
        "is within --within of 1, or whose gap to the best baseline is inside the wider interquartile range of the "
        f"two records, and a compute-bound problem's records of any length within {COMPUTE_WITHIN:.0%} of 1, each "
        "timed again beside the baselines near it in one process, batches interleaved (as the optimiser's keep "
        "rule compares), because at a few microseconds, and at a compute-bound problem's every length, two "
        "processes differ by more than the kernels do. A baseline RUN timed that fails here (or Liger, not "
        "installed here) leaves that shape's records as RUN had them, with a note, and the exit is 1. Writes a new "
        "run: RUN's records with those replaced (field `paired`), judged by `ksuite goals` like any run. Needs a "
        "CUDA device; elsewhere it lists the close calls.")


@click.command("confirm", help=HELP)
@click.argument("run")
@click.option("--gpu", "slug", default=None, help="GPU folder under results/ (default: where RUN is).")
@click.option("--within", type=float, default=WITHIN, show_default=True,
              help="A speedup between 1/(1+W) and 1+W is a close call.")
@click.option("--max-us", type=float, default=MAX_US, show_default=True,
              help="Only solution records faster than this (microseconds).")
@click.option("--timeout", type=float, default=600.0, show_default=True,
              help="Seconds one (problem, solution, dtype)'s child may run.")
def confirm_cmd(run, slug, within, max_us, timeout):
    found = find_run(run, slug)  # an unknown run: ResultsError, exit 2 (suite/cli.py)
    sys.exit(confirm_run(found, within, max_us, timeout))


commands = [confirm_cmd]
