"""Run a suite: every problem x implementation through the harness, records appended as they finish."""

from __future__ import annotations

import sys
import textwrap
import time
from dataclasses import dataclass, field, replace

from tqdm import tqdm

from harness import Measurement, Options, ProblemRef, SolutionRef, cuda_build, evaluate_problem
from harness.baselines import LIGER_MISSING
from harness.children.launcher import child_env
from harness.environment import capability_number
from harness.machine_code import precompile
from harness.records import shape_text
from suite.results_store import RunFile
from suite.resume import done_keys as resume_done_keys


@dataclass
class BenchOutcome:
    records: list[Measurement] = field(default_factory=list)
    skipped: int = 0
    wall_s: float = 0.0

    @property
    def failed(self) -> list[Measurement]:
        return [r for r in self.records if r.correct is False]


def progress_shown() -> bool:
    """A progress bar only on a terminal: in a log it is noise, and its last frame glues onto the table."""
    return sys.stderr.isatty()


def record_line(m: Measurement) -> str:
    """'  rmsnorm 16384x4096 float16 compile: 70.1 us, 85 % SOL' (or the record's error)."""
    shape = "x".join(str(v) for v in (m.shape or {}).values())
    head = f"  {m.problem} {shape} {m.dtype} {m.solution}"
    if m.correct is False:
        return f"{head}: FAILED: {(m.error or '').splitlines()[0][:160] if m.error else 'no reason'}"
    if m.median_us is None:
        return f"{head}: correct (not timed)"
    sol = f", {m.pct_sol:.0f} % SOL" if m.pct_sol else ""
    return f"{head}: {m.median_us:.1f} us{sol}"


def run_bench(plan: list[tuple[ProblemRef, list[SolutionRef]]], options: Options, env: dict, run: RunFile,
              with_baselines: bool = True, resume: bool = False, quiet: bool = False,
              verbose: bool = False) -> BenchOutcome:
    """`plan` pairs each problem with the solutions to run; baselines run first for each problem."""
    outcome = BenchOutcome()
    started = time.perf_counter()
    done, remeasured = resume_done_keys(run, plan) if resume else (set(), [])
    bar = tqdm(total=len(plan), desc="bench", unit="problem", disable=quiet or not progress_shown(), leave=False)
    if remeasured:
        bar.write(f"measuring again (source changed since recorded): {', '.join(remeasured)}", file=sys.stderr)
    on_record, on_event = record_writer(run, outcome, bar, verbose), event_printer(bar, verbose)
    builds = prebuilds(plan, options, bar)
    compiles = precompiles(plan, options, env)
    try:
        for problem, solutions in in_build_order(plan, builds, bar):
            bar.set_description(problem.name)
            done_here = tuple(k[1:] for k in done if k[0] == problem.name)
            outcome.skipped += len(done_here)
            paths = [s.path for s in solutions]
            evaluate_problem(problem, solutions, replace(options, done=done_here), env, run_id=run.run_id,
                             with_baselines=with_baselines, on_record=on_record, on_event=on_event,
                             solution_options=solutions_starting(problem, paths, builds, compiles))
            bar.update(1)
    finally:
        if builds:
            builds.close()
        if compiles:
            line = compiles.close()
            if not quiet:
                bar.write(line, file=sys.stderr)
    bar.close()
    outcome.wall_s = time.perf_counter() - started
    return outcome


def solutions_starting(problem: ProblemRef, paths: list, builds: cuda_build.Prebuilds | None,
                       compiles: precompile.Precompiles | None):
    """What evaluate_problem calls as the problem's solutions begin: its precompiles not started are dropped
    (the worker compiles those kernels itself), and the options carry its CUDA builds' failures once they
    are done. None where there is neither."""
    if builds is None and compiles is None:
        return None

    def starting(options: Options) -> Options:
        if compiles is not None:
            compiles.drop(str(problem.path))
        return builds.options_for(options, paths) if builds is not None else options
    return starting


BUILD_SETTLE_S = 3.0  # the H200's warm make bench, 2026-12-03: each cached build found in 0.4-1.1 s


