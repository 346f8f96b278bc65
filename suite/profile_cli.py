"""`ksuite profile`, `ksuite extract`, `ksuite verify`: from a model to the kernels that speed it up."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

MODEL_HELP = ("A bundled model (llama3-8b, llama3-8b:4-layers, tiny, gpt2, gpt2-tiny; NAME:N-layers), "
              "hf:path/config.json (transformers, random weights) or path/file.py:factory returning "
              "(model, example_inputs).")


def _progress(quiet: bool):
    """One status line on stderr, rewritten in place on a terminal, one line each in a log."""
    tty = sys.stderr.isatty()

    def say(line: str) -> None:
        if not quiet:
            click.echo(f"\r\033[K{line}" if tty else line, err=True, nl=not tty)
    return say


def _friendly(fn, *args, **kwargs):
    from suite.profile.extract import ExtractError
    from suite.profile.model_spec import ModelError
    from suite.profile.verify import VerifyError

    try:
        return fn(*args, **kwargs)
    except (ModelError, ExtractError, VerifyError) as exc:
        raise click.ClickException(str(exc)) from None


def model_options(fn):
    for option in reversed([
        click.option("--batch", default=1, show_default=True, help="Sequences per step."),
        click.option("--seq", default=128, show_default=True, help="Tokens per sequence."),
        click.option("--dtype", default="bf16", show_default=True, help="bf16, fp16, fp32 or fp64."),
        click.option("--device", default=None, help="Default: cuda if visible, else cpu."),
    ]):
        fn = option(fn)
    return fn


@click.command("profile", help="Profile MODEL: time per op group, mapped to registry problems, ranked by "
                                "Amdahl's law. MODEL is " + MODEL_HELP[0].lower() + MODEL_HELP[1:])
@click.argument("model")
@model_options
@click.option("--mode", type=click.Choice(["forward", "train"]), default="forward", show_default=True)
@click.option("--top", default=10, show_default=True, help="Rows in the table and the chart.")
@click.option("--steps", default=3, show_default=True, help="Profiled steps (after the warm-up).")
@click.option("--warmup", default=2, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the whole profile as JSON (input of `ksuite extract`).")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also draw a PNG: time share per group and its Amdahl ceiling.")
@click.option("--trace", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the raw torch.profiler trace (Chrome JSON).")
def profile_cmd(model, batch, seq, dtype, device, mode, top, steps, warmup, as_json, plot, trace):
    from suite.profile.profile_run import profile_model
    from suite.profile.render import plot as draw
    from suite.profile.render import table, totals

    result = _friendly(profile_model, model, batch, seq, dtype, mode, steps, warmup, device=device,
                       progress=_progress(False), trace_out=trace)
    if sys.stderr.isatty():
        click.echo("", err=True)
    if as_json:
        click.echo(json.dumps(result, indent=1, default=str))
    else:
        click.echo(totals(result) + "\n\n" + table(result, top))
    if plot:
        draw(result, plot, top)
        click.echo(f"chart: {plot}", err=as_json)


@click.command("extract")
@click.argument("profile", type=click.Path(path_type=Path))
@click.option("--top", default=5, show_default=True, help="Distinct (problem, shape, dtype) to write.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for <model>/<problem>__<shape>.py (default: problems/extracted).")
def extract_cmd(profile, top, out_dir):
    """Write PROFILE's top ops as KernelBench-format problems with the model's shapes."""
    from suite.profile.extract import extract

    for path in _friendly(extract, profile, top, out_dir):
        name = f"extracted/{path.parent.name}/{path.stem}"
        click.echo(f"{path}  (ksuite check {name}; ksuite bench {name})")


@click.command("verify")
@click.argument("model")
@click.option("--use", "use", multiple=True, required=True,
              help="best (our fastest measured solution per module, where it beats the model's op), or "
                   "PROBLEM/SOLUTION or PROBLEM=file.py; repeatable.")
@model_options
@click.option("--profile", "profile_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="The profile of this model (`ksuite profile --json`): its prediction.")
@click.option("--inputs", default=2, show_default=True, help="Random inputs to check on.")
@click.option("--rounds", default=10, show_default=True, help="Timing rounds (each times every model once).")
@click.option("--no-compile", is_flag=True, help="Do not time torch.compile of the unmodified model.")
@click.option("--json", "as_json", is_flag=True)
def verify_cmd(model, use, batch, seq, dtype, device, profile_path, inputs, rounds, no_compile, as_json):
    """Swap solutions into MODEL, check it against the unmodified model, time both and torch.compile."""
    from suite import exit_codes
    from suite.profile.verify_run import render, run_verify

    report = _friendly(run_verify, model, use, batch, seq, dtype, profile_path, inputs, rounds, not no_compile,
                       device, _progress(False))
    click.echo(json.dumps(report, indent=1, default=str) if as_json else render(report))
    sys.exit(exit_codes.OK if report["ok"] else exit_codes.FAILED)


@click.command("bench-plan")
@click.argument("problems", nargs=-1, required=True)
@click.option("--gpu", "gpu", default=None,
              help="Whose results/<gpu-slug>/ to read (default: this machine's GPU; none on a CPU).")
@click.option("--cuda", is_flag=True, help="Also bench the CUDA C++ solutions (each builds for ~30 s).")
def bench_plan_cmd(problems, gpu, cuda):
    """Which solutions of each PROBLEM (or every problem of `extracted/<model>`) are worth a bench, and the
    order to bench them in (cheapest first): one line per problem, tab-separated: name, solutions, why."""
    from suite.profile.bench_plan import plan, resolve
    from suite.registry import Registry, RegistryError
    from suite.results_store import RESULTS_DIR

    if gpu is None:
        import torch

        if torch.cuda.is_available():
            from harness.environment import gpu_slug

            gpu = gpu_slug()
    registry = Registry()
    try:
        refs = resolve(registry, problems)
    except RegistryError as exc:
        raise click.ClickException(str(exc)) from None
    for item in plan(registry, refs, RESULTS_DIR / gpu if gpu else None, cuda):
        click.echo(item.line())


commands = [profile_cmd, extract_cmd, verify_cmd, bench_plan_cmd]
