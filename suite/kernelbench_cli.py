"""`ksuite kernelbench`: run KernelBench problems with our harness, write their baseline JSON, score
fast_p, export ModelNew files. Thin: submit/kernelbench*.py hold the format logic."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import click
from tabulate import tabulate

from submit import kernelbench_layout as layout
from submit.kernelbench import ScoreError, load_baseline, load_samples, read_json, render, score_samples
from submit.kernelbench_export import ExportError, choose, export
from submit.kernelbench_records import SUMMARY_HEADERS, RecordsError, baseline_json, samples, summary_rows
from submit.kernelbench_records import write_baselines as write_baseline_files
from suite import exit_codes
from suite import resume as resume_mod
from suite.registry import PROBLEMS_DIR, ROOT, SOLUTIONS_DIR, kernelbench_problems
from suite.results_store import find_run
from suite.selection import baseline_cache_mode, baseline_cache_options

DEFAULT_TREE = PROBLEMS_DIR / "kernelbench"
DEFAULT_SOLUTIONS = SOLUTIONS_DIR / "kernelbench"
KB_BASELINES = ("eager", "compile")  # KernelBench's two baseline files: torch eager, torch.compile default
ERRORS = (ScoreError, RecordsError, ExportError, layout.LayoutError)
# what decides what `kernelbench run` measures, and its click parameters: kept by --resume (suite/resume.py)
RUN_IDENTITY = {"tree": ("tree",), "level": ("level",), "ids": ("ids",), "solutions": ("solutions_dir",),
                "tolerance": ("tolerance",)}

folder = click.Path(exists=True, file_okay=False, path_type=Path)
tree_argument = click.argument("tree", required=False, default=DEFAULT_TREE, type=folder)
level_option = click.option("--level", default=1, show_default=True, help="KernelBench level (the levelN folder).")
ids_option = click.option("--ids", default=None, help="Only these problem ids, e.g. 1,19,23-30.")
solutions_option = click.option("--solutions", "solutions_dir", default=DEFAULT_SOLUTIONS, type=folder,
                                show_default=True, help="Candidate ModelNew files (naming: ksuite kernelbench "
                                "--help).")


class KernelBenchGroup(click.Group):
    """Format errors become one line and exit code 2, never a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except ERRORS as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(exit_codes.USAGE)


@click.group("kernelbench", cls=KernelBenchGroup)
def kernelbench_group():
    """KernelBench: run its problems here, write its baseline JSON, score fast_p, export ModelNew files.

    Candidates in a --solutions folder: level1/<id>_<Name>/<name>.py (this repo), level1/<id>_<Name>.py
    or <id>_<Name>.py (one per problem), or level_1_problem_<id>_sample_<s>_kernel.py (KernelBench's runs/).
    """


@kernelbench_group.command("run")
@tree_argument
@level_option
@ids_option
@solutions_option
@click.option("--tolerance", type=click.Choice(["ours", "kernelbench"]), default="ours", show_default=True,
              help="ours: each problem's META tolerances; kernelbench: their allclose (1e-4 fp32, 1e-2 fp16/bf16).")
@click.option("--resume", default=None, help="Add to the run with this id (or 'last') instead of a new one.")
@click.option("--timeout", default=600.0, show_default=True, help="Seconds before a candidate counts as hung.")
@click.option("--json", "as_json", is_flag=True, help="Print records as JSON instead of a table.")
@baseline_cache_options
def run_cmd(tree, level, ids, solutions_dir, tolerance, resume, timeout, as_json, cached_baselines, fresh_baselines,
            baseline_max_age):
    """Check and time TREE's level problems (default: problems/kernelbench) against their candidates, with
    eager and torch.compile baselines; record everything under results/<gpu>/ like `ksuite bench`."""
    from harness.environment import fingerprint, gpu_name
    from suite.bench import run_bench
    from suite.commands import NOTHING_TIMED, base_options, device_slug

    slug = device_slug()
    asked = {"tree": str(tree), "level": level, "ids": ids, "solutions": str(solutions_dir), "tolerance": tolerance}
    run, chosen = resume_mod.open_run("kernelbench run", resume, slug, gpu_name(), asked, RUN_IDENTITY,
                                      lambda line: click.echo(line, err=True))
    tree, level, ids, tolerance = Path(chosen["tree"]), chosen["level"], chosen["ids"], chosen["tolerance"]
    solutions_dir = Path(chosen["solutions"])
    problems = layout.select(kernelbench_problems(tree), level, layout.parse_ids(ids))
    plan = [(p, layout.candidates(solutions_dir, p)) for p in problems]
    for p, cands in plan:
        if not cands:
            click.echo(f"{p.name}: no candidate in {solutions_dir}; only its baselines run", err=True)
    options = replace(base_options("large", ("primary",), timeout, time=True), tolerance=tolerance,
                      baselines=KB_BASELINES, baseline_cache=baseline_cache_mode(cached_baselines, fresh_baselines),
                      baseline_max_age_s=baseline_max_age * 86400.0)
    run = run or resume_mod.create_run("kernelbench run", slug, gpu_name(), chosen)
    try:
        outcome = run_bench(plan, options, {**fingerprint(), "tolerance": tolerance}, run, resume=bool(resume),
                            quiet=as_json)
    except KeyboardInterrupt:
        click.echo(f"\nInterrupted: finished records are in {run.path}; go on with: ksuite kernelbench run "
                   f"... --resume {run.run_id}", err=True)
        raise SystemExit(exit_codes.INTERRUPTED) from None
    records = run.read()
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in records], default=str))
    else:
        click.echo(tabulate(summary_rows(records), headers=SUMMARY_HEADERS))
        click.echo(f"\n{len(outcome.records)} measurements ({len(outcome.failed)} failed) in "
                   f"{outcome.wall_s:.0f} s, tolerance {tolerance}; recorded in {run.path}")
        click.echo(NOTHING_TIMED if options.interpret else
                   f"next: ksuite kernelbench baseline {run.run_id}; ksuite kernelbench score {run.run_id} "
                   "--baseline eager")
    failed = any(r.correct is False for r in records if r.kind == "solution")  # None: skipped
    sys.exit(exit_codes.FAILED if failed else exit_codes.OK)


