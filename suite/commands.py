"""What each CLI command does, kept out of the click layer so tests can call it directly."""

from __future__ import annotations

import textwrap
from dataclasses import replace
from pathlib import Path

import click
from tabulate import tabulate

from harness import Options, evaluate_problem
from harness.dtype_choice import canonical_request
from harness.loader import load_problem
from suite import confirm as confirm_mod
from suite import exit_codes, goals, selection
from suite import report as report_mod
from suite import resume as resume_mod
from suite.bench import run_bench
from suite.confirm import COMPUTE_WITHIN, MAX_US, WITHIN, close_groups, confirm_into, verdict_changes
from suite.preflight import preflight
from suite.registry import Registry
from suite.report import num_text, shape_text
from suite.results_store import RunFile, find_run, load_calibration, new_run_id, save_calibration

NOTHING_TIMED = ("No CUDA device: correctness was checked through Triton's interpreter on small shapes; "
                 "nothing was timed.")


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def device_slug() -> str:
    from harness.environment import gpu_slug

    return gpu_slug()


def list_problems(suite_name: str, kernelbench: Path | None) -> str:
    registry = Registry(kernelbench_dir=kernelbench)
    rows = []
    for ref in registry.problems(suite_name):
        meta = load_problem(ref.path, f"ksuite_list_{len(rows)}").meta
        shapes = [report_mod.shape_text(s) for s in (meta.large_shapes or meta.shapes or meta.small_shapes)]
        sols = ", ".join(s.name for s in registry.solutions(ref)) or "-"
        rows.append([ref.name, meta.bound, ",".join(meta.dtypes), " ".join(shapes), sols])
    text = tabulate(rows, headers=["problem", "bound", "dtypes", "large shapes", "solutions"])
    extracted = registry.extracted_problems() if suite_name == "default" and kernelbench is None else []
    if extracted:
        rows = []
        for ref in extracted:
            meta = load_problem(ref.path, f"ksuite_list_x{len(rows)}").meta
            shapes = [report_mod.shape_text(s) for s in (meta.large_shapes or meta.shapes)]
            rows.append([ref.name, ",".join(meta.dtypes), " ".join(shapes), len(registry.solutions(ref))])
        text += "\n\nExtracted from models (`ksuite extract`; run them by name):\n" + tabulate(
            rows, headers=["problem", "dtypes", "shape", "solutions"])
    return text


def base_options(shapes: str, dtypes: tuple, timeout: float, time: bool) -> Options:
    interpret = not cuda_available()
    calibration = None if interpret else ensure_calibration()
    return Options(shapes=shapes, dtypes=tuple(dtypes), time=time and not interpret, interpret=interpret,
                   timeout_s=timeout,
                   copy_bandwidth=calibration and calibration["copy_bandwidth_Bps"],
                   matmul_rate=calibration and calibration["matmul_flops"])


def check(problem: str, solution: str | None, shapes: str, dtypes: tuple, timeout: float,
          kernelbench: Path | None, shape_texts: tuple = (), verbose: bool = False) -> bool:
    registry = Registry(kernelbench_dir=kernelbench)
    ref = registry.problem(problem)
    sols = [registry.solution(ref, solution)] if solution else registry.solutions(ref)
    dtypes = preflight([ref], dtypes, click.echo, shapes)
    if not sols:
        raise click.ClickException(f"{ref.name}: no solutions in {registry.solutions_dir / ref.name}")
    options = replace(base_options(shapes, dtypes, timeout, time=False),
                      custom_shapes=selection.shape_specs([ref], shape_texts))
    if options.interpret:
        click.echo("No CUDA device: checking through Triton's interpreter on "
                   + ("the shapes asked for." if options.custom_shapes else "small shapes."))

    def on_event(event: dict) -> None:
        if event["event"] == "start":
            click.echo(f"{ref.name} / {event['impl']}")
        elif event["event"] == "stage":
            click.echo("  " + stage_line(event))
        elif event["event"] == "integrity":  # the probe passed: only its time to say
            click.echo(f"  {'integrity':<12} pass  source check and one watched call  ({event['seconds']:.1f} s)")
        elif event["event"] in ("error", "crash", "fatal"):
            click.echo(f"  error: {event['message']}")
            if verbose and event.get("traceback"):  # the candidate's own traceback (harness/blame.py)
                click.echo(textwrap.indent(event["traceback"].rstrip(), "    "))
        elif event["event"] == "skip":
            click.echo(f"{ref.name} / {event['impl']}: skipped: {event['message']}")

    records = evaluate_problem(ref, sols, options, env={}, with_baselines=False, on_event=on_event)
    return bool(records) and all(r.correct is not False for r in records)  # None: skipped, with its reason


def stage_line(e: dict) -> str:
    status = "skip" if e.get("skipped") else ("pass" if e["passed"] else "FAIL")
    errs = ""
    if e.get("max_abs_err") is not None:
        errs = f"  max abs {e['max_abs_err']:.2e}  rel L2 {e['rel_l2_err']:.2e}"
    where = f"  at {report_mod.shape_text(e['shape'])} {e['dtype']}" if not e["passed"] and e.get("shape") else ""
    took = f"  ({e['seconds']:.1f} s)" if e.get("seconds") is not None else ""
    return f"{e['stage']:<12} {status}{errs}  {e['detail']}{where}{took}"


