"""`ksuite optimize`: the optimisation loop's command line (thin; the work is in suite/optimize/)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from suite import exit_codes
from suite.optimize.stopping import Limits


@click.command()
@click.argument("problems", nargs=-1)
@click.option("--from", "start", default="triton_starter", show_default=True, help="Starting solution (name or file).")
@click.option("--strategy", type=click.Choice(["search", "llm", "agent"]), default="search", show_default=True)
@click.option("--budget", type=float, default=None, help="Minutes per problem, from that problem's start.")
@click.option("--total-budget", type=float, default=None, help="Minutes for the whole command.")
@click.option("--target", type=float, default=None, help="Stop once the best reaches this % of speed of light.")
@click.option("--plateau", type=int, default=20, show_default=True, help="Stop after N discards in a row.")
@click.option("--name", default=None, help="Kept file: solutions/<problem>/<name>.py (default <from>_opt).")
@click.option("--seed", default=0, show_default=True, help="Search: random restarts' seed.")
@click.option("--rounds", default=15, show_default=True,
              help="Table search (a --from file with BUCKETS): paired rounds per shape.")
@click.option("--per-bucket", default=12, show_default=True,
              help="Table search: experiments per bucket at most.")
@click.option("--probes-only", is_flag=True,
              help="Table search: only the buckets no tuning shape is in, at probe shapes (the others stay).")
@click.option("--split", "splits", multiple=True, metavar="NAME=EDGE",
              help="Table search: first add this edge to the family's BUCKETS (rows=256: a range of at most 256 rows "
                   "cut from the one above); the buckets it makes start as copies and are searched (repeatable).")
@click.option("--bucket", "only_buckets", multiple=True, metavar="PATTERN",
              help="Table search: only the buckets whose name matches this glob ('dim<=65536,batch_size<=64', "
                   "'*batch_size<=64'; repeatable); the other tuned buckets keep their entries.")
@click.option("--shape", "shapes", multiple=True, metavar="AxB",
              help="Table search: also tune at this shape, your model's (sizes in the problem's order, 2048x12288, "
                   "or name=value pairs; repeatable): it joins the workload's tuning shapes, so the bucket it falls "
                   "in is searched there. A held-out shape is refused (that set judges the tables).")
@click.option("--plan", is_flag=True,
              help="Table search: print the buckets it would visit, their shapes (tuning, probe, edge probe) and "
                   "first steps; nothing is compiled or timed (no GPU needed).")
@click.option("--plan-gpu", default=None, metavar="SLUG",
              help="With --plan: start from the table this GPU runs (a results folder name, nvidia-h100-80gb-hbm3), "
                   "as a search there would (default: DISPATCH, its DISPATCH_GPU's).")
@click.option("--timeout", default=600.0, show_default=True, help="Seconds before a candidate counts as hung.")
@click.option("--check-shapes", type=click.Choice(["all", "large"]), default="all", show_default=True,
              help="The check's sweep: all shapes, or the smoke and large (timed) shapes only (faster).")
@click.option("--flush", type=click.Choice(["clean", "write"]), default="clean", show_default=True,
              help="The timer's L2 flush: clean (the suite's) or write (do_bench's and GPU MODE's: a table tuned "
                   "to their protocol).")
@click.option("--measure-baselines", is_flag=True,
              help="Time the baselines now instead of reusing the newest recorded bench run's.")
@click.option("--record", "record_file", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Agent mode: run one experiment on this workspace file.")
@click.option("-m", "--message", default="agent edit", help="With --record: what changed (a ledger column).")
@click.option("--report", "report", is_flag=True, help="Write PNG + Markdown for every ledger (or PROBLEMS').")
@click.option("--base-url", default=None, help="LLM endpoint (default $OPENAI_BASE_URL).")
@click.option("--model", default=None, help="LLM model (default $KSUITE_MODEL).")
@click.option("--max-tokens", type=int, default=None, help="LLM: stop after this many tokens in all.")
@click.option("--max-cost", type=float, default=None, help="LLM: stop after this many USD (with --price-in/out).")
@click.option("--price-in", type=float, default=0.0, help="LLM: USD per million prompt tokens.")
@click.option("--price-out", type=float, default=0.0, help="LLM: USD per million completion tokens.")
@click.option("--gpus", default=None, help="all | 0,1,...: one problem's loop per GPU at a time (its candidates timed "
              "there, never two on one GPU); one GPU: that GPU, as without it.")
def optimize(problems, start, strategy, budget, total_budget, target, plateau, name, seed, rounds, per_bucket,
             probes_only, splits, only_buckets, shapes, plan, plan_gpu, timeout, check_shapes, flush,
             measure_baselines, record_file, message, report, base_url, model, max_tokens, max_cost, price_in,
             price_out, gpus):
    """Improve a solution: propose, check, time side by side against the best, keep only real wins."""
    from suite.optimize import command
    from suite.registry import Registry

    if report:
        return _report(problems)
    if not problems:
        raise click.UsageError("name a PROBLEM (or pass --report)")
    _check_shapes(problems, start, strategy, tuple(shapes))
    if plan:
        return _plan(problems, start, per_bucket, probes_only, _splits(splits), tuple(only_buckets), plan_gpu,
                     tuple(shapes))
    limits = Limits(plateau=plateau or None, target_pct_sol=target,
                    problem_budget_s=budget * 60 if budget else None,
                    total_budget_s=total_budget * 60 if total_budget else None)
    llm = dict(base_url=base_url, model=model, max_tokens_total=max_tokens, max_cost_usd=max_cost,
               price_in_per_mtok=price_in, price_out_per_mtok=price_out)
    settings = command.Settings(strategy, start, name, limits, seed, timeout, llm, check_shapes, measure_baselines,
                                rounds, per_bucket, probes_only, _splits(splits), tuple(only_buckets), flush,
                                tuple(shapes))
    devices = _devices(gpus, strategy, record_file)  # before anything starts CUDA in this process
    if record_file:
        command.record(problems[0], record_file, message, settings, Registry())
        return
    if len(devices) > 1:
        from suite.distribute.optimize import run_spread

        results = run_spread(problems, settings, devices, echo=click.echo)
    else:
        results = command.run_problems(problems, settings, Registry())
    failure = command.nothing_evaluated(results)
    if failure:  # it ran, and nothing came of it: a failure (1), not a usage error
        click.echo(f"Error: {failure}", err=True)
        sys.exit(exit_codes.FAILED)


def _check_shapes(problems, start, strategy, shapes: tuple) -> None:
    """--shape: only for a table search (a family file, --strategy search), each shape one of every problem's
    and none held out; else a usage error naming the file, before anything is compiled or timed."""
    if not shapes:
        return
    from suite.optimize.table_command import ShapeRefused, is_family, users_shapes
    from suite.registry import Registry

    registry = Registry()
    for name in problems:
        problem = registry.problem(name)
        ref = registry.solution(problem, start)
        if strategy != "search" or not is_family(ref):
            raise click.UsageError(f"--shape: {ref.path} is not a family file with BUCKETS searched by --strategy "
                                   "search (the shapes a table search tunes at)")
        try:
            users_shapes(Path(problem.path), shapes)
        except ShapeRefused as exc:
            raise click.UsageError(str(exc)) from None


def _plan(problems, start, per_bucket, probes_only, splits, only_buckets, gpu=None, shapes=()) -> None:
    """--plan: each problem's table search as it would go, from the family file (with --split's edges)."""
    import tempfile

    from suite.optimize import dispatch
    from suite.optimize.table_command import is_family, split_start
    from suite.optimize.table_plan import plan_lines
    from suite.registry import Registry

    registry = Registry()
    for name in problems:
        problem = registry.problem(name)
        ref = registry.solution(problem, start)
        if not is_family(ref):
            raise click.UsageError(f"--plan: {ref.path} is not a family file with BUCKETS (a table search's start)")
        with tempfile.TemporaryDirectory() as work:
            ref, fresh = split_start(ref, splits, Path(work))
            source = Path(ref.path).read_text()
        stray = dispatch.stray_pattern_error(registry.solution(problem, start).path, source, only_buckets)
        if stray:
            raise click.UsageError(stray)
        for line in plan_lines(Path(problem.path), source, per_bucket, only_buckets, probes_only, frozenset(fresh),
                               gpu, shapes):
            click.echo(line)


def _devices(gpus: str | None, strategy: str, record_file) -> list:
    """--gpus: the local GPUs to spread the loops over; one is this process pinned to it (suite/distribute)."""
    if not gpus:
        return []
    from suite.distribute import local_gpus

    if strategy == "agent" or record_file:
        raise click.UsageError("--gpus spreads the search and llm loops; an agent runs its own experiments")
    try:
        return local_gpus.choose_and_pin(gpus)
    except local_gpus.GpuChoiceError as exc:
        raise click.UsageError(str(exc)) from None


def _report(problems) -> None:
    from harness.environment import gpu_slug
    from suite.optimize.command import optimize_root, safe
    from suite.optimize.report import write_reports

    root = optimize_root(gpu_slug())
    paths = sorted(root.glob("*.tsv"))
    if problems:
        paths = [p for p in paths if any(p.stem.startswith(safe(n) + "-") for n in problems)]
    if not paths:
        raise click.ClickException(f"no optimisation ledgers under {root}")
    for md in write_reports(paths):
        click.echo(f"wrote {md}" + (f" and {md.with_suffix('.png').name}" if md.with_suffix(".png").exists() else ""))


def _splits(texts: tuple) -> tuple:
    """--split NAME=EDGE options as (name, edge) pairs; a malformed one is a usage error."""
    out = []
    for text in texts:
        name, sep, edge = text.partition("=")
        if not sep or not name.strip() or not edge.strip().isdigit() or int(edge) < 1:
            raise click.UsageError(f"--split {text!r}: expected NAME=EDGE, a size constant and a whole number "
                                   "(rows=256)")
        out.append((name.strip(), int(edge)))
    return tuple(out)


commands = [optimize]