def in_build_order(plan: list, builds: cuda_build.Prebuilds | None, bar):
    """The plan's problems in order, except that one whose CUDA C++ builds are still compiling when its turn
    comes goes after the others, once: a cold CUTLASS build takes 90 s, which the first problem's baselines
    do not cover, and the GPU would wait through it."""
    queue, deferred = list(plan), set()
    if builds:  # a warm cache's builds are found in a second or two: no problem moves for them
        builds.settle(BUILD_SETTLE_S)
    while queue:
        problem, solutions = queue.pop(0)
        if builds and queue and problem.name not in deferred and builds.pending([s.path for s in solutions]):
            deferred.add(problem.name)
            queue.append((problem, solutions))
            bar.write(f"{problem.name}: its CUDA C++ builds are still compiling; it runs after the others",
                      file=sys.stderr)
            continue
        yield problem, solutions


def prebuilds(plan: list, options: Options, bar) -> cuda_build.Prebuilds | None:
    """Start compiling the CUDA C++ solutions now, in the background, outside every worker's timeout and
    timer (not under the interpreter): the first problems' baselines run meanwhile."""
    if options.interpret:
        return None
    return cuda_build.start_prebuilds([(p.path, s.path) for p, sols in plan for s in sols if s.path], options,
                                      echo=lambda line: bar.write(line, file=sys.stderr))


def precompiles(plan: list, options: Options, env: dict) -> precompile.Precompiles | None:
    """Start compiling the Triton solutions' kernels for this GPU on spare CPU cores, in the plan's order,
    so a cold cache costs the workers less (harness/machine_code/precompile.py)."""
    return precompile.start(plan, options, child_env(options), capability_number(env.get("capability")))


def prebuilt(plan: list, options: Options, bar) -> Options:
    """Compile every CUDA C++ solution of the plan and wait (several GPUs share the builds): the options
    carry any failure to the workers."""
    builds = prebuilds(plan, options, bar)
    if builds is None:
        return options
    try:
        return builds.options_for(options)
    finally:
        builds.close()


def record_writer(run: RunFile, outcome: BenchOutcome, bar, verbose: bool):
    """Each record to the run file (one atomic append) and the outcome as it lands."""

    def on_record(m: Measurement) -> None:
        run.append(m)
        outcome.records.append(m)
        if verbose:  # -v: a line per record as it lands, so a log cut by a time limit still shows them
            bar.write(record_line(m), file=sys.stderr)
    return on_record


def event_printer(bar, verbose: bool):
    """The harness's events as the lines a bench run prints (crashes, skips, baseline-cache notes)."""
    said_liger: list = []
    said_unsupported: set = set()

    def on_event(event: dict) -> None:
        kind = event.get("event")
        if kind == "start":
            bar.set_postfix_str(f"{event['impl']}", refresh=True)
        elif kind in ("crash", "fatal") and event.get("impl"):
            bar.write(f"  {event['impl']}: {event['message']}")
        elif kind == "error" and verbose and event.get("traceback"):  # -v: the candidate's own traceback
            bar.write(f"  {event['impl']}: {event['message']}\n" + textwrap.indent(event["traceback"].rstrip(), "    "),
                      file=sys.stderr)
        elif kind == "skip" and event.get("kind") == "solution":
            bar.write(f"  {event['impl']}: skipped: {event['message']}", file=sys.stderr)
        elif kind == "unsupported" and event["message"] not in said_unsupported:  # once per shape, not per dtype
            said_unsupported.add(event["message"])
            bar.write(f"  {event['impl']}: not run at {shape_text(event['shape'])}: {event['message']}",
                      file=sys.stderr)
        elif kind == "baseline-cache":  # --cached-baselines / --fresh-baselines: what was reused, what is timed
            bar.write(f"  {event['problem']}: baseline cache: {event['message']}", file=sys.stderr)
        elif kind == "skip" and event["message"] == LIGER_MISSING and not said_liger:
            said_liger.append(True)  # once per run, not once per problem
            bar.write(LIGER_MISSING, file=sys.stderr)
    return on_event
