"""`ksuite confirm RUN`: a run's close calls timed again in one process, interleaved (suite/confirm.py)."""

from __future__ import annotations

import sys

import click
from tabulate import tabulate

from suite import exit_codes
from suite.confirm import COMPUTE_WITHIN, MAX_US, WITHIN, close_groups, confirm_into, verdict_changes
from suite.goals import evaluate, summary_line
from suite.report import num_text, shape_text
from suite.results_store import RunFile, find_run, new_run_id

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


def confirm_run(found: RunFile, within: float = WITHIN, max_us: float = MAX_US, timeout: float = 600.0) -> int:
    """Re-time run `found`'s close calls into a new run, print what changed and the goals with them; the exit code
    (also `ksuite bench --confirm`'s second half)."""
    from harness.environment import fingerprint
    from harness.jobs.pairwise import run_together
    from suite.commands import base_options, cuda_available
    from suite.registry import Registry

    records = [r.to_dict() for r in found.read()]
    groups = close_groups(records, within, max_us)
    if not groups:
        click.echo(f"run {found.run_id}: no close call (no solution record under {max_us:g} us within "
                   f"{within:.0%} of the best baseline or inside the spread of its samples, nor a compute-bound one "
                   f"within {COMPUTE_WITHIN:.0%}): nothing to re-time")
        return exit_codes.OK
    for g in groups:
        click.echo(f"{g.problem} {g.solution} {g.dtype}: {len(g.shapes)} close shape(s) "
                   f"({', '.join(shape_text(s) for s in g.shapes)}), beside {', '.join(g.baselines)}")
    if not cuda_available():
        click.echo("no CUDA device: nothing re-timed")
        return exit_codes.OK
    env = fingerprint()
    ran_on = {r.get("gpu") for r in records if r.get("median_us")}
    if ran_on and ran_on != {env.get("gpu")}:
        raise click.UsageError(f"run {found.run_id} was timed on {', '.join(sorted(map(str, ran_on)))}, this machine "
                               f"has {env.get('gpu')}: close calls are re-timed on the GPU that ran them")
    registry = Registry()

    def refs(problem: str, solution: str):
        ref = registry.problem(problem)
        return ref, registry.solution(ref, solution)

    options = base_options("all", (), timeout, time=True)
    new_id = new_run_id()
    out = RunFile(found.path.parent / f"{new_id}.jsonl")
    result = confirm_into(out, records, found.run_id, new_id, refs, options, env, run_together, within, max_us)
    for line in result.notes:
        click.echo(line, err=True)
    rows = [[p, s, d, shape_text(sh), num_text(a, ".3f"), num_text(b, ".3f")]
            for p, s, d, sh, a, b in verdict_changes(records, result.records)]
    click.echo(tabulate(rows, headers=["problem", "solution", "dtype", "shape", f"x best ({found.run_id})",
                                       "x best (paired)"], disable_numparse=True))
    click.echo(f"{len(result.paired)} paired records; run {new_id} written to {out.path} "
               f"(`ksuite goals {new_id}`)")
    click.echo(f"goals with the paired close calls: {summary_line(evaluate(result.records))}")
    return exit_codes.OK if not result.notes else exit_codes.FAILED


commands = [confirm_cmd]
