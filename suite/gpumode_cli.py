"""`ksuite submit gpumode`, `ksuite gpumode-eval`, `ksuite gpumode-list`, `ksuite leaderboards`: thin click
wrappers over submit/.

Known failures print one line and exit with their own code, never a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from submit.gpumode.client import Client, ClientError, Exit
from submit.gpumode.evaluate import MODES
from submit.gpumode.flow import NEEDS_GPU, SubmitOptions, default_solution, describe, submit
from submit.gpumode.local import can_time_here, run_local, score_ns
from submit.gpumode.problem import PROBLEMS_DIR, GpuModeError, list_problems, load


def _fail(message: str, code: int) -> None:
    click.echo(message, err=True)
    sys.exit(code)


@click.group("submit")
def submit_group():
    """Send a solution to a leaderboard."""


@submit_group.command("gpumode")
@click.argument("problem")
@click.argument("solution", required=False)
@click.option("--gpu", default="H100", show_default=True, help="Exactly as the leaderboard names it (B200, H100, ...).")
@click.option("--mode", type=click.Choice(MODES), default="leaderboard", show_default=True)
@click.option("--out", type=click.Path(path_type=Path), help="Keep the packaged submission here.")
@click.option("--no-check", is_flag=True, help="Skip the local pre-check.")
@click.option("--dry-run", is_flag=True, help="Package, lint and pre-check; send nothing.")
@click.option("-o", "answer_json", type=click.Path(path_type=Path), help="Save the server's final answer (JSON).")
@click.option("--poll", default=5.0, show_default=True, help="Seconds between status polls.")
def submit_gpumode(problem, solution, gpu, mode, out, no_check, dry_run, answer_json, poll):
    """Package SOLUTION for GPU MODE PROBLEM, lint, pre-check locally, send and follow it to its result."""
    options = SubmitOptions(gpu=gpu, mode=mode, out=out, check=not no_check, dry_run=dry_run,
                            answer_json=answer_json, poll_s=poll)
    try:
        code = submit(problem, solution, options, click.echo)
    except GpuModeError as exc:
        _fail(f"error: {exc}", Exit.USAGE)
    sys.exit(code)


@click.command("gpumode-eval")
@click.argument("directory")
@click.argument("submission", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--mode", type=click.Choice(MODES), default="test", show_default=True)
@click.option("--secret", type=int, default=None, help="Secret seed (POPCORN_SEED) combined with each case seed.")
def gpumode_eval(directory, submission, mode, secret):
    """Evaluate SUBMISSION on any GPU MODE problem folder with the leaderboard's protocol, locally.

    Without a GPU, test mode runs through Triton's interpreter; the timed modes need a GPU."""
    try:
        problem = load(directory)
    except GpuModeError as exc:
        _fail(f"error: {exc}", Exit.USAGE)
    if mode != "test" and not can_time_here():
        _fail(f"error: gpumode-eval --mode {mode}: {NEEDS_GPU} (--mode test runs the tests through Triton's "
              "interpreter; KSUITE_GPUMODE_CPU_BENCH=1 times on the CPU anyway)", Exit.CONFIG)
    run = run_local(problem, submission, mode, secret=secret)
    for line in describe(run):
        click.echo(line)
    score = score_ns(run.benchmark_means_ns(), problem.ranking_by) if run.passed else None
    if score is not None:
        click.echo(f"score ({problem.ranking_by} benchmark mean): {score / 1e3:.3f} us")
    sys.exit(run.exit_code)


@click.command("gpumode-list")
@click.argument("root", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path))
def gpumode_list(root):
    """The GPU MODE problem folders under ROOT (default problems/gpumode), as the leaderboard defines them."""
    from tabulate import tabulate

    rows = []
    for name in list_problems(root or PROBLEMS_DIR):
        folder = (root or PROBLEMS_DIR) / name
        try:
            problem = load(folder)
        except GpuModeError as exc:
            rows.append([name, f"error: {exc}", "", "", "", ""])
            continue
        try:
            solution = str(default_solution(problem).relative_to(Path.cwd()))
        except (GpuModeError, ValueError):
            solution = "-"
        rows.append([name, problem.lang, problem.ranking_by, len(problem.tests), len(problem.benchmarks),
                     ", ".join(problem.gpus), solution])
    click.echo(tabulate(rows, headers=["problem", "lang", "ranked by", "tests", "benchmarks", "GPUs",
                                       "default solution"]))


@click.command("leaderboards")
def leaderboards():
    """List the GPU MODE leaderboards and their GPUs (needs POPCORN_API_URL and a cli id)."""
    try:
        for board in Client.from_env().leaderboards():
            click.echo(f"{board['name']}: {', '.join(board['gpus'])}")
    except ClientError as exc:
        _fail(f"error: {exc}", exc.exit_code)


commands = [submit_group, gpumode_eval, gpumode_list, leaderboards]