def bench_plan(registry: Registry, problems: tuple, suite_name: str, solutions: tuple) -> list:
    refs = [registry.problem(p) for p in problems] if problems else registry.problems(suite_name)
    plan = []
    for ref in refs:
        sols = [registry.solution(ref, s) for s in solutions] if solutions else registry.solutions(ref)
        plan.append((ref, sols))
    return plan


# What decides what a bench run measures, and the click parameters behind each: stored with the run and
# kept by --resume (suite/resume.py).
BENCH_IDENTITY = {"problems": ("problems",), "suite": ("suite_name",), "solutions": ("solutions",),
                  "shapes": ("shapes",), "shape": ("shape_texts",), "dtypes": ("dtypes",),
                  "baselines": ("no_baselines", "baseline_list"), "kernelbench": ("kernelbench",)}


def bench_identity(problems, suite_name, solutions, shapes, shape_texts, dtypes, with_baselines, baselines,
                   kernelbench) -> dict:
    """bench's options as JSON values; baselines: "all", a list of names, or [] (--no-baselines)."""
    chosen = [] if not with_baselines else ("all" if baselines is None else list(baselines))
    return {"problems": list(problems), "suite": suite_name, "solutions": list(solutions), "shapes": shapes,
            "shape": list(shape_texts), "dtypes": list(canonical_request(tuple(dtypes))), "baselines": chosen,
            "kernelbench": str(kernelbench) if kernelbench else None}


def from_identity(o: dict) -> tuple:
    baselines = None if o["baselines"] in ("all", []) else tuple(o["baselines"])
    return (tuple(o["problems"]), o["suite"], tuple(o["solutions"]), o["shapes"], tuple(o["shape"]),
            tuple(o["dtypes"]), o["baselines"] != [], baselines, Path(o["kernelbench"]) if o["kernelbench"] else None)


def bench(problems: tuple, suite_name: str, solutions: tuple, shapes: str, dtypes: tuple, with_baselines: bool,
          resume: str | None, timeout: float, as_json: bool, kernelbench: Path | None, shape_texts: tuple = (),
          baselines: tuple | None = None, verbose: bool = False, baseline_cache: str = "off",
          baseline_max_age_days: float = 7.0, gpus: str | None = None, ray: str | None = None,
          confirm: bool = False) -> bool:
    """With `confirm`, the run's close calls are then timed again paired (`ksuite confirm`, a second run file), so
    one command gives the verdict a user can trust at a few microseconds."""
    from harness.environment import fingerprint, gpu_name

    if confirm and (as_json or not with_baselines):
        raise click.UsageError("--confirm re-times close calls beside the baselines and prints a table: "
                               "not with --no-baselines or --json")

    spread_over = where_to_run(gpus, ray)  # before anything starts CUDA in this process
    slug = device_slug()
    asked = bench_identity(problems, suite_name, solutions, shapes, shape_texts, dtypes, with_baselines, baselines,
                           kernelbench)
    run, chosen = resume_mod.open_run("bench", resume, slug, gpu_name(), asked, BENCH_IDENTITY,
                                      lambda line: click.echo(line, err=True))
    problems, suite_name, solutions, shapes, shape_texts, dtypes, with_baselines, baselines, kernelbench = \
        from_identity(chosen)
    registry = Registry(kernelbench_dir=kernelbench)
    plan = bench_plan(registry, problems, suite_name, solutions)
    dtypes = preflight([ref for ref, _ in plan], dtypes, lambda line: click.echo(line, err=True), shapes)
    options = replace(base_options(shapes, dtypes, timeout, time=True),
                      custom_shapes=selection.shape_specs([ref for ref, _ in plan], shape_texts))
    if baselines is not None:
        options = replace(options, baselines=baselines)
    options = replace(options, baseline_cache=baseline_cache, baseline_max_age_s=baseline_max_age_days * 86400.0)
    run = run or resume_mod.create_run("bench", slug, gpu_name(), chosen)
    try:
        outcome = spread_over(plan, options, fingerprint(), run, with_baselines, resume=bool(resume), quiet=as_json,
                              verbose=verbose)
    except KeyboardInterrupt:
        interrupted(run)
    records = run.read()
    click.echo(report_mod.render(records, "json" if as_json else "table"))
    if not as_json:
        click.echo(f"\n{len(outcome.records)} measurements ({len(outcome.failed)} failed"
                   + (f", {outcome.skipped} already recorded" if outcome.skipped else "")
                   + f") in {outcome.wall_s:.0f} s; recorded in {run.path}")
        if options.interpret:
            click.echo(NOTHING_TIMED)
        elif with_baselines:
            finished = report_mod.finish(records)
            rows = goals.evaluate(finished)
            click.echo(f"goals: {goals.summary_line(rows)} (`ksuite goals {run.run_id}` for each solution's verdict)")
            for line in goals.borrowed_tables(rows):
                click.echo(f"goals: {line}")
            close = confirm_mod.hint(finished, run.run_id)
            if close and not confirm:
                click.echo(f"goals: {close}")
            if confirm:
                click.echo(f"\nconfirm {run.run_id}: the close calls again, paired")
                # confirm's timeout is a whole child's (a group's every shape and baseline), the bench's a hang's
                if confirm_run(run, timeout=max(timeout, 600.0)) != exit_codes.OK:
                    return False
    return not any(r.correct is False for r in records)


