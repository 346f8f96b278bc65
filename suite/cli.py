"""`ksuite`: the command line. Thin: it parses, asks the registry, runs the harness, prints."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from harness.dtype_choice import HELP as DTYPE_HELP
from harness.loader import LoadError
from harness.spec import BASELINES
from suite import (
    ab_cli,
    commands,
    compare_cli,
    compare_gpus,
    confirm_cli,
    exit_codes,
    goals_cli,
    gpumode_cli,
    inspect_cli,
    kernelbench_cli,
    lint_cli,
    optimize_cli,
    profile_cli,
    selection,
)
from suite.registry import SUITES, RegistryError
from suite.results_store import ResultsError

KNOWN_ERRORS = (RegistryError, ResultsError, LoadError)
TIMEOUT_S = 180.0
TIMEOUT_HELP = ("Seconds a candidate may run without finishing a correctness stage or a measurement before it "
                "counts as hung (180: a hang costs three minutes, not ten).")
SHAPE_HELP = ("Check and time this shape instead of META's: sizes in the order of the problem's size constants "
              "(4096x4096) or name=value pairs (batch_size=4096,dim=8192); repeatable; on CPU too.")
SHAPE_SETS = ["all", "large", "small", "workload", "tuning", "heldout"]


class FriendlyGroup(click.Group):
    """Known errors become one line naming the file and the cause, never a traceback. A one-line error
    means the command could not run as asked: exit 2 in every command (suite/exit_codes.py)."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KNOWN_ERRORS as exc:
            error = click.ClickException(str(exc))
            error.exit_code = exit_codes.USAGE
            raise error from None
        except click.ClickException as exc:
            exc.exit_code = exit_codes.USAGE if exc.exit_code == exit_codes.FAILED else exc.exit_code
            raise


