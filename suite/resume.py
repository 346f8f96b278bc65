"""`--resume` keeps a run what it was: the same device, the same options, and no stale measurements.

Each run stores what made it in `<run>.run.json` beside its records (the command, the device folder and
GPU, the options that decide what is measured), written once, atomically, when the run is created. A
resume on another device, or with options that differ from the stored ones, is refused; options not given
on the command line are taken from the run. An implementation whose source changed since it was recorded
is measured again (its new records supersede the old ones, see RunFile.read).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import click

from harness.environment import gpu_slug
from harness.ran_hash import same_run
from harness.spec import file_hash
from suite.results_store import ResultsError, RunFile, find_run, new_run_id


class ResumeError(ResultsError):
    """A resume that would change what the run is; one line, a usage error."""


@dataclass(frozen=True)
class RunIdentity:
    command: str  # bench | kernelbench run
    device: str  # the results/<slug> folder of the machine that made the run
    gpu: str
    options: dict  # JSON values: what is measured (selection, shapes, dtypes, baselines)


def identity_path(run: RunFile) -> Path:
    return run.path.with_suffix(".run.json")


def write_identity(run: RunFile, identity: RunIdentity) -> None:
    path = identity_path(run)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(identity), indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


def read_identity(run: RunFile) -> RunIdentity | None:
    path = identity_path(run)
    if not path.is_file():
        return None
    try:
        return RunIdentity(**json.loads(path.read_text()))
    except (ValueError, TypeError) as exc:
        raise ResultsError(f"{path}: not a run's options file ({exc})") from None


def given_on_command_line(params: dict[str, tuple[str, ...]]) -> set[str] | None:
    """Which option keys the user typed (click parameters per key); None outside a click command."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return None
    typed = (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)
    return {key for key, names in params.items()
            if any(ctx.get_parameter_source(n) in typed for n in names if n in ctx.params)}


def _text(value) -> str:
    if isinstance(value, list):
        return ",".join(map(str, value)) or "none"
    return str(value)


def resume_options(run: RunFile, now: RunIdentity, given: set[str] | None) -> tuple[dict, str]:
    """(the options to measure with, one line saying so). Raises ResumeError for another device or
    command, or for typed options that differ from the run's (every option counts as typed if `given`
    is None)."""
    stored = read_identity(run)
    if stored is None:
        return now.options, _unrecorded(run, now)
    if stored.device != now.device:
        raise ResumeError(f"{run.path}: run {run.run_id} was recorded on {stored.device} ({stored.gpu}); this "
                          f"machine is {now.device}: resume it there, or start a new run here")
    if stored.command != now.command:
        raise ResumeError(f"{run.path}: run {run.run_id} was made by `ksuite {stored.command}`; resume it with that")
    typed = set(now.options) if given is None else given
    conflicts = [f"{k} {_text(now.options[k])} (the run has {_text(stored.options.get(k))})"
                 for k in now.options if k in typed and now.options[k] != stored.options.get(k)]
    if conflicts:
        raise ResumeError(f"{run.path}: --resume {run.run_id} with other options: {'; '.join(conflicts)}; "
                          "resume without them, or start a new run")
    kept = [f"{k} {_text(v)}" for k, v in stored.options.items() if now.options.get(k) != v]
    return ({**now.options, **stored.options},
            f"resuming {run.run_id} with its recorded options" + (f" ({', '.join(kept)})" if kept else ""))


def open_run(command: str, resume: str | None, device: str, gpu: str, asked: dict,
             params: dict[str, tuple[str, ...]], echo) -> tuple[RunFile | None, dict]:
    """(the run to resume or None for a new one, the options to measure with). `params` names the click
    parameters behind each option key, to tell typed options from defaults."""
    if not resume:
        return None, asked
    run = find_run(None if resume == "last" else resume, device)
    options, line = resume_options(run, RunIdentity(command, device, gpu, asked), given_on_command_line(params))
    echo(line)
    return run, options


def create_run(command: str, device: str, gpu: str, options: dict) -> RunFile:
    """A new run, its options file written before its first record."""
    run = RunFile.create(device, new_run_id())
    write_identity(run, RunIdentity(command, device, gpu, options))
    return run


def _unrecorded(run: RunFile, now: RunIdentity) -> str:
    """A run from before options were stored: its device from its folder and records, options unknown."""
    gpus = sorted({r.gpu for r in run.read()}) if run.path.is_file() else []
    if run.path.parent.name != now.device or (gpus and gpus != [now.gpu]):
        raise ResumeError(f"{run.path}: run {run.run_id} was recorded on {run.path.parent.name} "
                          f"({', '.join(gpus) or 'no records'}, inferred: it has no options file); this machine is "
                          f"{now.device} ({now.gpu}): resume it there, or start a new run here")
    return (f"resuming {run.run_id}: it has no options file (recorded before runs stored them), so its device is "
            f"inferred from its folder and records ({', '.join(gpus) or now.device}) and the options given now "
            "are used")


def stale_implementations(run: RunFile, plan: list) -> set[tuple[str, str]]:
    """(problem, implementation) pairs whose recorded source_hash differs from the file's hash now (a solution's
    own file; a baseline's problem file), unless only another GPU's table changed (harness/ran_hash.py)."""
    solution_hash = {(p.name, s.name): file_hash(s.path) for p, sols in plan for s in sols if s.path}
    problem_hash = {p.name: file_hash(p.path) for p, _ in plan}
    solution_path = {(p.name, s.name): s.path for p, sols in plan for s in sols if s.path}
    stale = set()
    for r in run.read() if run.path.is_file() else []:
        now = problem_hash.get(r.problem) if r.kind == "baseline" else solution_hash.get((r.problem, r.solution))
        if r.source_hash and now and r.source_hash != now and not (
                r.kind == "solution" and same_run(r.ran_hash, solution_path[(r.problem, r.solution)], gpu_slug(r.gpu))):
            stale.add((r.problem, r.solution))
    return stale


def done_keys(run: RunFile, plan: list) -> tuple[set, list[str]]:
    """(keys a resume may skip, "problem/implementation" names measured again because their source changed)."""
    stale = stale_implementations(run, plan)
    done = {k for k in run.done_keys() if (k[0], k[1]) not in stale}
    return done, sorted(f"{p}/{s}" for p, s in stale)