@kernelbench_group.command("baseline")
@click.argument("run", required=False)
@click.option("--gpu", "slug", default=None, help="GPU folder under results/ (default: newest run anywhere).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for the JSON files (default: results/<gpu>/kernelbench/<run id>/).")
def baseline_cmd(run, slug, out):
    """Write KernelBench's baseline_time_torch.json and baseline_time_torch_compile_inductor_default.json
    from RUN's eager and torch.compile timings (default: the newest run)."""
    run_file = find_run(run, slug)
    out = out or run_file.path.parent / "kernelbench" / run_file.run_id
    for name, path in write_baseline_files(run_file.read(), out).items():
        entries = sum(len(v) for v in json.loads(path.read_text()).values())
        click.echo(f"{name}: {entries} problems -> {path}")


@kernelbench_group.command("score")
@click.argument("results")
@click.option("--baseline", required=True, help="A baseline-times JSON (KernelBench's or ours), or 'eager' / "
              "'compile' to use the timings recorded in RESULTS itself (our runs only).")
@click.option("--level", default=None, help="Only this level (e.g. level1).")
@click.option("--solution", default=None, help="Score this solution (our runs; default: each problem's best).")
@click.option("--json", "as_json", is_flag=True)
def score_cmd(results, baseline, level, solution, as_json):
    """fast_p for p in 0, 0.5, 0.8, 1, 1.5, 2 and the geometric-mean speedup of RESULTS: a KernelBench-style
    JSON of {level, problem, correct, runtime_ms} records, or one of our runs (a .jsonl path, a run id, 'last')."""
    records = None
    if results.endswith(".json") and Path(results).is_file():
        sampled = load_samples(read_json(Path(results)))
    else:
        records = find_run(None if results == "last" else results).read()
        sampled = samples(records, solution)
    if baseline in KB_BASELINES and not Path(baseline).is_file():
        if records is None:
            raise ScoreError(f"--baseline {baseline} needs one of our runs as RESULTS, not a JSON file")
        times = load_baseline(baseline_json(records, baseline))
    else:
        times = load_baseline(read_json(Path(baseline)))
    result = score_samples(sampled, times, level)
    if as_json:
        click.echo(json.dumps({"count": result.count, "fast_p": {f"{p:g}": v for p, v in result.fast_p.items()},
                               "geomean_speedup": result.geomean_speedup, "untimed": result.untimed}))
    else:
        click.echo(render(result))


@kernelbench_group.command("export")
@tree_argument
@level_option
@ids_option
@solutions_option
@click.option("--solution", "name", default=None, help="Export this solution (by name) for every problem.")
@click.option("--run", default=None, help="Pick each problem's fastest correct solution in this run (id or 'last').")
@click.option("--naming", type=click.Choice(layout.NAMINGS), default="problem", show_default=True,
              help="problem: level1/<id>_<Name>.py; runs: level_1_problem_<id>_sample_0_kernel.py "
              "(KernelBench's runs/<run_name>/ layout, for their eval_from_generations).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("kernelbench_export"),
              show_default=True)
def export_cmd(tree, level, ids, solutions_dir, name, run, naming, out):
    """Write solutions as self-contained ModelNew files in KernelBench's naming, each with a header naming
    its source. Problems without a solution are skipped."""
    records, run_id = None, None
    if run:
        run_file = find_run(None if run == "last" else run)
        records, run_id = run_file.read(), run_file.run_id
    choices = []
    for problem in layout.select(kernelbench_problems(tree), level, layout.parse_ids(ids)):
        cands = layout.candidates(solutions_dir, problem)
        if cands:
            choices.append(choose(problem, cands, name, records, run_id))
        else:
            click.echo(f"{problem.name}: no solution in {solutions_dir}; skipped", err=True)
    for choice, path in zip(choices, export(choices, out, naming, ROOT)):
        click.echo(f"{choice.problem.name}: {choice.solution.name} ({choice.why}) -> {path}")


commands = [kernelbench_group]
