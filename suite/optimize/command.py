"""What `ksuite optimize` does, kept out of the click layer so tests can call it with their own folders.

results/<gpu>/optimize/ holds data only: each run's ledger (every experiment's description and source hash)
and its reports. The candidate files the loop writes (Triton's jit reads real files) and an agent's
workspace live in the user's cache, <cache>/optimize/<gpu>/<problem>-<run>/ (harness/cache_dirs.py:
$KSUITE_CACHE_DIR, else ~/.cache/kernelsuite); the kept file is the solution file under solutions/.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

import click

from harness import Options, SolutionRef
from harness.cache_dirs import cache_root
from suite import results_store
from suite.optimize import agent
from suite.optimize.evaluator import HarnessEvaluator
from suite.optimize.ledger import Ledger
from suite.optimize.loop import Loop, LoopResult, LoopSetup
from suite.optimize.stopping import Limits, Progress
from suite.optimize.table_command import is_family, run_table
from suite.registry import Registry


@dataclass
class Settings:
    strategy: str = "search"
    start: str = "triton_starter"
    name: str | None = None
    limits: Limits = Limits()
    seed: int = 0
    timeout_s: float = 600.0
    llm: dict | None = None  # LLMClient overrides (base_url, model, max_tokens_total, ...)
    check_shapes: str = "all"  # all | large: the check's sweep (large: smoke shapes + timed shapes)
    measure_baselines: bool = False  # False: reuse the newest recorded bench run's baselines if any
    rounds: int = 15  # table search: paired rounds per shape
    per_bucket: int = 12  # table search: experiments per bucket at most
    probes_only: bool = False  # table search: only the buckets without tuning shapes, at probe shapes
    splits: tuple = ()  # table search: (size name, edge) pairs added to BUCKETS first (dispatch.split)
    buckets: tuple = ()  # table search: glob patterns; only the buckets they match are searched
    flush: str = "clean"  # the timer's L2 flush: clean (the suite's) | write (do_bench's and GPU MODE's)
    shapes: tuple = ()  # table search: the user's own shapes (--shape specs), tuned at beside the tuning set


def optimize_root(slug: str) -> Path:
    """The ledgers and reports of this GPU's runs."""
    return Path(results_store.RESULTS_DIR) / slug / "optimize"


def candidates_root(slug: str) -> Path:
    """The candidate files and agent workspaces of this GPU's runs: a cache, never results/."""
    return cache_root() / "optimize" / slug


def ledger_path(slug: str, problem_name: str, run_id: str) -> Path:
    return optimize_root(slug) / f"{safe(problem_name)}-{run_id}.tsv"


def work_dir(slug: str, problem_name: str, run_id: str) -> Path:
    return candidates_root(slug) / f"{safe(problem_name)}-{run_id}"


def safe(name: str) -> str:
    return name.replace("/", "_")


def options_pair(settings: Settings) -> tuple[Options, Options]:
    """(check: every dtype, all shapes or the large ones, no timing; time: large shapes, primary dtype)."""
    from suite.commands import base_options

    return (base_options(settings.check_shapes, ("all",), settings.timeout_s, time=False),
            replace(base_options("large", ("primary",), settings.timeout_s, time=True), flush=settings.flush))


def recorded_baselines(problem_name: str, slug: str, flush: str = "clean") -> list:
    """Baseline records of the newest `ksuite bench` run on this GPU that has them for this problem, timed
    after the same L2 flush (a record that does not say which is not used)."""
    for path in results_store.runs_newest_first(slug=slug):  # by run id, never by file date
        try:
            found = [r for r in results_store.RunFile(path).read()
                     if r.problem == problem_name and r.kind == "baseline" and r.correct and r.median_us
                     and r.flush == flush]
        except results_store.ResultsError:
            continue
        if found:
            return found
    return []


def harness_evaluator(problem, settings: Settings, env: dict, slug: str) -> HarnessEvaluator:
    recorded = None if settings.measure_baselines else recorded_baselines(problem.name, slug, settings.flush)
    return HarnessEvaluator(problem, *options_pair(settings), env, recorded)


def make_proposer(settings: Settings, start_path: Path, machine_code=None, llm_client=None):
    if settings.strategy == "search":
        from suite.optimize.search import SearchProposer

        return SearchProposer(start_path.read_text(), seed=settings.seed)
    if settings.strategy == "llm":
        from suite.optimize.llm import LLMClient, LLMProposer

        return LLMProposer(llm_client or LLMClient.from_env(**(settings.llm or {})), machine_code)
    raise click.UsageError(f"unknown strategy {settings.strategy!r}")


def checked_llm_client(settings: Settings, echo=click.echo):
    """One client for the whole command (its token and cost budgets are the command's), its endpoint and
    key tried with one request before any loop starts: no key or no network is one line, not a ledger."""
    from suite.optimize.llm import LLMClient, LLMUnavailable

    client = LLMClient.from_env(**(settings.llm or {}))
    try:
        echo(client.precheck())
    except LLMUnavailable as exc:
        raise click.ClickException(str(exc)) from None
    return client


def nothing_evaluated(results: list[LoopResult]) -> str | None:
    """Why the command did nothing, when no loop screened or checked a single proposal (and no Ctrl-C)."""
    if not results or any(r.evaluated for r in results) or results[-1].reason.startswith("interrupted"):
        return None
    failed = [row.description for r in results for row in r.rows if row.correct is None]
    last = f"; last: {failed[-1]}" if failed else ""
    return f"no proposal could be evaluated ({results[-1].reason}{last})"