@click.group(cls=FriendlyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kernelsuite", prog_name="ksuite")
def cli():
    """kernelsuite: check, time and compare GPU kernels against the best PyTorch baselines."""


verbose_option = click.option("-v", "--verbose", is_flag=True,
                              help="Also print the traceback of a candidate that raised or could not be built.")
kernelbench_option = click.option("--kernelbench", "kernelbench", type=click.Path(exists=True, file_okay=False,
                                  path_type=Path), help="Use an unmodified KernelBench tree as the registry.")


@cli.command("list")
@click.option("--suite", "suite_name", default="default", type=click.Choice(list(SUITES)), show_default=True)
@kernelbench_option
def list_cmd(suite_name, kernelbench):
    """List problems with their shapes, dtypes and solutions."""
    click.echo(commands.list_problems(suite_name, kernelbench))


@cli.command()
@click.argument("problem")
@click.argument("solution", required=False)
@click.option("--shapes", type=click.Choice(SHAPE_SETS), default="all", show_default=True,
              help="Shapes of the sweep stage: META's (all, large, small) or the workload's (workload, tuning, "
                   "heldout); on CPU always small.")
@click.option("--dtype", "dtypes", multiple=True, default=("all",), show_default=True,
              help=DTYPE_HELP)
@click.option("--shape", "shape_texts", multiple=True, help=SHAPE_HELP)
@click.option("--timeout", default=TIMEOUT_S, show_default=True, help=TIMEOUT_HELP)
@verbose_option
@kernelbench_option
def check(problem, solution, shapes, dtypes, shape_texts, timeout, verbose, kernelbench):
    """Run the five correctness stages on SOLUTION (name or file), or on every solution of PROBLEM."""
    ok = commands.check(problem, solution, shapes, dtypes, timeout, kernelbench, shape_texts, verbose=verbose)
    sys.exit(exit_codes.OK if ok else exit_codes.FAILED)


@cli.command()
@click.argument("problems", nargs=-1)
@click.option("--suite", "suite_name", default="default", type=click.Choice(list(SUITES)), show_default=True)
@click.option("--solution", "solutions", multiple=True, help="Only these solutions (name or file; repeatable).")
@click.option("--shapes", type=click.Choice(SHAPE_SETS), default="large", show_default=True,
              help="large: META's large shapes; all: plus the mid-size sweep; workload: shapes of published "
                   "models (harness/workloads.py), tuning or heldout: one half of its split (goals are judged "
                   "on heldout); on CPU always small.")
@click.option("--dtype", "dtypes", multiple=True, default=("primary",), show_default=True,
              help=DTYPE_HELP)
@click.option("--shape", "shape_texts", multiple=True, help=SHAPE_HELP)
@click.option("--no-baselines", is_flag=True, help="Time solutions only.")
@click.option("--baselines", "baseline_list", default=None,
              help=f"Only these baselines, comma-separated ({', '.join(BASELINES)}); default: all that apply.")
@click.option("--resume", "resume", default=None,
              help="Continue the run with this id (or 'last') on its own device, with its own options (others are "
                   "refused); an implementation whose source changed is measured again.")
@click.option("--timeout", default=TIMEOUT_S, show_default=True, help=TIMEOUT_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print records as JSON instead of a table.")
@click.option("--gpus", default=None, help="all | 0,1,...: one worker per local GPU, each (problem, shape, dtype) "
              "with all its implementations on one GPU; one merged run file. One GPU: that GPU, as without it.")
@click.option("--ray", "ray_address", default=None, help="ADDRESS | local: each (problem, shape, dtype) a Ray task on "
              "one GPU; records come back to results/ here (needs pip install 'kernelsuite[ray]').")
@selection.baseline_cache_options
@click.option("-v", "--verbose", is_flag=True, help="Also print each record as it lands (for logs) and the "
              "traceback of a candidate that raised or could not be built.")
@click.option("--confirm", "confirm", is_flag=True, help="Then time the run's close calls again beside the baselines "
              "in one process, interleaved (`ksuite confirm RUN`: a second run file), and judge the goals with them.")
@kernelbench_option
def bench(problems, suite_name, solutions, shapes, dtypes, shape_texts, no_baselines, baseline_list, resume, timeout,
          as_json, gpus, ray_address, cached_baselines, fresh_baselines, baseline_max_age, verbose, confirm,
          kernelbench):
    """Check, then time solutions and baselines; record every measurement under results/."""
    baselines = selection.baseline_names(baseline_list, no_baselines)
    cache = selection.baseline_cache_mode(cached_baselines, fresh_baselines, no_baselines)
    ok = commands.bench(problems, suite_name, solutions, shapes, dtypes, not no_baselines, resume, timeout,
                        as_json, kernelbench, shape_texts, baselines, verbose=verbose, baseline_cache=cache,
                        baseline_max_age_days=baseline_max_age, gpus=gpus, ray=ray_address, confirm=confirm)
    sys.exit(exit_codes.OK if ok else exit_codes.FAILED)


@cli.command()
@click.option("--force", is_flag=True, help="Measure again even if this GPU is calibrated.")
def calibrate(force):
    """Measure this GPU's copy bandwidth and matrix rate (the speed-of-light ceilings), cached per GPU."""
    commands.calibrate(force)


@cli.command()
@click.argument("run", required=False)
@click.option("--format", "fmt", type=click.Choice(["table", "md", "json"]), default="table", show_default=True)
@click.option("--gpu", "slug", default=None, help="GPU folder under results/ (default: newest run anywhere).")
@click.option("--summary", is_flag=True, help="One row per solution beside the fastest correct baseline.")
@click.option("--chart", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also draw a PNG: speedup over the best baseline and % of speed of light, per problem.")
def report(run, fmt, slug, summary, chart):
    """Re-print a recorded run (default: the newest)."""
    click.echo(commands.report(run, fmt, slug, summary))
    if chart:
        click.echo(commands.report_chart(run, slug, chart), err=fmt == "json")


# Commands that live in their own modules (one per feature), each exposing `commands`: a list of click
# commands or groups. Import a module above and add it here to add its commands to `ksuite`.
COMMAND_MODULES = (gpumode_cli, kernelbench_cli, optimize_cli, lint_cli, compare_cli, compare_gpus, goals_cli,
                   confirm_cli, inspect_cli, profile_cli, ab_cli)
for _module in COMMAND_MODULES:
    for _command in _module.commands:
        cli.add_command(_command)


def main() -> None:
    cli(prog_name="ksuite")