def where_to_run(gpus: str | None, ray: str | None):
    """The function that runs the plan: run_bench on one GPU (this process pinned to it with --gpus N),
    suite/distribute over several local GPUs (--gpus) or over Ray tasks (--ray). One-line errors."""
    from functools import partial

    from suite.distribute import local_gpus, ray_backend, spread

    if gpus and ray:
        raise click.UsageError("--gpus and --ray: give one (Ray places each group on a GPU itself)")
    if ray:
        try:
            ray_backend.import_ray()
        except ray_backend.RayMissing as exc:
            raise click.ClickException(str(exc)) from None
        return partial(_ray_run, address=ray)
    if not gpus:
        return run_bench
    try:
        devices = local_gpus.choose_and_pin(gpus)
    except local_gpus.GpuChoiceError as exc:
        raise click.ClickException(str(exc)) from None
    if len(devices) == 1:
        return run_bench
    return partial(_spread_run, devices=devices, spread=spread)


def _spread_run(plan, options, env, run, with_baselines, devices, spread, **kw):
    return spread.run_spread(plan, options, env, run, devices, with_baselines, **kw)


def _ray_run(plan, options, env, run, with_baselines, address, **kw):
    from suite.distribute.ray_backend import run_ray

    return run_ray(plan, options, env, run, address, with_baselines, **kw)


def interrupted(run: RunFile) -> None:
    """Ctrl-C: every finished record is already on disk (one atomic append each); the child notices its
    parent is gone and exits. Say how to go on, with the shell's exit code for SIGINT."""
    n = len(run.read()) if run.path.exists() else 0
    click.echo(f"\nInterrupted: {n} measurements kept in {run.path}; resume with: "
               f"ksuite bench --resume {run.run_id}", err=True)
    raise SystemExit(exit_codes.INTERRUPTED)


def ensure_calibration(force: bool = False) -> dict:
    """This GPU's ceilings, measured once and cached under results/<gpu-slug>/calibration.json."""
    from harness.calibrate import calibrate as measure
    from harness.environment import fingerprint

    slug = device_slug()
    cached = None if force else load_calibration(slug)
    if cached:
        return cached
    data = {**measure(), "env": fingerprint()}
    save_calibration(slug, data)
    return data


def calibrate(force: bool) -> None:
    if not cuda_available():
        raise click.ClickException("calibrate needs a CUDA device; none is visible here")
    data = ensure_calibration(force)
    agree = data["timer_agreement"]
    click.echo(f"GPU: {data['env']['gpu']}\n"
               f"copy bandwidth: {data['copy_bandwidth_Bps'] / 1e9:.0f} GB/s (read + write)\n"
               f"matmul bf16: {data['matmul_bf16_flops'] / 1e12:.0f} TFLOP/s, "
               f"fp16: {data['matmul_fp16_flops'] / 1e12:.0f} TFLOP/s\n"
               f"timer check ({agree['kernel']}): harness {agree['harness_median_us']:.1f} us, "
               f"do_bench {agree['do_bench_median_us']:.1f} us ({agree['difference_pct']:+.1f} %)")


def report_chart(run: str | None, slug: str | None, path: Path) -> str:
    """The run as a PNG (suite/charts.py); a line saying where it went."""
    from suite.charts import ChartError, run_chart

    found = find_run(run, slug)
    try:
        run_chart(report_mod.finish(found.read()), f"run {found.run_id}", path)
    except ChartError as exc:
        raise click.UsageError(str(exc)) from None
    return f"chart: {path}"


def report(run: str | None, fmt: str, slug: str | None, summary: bool = False) -> str:
    """The run's table, its first line naming the run (JSON stays a plain list; each record has its run_id)."""
    found = find_run(run, slug)
    records = found.read()
    if fmt == "json":
        return report_mod.render(records, fmt) if records else "[]"
    heading = report_mod.run_heading(found.run_id, found.path, fmt)
    if not records:
        return f"{heading}\n(empty run)"
    if summary:
        return f"{heading}\n\n{report_mod.render_summary(records, fmt)}"
    return f"{heading}\n\n{report_mod.render(records, fmt)}"


def confirm_run(found: RunFile, within: float = WITHIN, max_us: float = MAX_US, timeout: float = 600.0) -> int:
    """Re-time run `found`'s close calls into a new run, print what changed and the goals with them; the exit code
    (also `ksuite bench --confirm`'s second half)."""
    from harness.environment import fingerprint
    from harness.jobs.pairwise import run_together

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
    click.echo(f"goals with the paired close calls: {goals.summary_line(goals.evaluate(result.records))}")
    return exit_codes.OK if not result.notes else exit_codes.FAILED