def offline_views(problem, slug: str):
    """(machine code for the LLM's prompt, static screen for the loop), both compiled offline for this
    machine's GPU at the timed shapes (the large ones, primary dtype; the prompt reads the first);
    (None, None) without a GPU, where nothing is timed anyway."""
    from harness.loader import load_problem
    from suite.optimize.machine_code import MachineCode, target_here
    from suite.optimize.screen import StaticScreen

    target = target_here(slug)
    if target is None:
        return None, None
    meta = load_problem(Path(problem.path), "ksuite_offline_views_meta").meta
    shapes, dtype = meta.sweep("large"), meta.dtypes[0]
    return (MachineCode(Path(problem.path), target, shapes[0], dtype),
            StaticScreen(Path(problem.path), target, shapes, dtype))


def run_problems(problems: tuple, settings: Settings, registry: Registry, evaluator_for=None,
                 echo=click.echo) -> list[LoopResult]:
    """One loop per problem, under one total budget; Ctrl-C ends the current one and the rest."""
    from harness.environment import fingerprint, gpu_slug

    env = fingerprint()
    slug, run_id = gpu_slug(), results_store.new_run_id()
    llm_client = checked_llm_client(settings, echo) if settings.strategy == "llm" else None
    started = time.monotonic()
    results = []
    for name in problems:
        problem = registry.problem(name)
        start = registry.solution(problem, settings.start)
        if settings.strategy == "agent":
            echo(start_agent(problem, start, settings, registry, slug, run_id, env["gpu"]))
            continue
        if settings.splits and not (settings.strategy == "search" and is_family(start)):
            raise click.UsageError(f"--split: {start.path} is not a family file with BUCKETS searched by "
                                   "--strategy search (there are no buckets to split)")
        if settings.strategy == "search" and evaluator_for is None and is_family(start):
            results.append(run_table(problem, start, settings, registry, ledger_path(slug, problem.name, run_id),
                                     work_dir(slug, problem.name, run_id), run_id, env, echo))
            continue
        setup = LoopSetup(problem, start, kept_path(registry, problem, start, settings),
                          work_dir(slug, problem.name, run_id), Ledger(ledger_path(slug, problem.name, run_id)),
                          settings.strategy, settings.limits, run_id, env["gpu"])
        evaluator = evaluator_for(problem) if evaluator_for else harness_evaluator(problem, settings, env, slug)
        progress = Progress(problem_started=time.monotonic(), total_started=started)
        machine_code, screen = (None, None) if evaluator_for else offline_views(problem, slug)
        proposer = make_proposer(settings, Path(start.path), machine_code, llm_client)
        result = Loop(setup, proposer, evaluator, echo=echo, progress=progress, screen=screen).run()
        results.append(result)
        if result.reason.startswith(("interrupted", "total time")):
            break
    return results


def kept_path(registry: Registry, problem, start: SolutionRef, settings: Settings) -> Path:
    name = settings.name or f"{start.name}_opt"
    path = registry.solutions_dir / problem.name / f"{name}.py"
    if Path(start.path).resolve() == path.resolve():
        raise click.UsageError(f"--name {name} would overwrite the starting solution; pick another name")
    return path


def start_agent(problem, start: SolutionRef, settings: Settings, registry: Registry, slug: str, run_id: str,
                gpu: str) -> str:
    folder = work_dir(slug, problem.name, run_id + "-agent")
    limits = settings.limits
    stop = ", or ".join(s for s in [
        f"{limits.plateau} attempts in a row are discarded" if limits.plateau else "",
        f"the best reaches {limits.target_pct_sol:g} % of speed of light" if limits.target_pct_sol else "",
        f"{limits.problem_budget_s / 60:g} minutes have passed" if limits.problem_budget_s else ""] if s)
    state = {"problem": problem.name, "gpu": gpu, "start": start.name, "run": run_id,
             "kept": str(kept_path(registry, problem, start, settings)),
             "ledger": str(ledger_path(slug, problem.name, run_id).resolve()),
             "stop": stop or "you run out of ideas"}
    agent.write_workspace(folder, Path(problem.path), Path(start.path), state)
    return f"workspace for a coding agent: {folder} (instructions in {folder / 'program.md'})"


def record(problem_name: str, file: Path, message: str, settings: Settings, registry: Registry,
           evaluator=None, echo=click.echo) -> LoopResult:
    """One experiment of an agent's workspace through the same loop, ledger and keep rule."""
    from harness.environment import fingerprint, gpu_slug

    state_file = Path(file).resolve().parent / "state.json"
    if not state_file.is_file():
        raise click.UsageError(f"{file}: not in an agent workspace (no state.json beside it); "
                               "start one with --strategy agent")
    state = agent.read_state(state_file.parent)
    problem = registry.problem(problem_name)
    kept = Path(state["kept"])
    best = SolutionRef(state["start"], kept if kept.is_file() else Path(state["start_path"]))
    env = fingerprint()
    setup = LoopSetup(problem, best, kept, state_file.parent / "experiments", Ledger(Path(state["ledger"])), "agent",
                      replace(settings.limits, plateau=None), state["run"], env["gpu"])
    evaluator = evaluator or harness_evaluator(problem, settings, env, gpu_slug())
    return Loop(setup, agent.RecordProposer(file, message), evaluator, echo=echo).run()
