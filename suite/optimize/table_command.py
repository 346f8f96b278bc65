"""`ksuite optimize PROBLEM --from FAMILY` when FAMILY declares BUCKETS: the per-bucket table search.

Set-up only (what to time, where to write, the warm child, the final check); the search itself is
suite/optimize/table.py. The table is written into the family file itself unless --name says another.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from harness import SolutionRef, workloads
from harness.environment import gpu_slug
from harness.loader import load_problem
from harness.shape_spec import ShapeSpecError, custom_shapes
from suite.optimize import dispatch, probe_shapes
from suite.optimize.ledger import Ledger
from suite.optimize.loop import LoopResult

UNTIMED = ("No CUDA device: the table search decides on timings, so it runs only on a GPU machine "
           "(check the family file here with `ksuite check`).")


def is_family(solution: SolutionRef) -> bool:
    return solution.path is not None and dispatch.has_dispatch(Path(solution.path).read_text())


def table_kept_path(registry, problem, start: SolutionRef, name: str | None) -> Path:
    return registry.solutions_dir / problem.name / f"{name}.py" if name else Path(start.path)


class ShapeRefused(ValueError):
    """A --shape the table search may not tune at; the message names the problem file and the shape."""


def users_shapes(problem_path: Path, specs: tuple) -> list[dict]:
    """--shape: the user's own shapes (their model's), tuned at beside the workload's tuning set so that the
    buckets they fall in are searched there, the buckets no workload shape reaches included (rmsnorm's rows of
    more than 8192 columns). A held-out shape is refused: the held-out set judges the tables, and a table tuned
    at one of its shapes would be judged on a shape it was tuned on."""
    if not specs:
        return []
    loaded = load_problem(Path(problem_path), "ksuite_users_shapes")
    try:
        shapes = custom_shapes(loaded, tuple(specs))
    except ShapeSpecError as exc:
        raise ShapeRefused(f"{problem_path}: {exc}") from None
    if loaded.meta.workload_fn is not None:
        workload = loaded.meta.workload()
        for spec, shape in zip(specs, shapes):
            if workload.set_of(shape) == "heldout":
                raise ShapeRefused(f"{problem_path}: --shape {spec} is a held-out shape of the workload (the set "
                                   "that judges the tables: `ksuite bench --shapes heldout` times it); tune at "
                                   "another")
    return shapes


def with_users_shapes(tuning: list[dict], users: list[dict]) -> list[dict]:
    """The tuning set and the user's shapes, each once, the workload's first."""
    known = {workloads.shape_key(s) for s in tuning}
    return tuning + [s for s in users if workloads.shape_key(s) not in known]


def probes_for(meta, buckets: dict, tuning: list[dict]) -> tuple[dict, dict]:
    """Probe shapes (suite/optimize/probe_shapes.py) for the buckets no tuning shape is in, and edge probes for
    those whose tuning shapes (or probe) cover only the low part of their ranges, within the workload's byte cap; the
    held-out set only says which shapes a probe may not be."""
    def fits(shape: dict) -> bool:
        return meta.bytes_fn is None or meta.bytes_fn(shape, 2) <= workloads.MAX_BYTES
    heldout = meta.sweep("heldout")
    probes = probe_shapes.probe_shapes(buckets, tuning, heldout, fits)
    return probes, probe_shapes.edge_probes(buckets, tuning, heldout, fits, probes)


def split_start(start: SolutionRef, splits: tuple, work_dir: Path) -> tuple[SolutionRef, set]:
    """`--split NAME=EDGE`: the family with those edges added to its BUCKETS (dispatch.split: every shape
    runs what it ran before), written into the work folder to start from, and the buckets it made. A
    name BUCKETS lacks, or an edge it has, is a usage error naming the file."""
    if not splits:
        return start, set()
    import click

    source, fresh = Path(start.path).read_text(), set()
    for name, edge in splits:
        try:
            source, made = dispatch.split(source, name, edge)
        except dispatch.DispatchError as exc:
            raise click.UsageError(f"--split {name}={edge}: {start.path}: {exc}") from None
        fresh.update(made)
    path = Path(work_dir) / f"{Path(start.path).stem}_split.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    return SolutionRef(start.name, path), fresh


def table_name(source: str, slug: str) -> str | None:
    """Where a search on GPU `slug` writes its table (DISPATCH, or its entry of DISPATCH_BY_GPU); None where
    the file has another GPU's DISPATCH and nowhere to put this one's."""
    if dispatch.writes_home(source, slug):
        return "DISPATCH"
    return f"DISPATCH_BY_GPU[{slug!r}]" if dispatch.tables_by_gpu(source) is not None else None


def run_table(problem, start: SolutionRef, settings, registry, ledger_path: Path, work_dir: Path, run_id: str,
              env: dict, echo, session_factory=None, full_check=None) -> LoopResult:
    """One problem's table search; a LoopResult, so the command treats it like any other loop. The ledger
    goes to `ledger_path` (results/), the candidate files to `work_dir` (a cache)."""
    from suite.commands import base_options
    from suite.optimize.evaluator import HarnessEvaluator
    from suite.optimize.table import TableSearch, TableSetup

    kept = table_kept_path(registry, problem, start, settings.name)
    start, fresh = split_start(start, settings.splits, work_dir)
    start_source = Path(start.path).read_text()
    stray = dispatch.stray_pattern_error(start.path, start_source, settings.buckets)
    if stray:
        return LoopResult(stray, start)
    table = table_name(start_source, gpu_slug(env.get("gpu", "cpu")))
    if table is None:
        return LoopResult(f"{start.path}: its DISPATCH is {dispatch.home_gpu(start_source)}'s and "
                          "it has no DISPATCH_BY_GPU literal (nor a dispatch_table() reading it) for this GPU's own "
                          "table", start)
    meta = load_problem(Path(problem.path), "ksuite_table_meta").meta
    time_options = replace(base_options("tuning", ("all",), settings.timeout_s, time=True), flush=settings.flush)
    if time_options.interpret and session_factory is None:
        echo(UNTIMED)
        return LoopResult("no CUDA device: nothing timed", start, untimed=True)
    try:
        users = users_shapes(Path(problem.path), settings.shapes)
    except ShapeRefused as exc:
        return LoopResult(str(exc), start)
    shapes = with_users_shapes(meta.sweep("tuning"), users) if not time_options.interpret else meta.sweep("small")
    if not shapes:
        return LoopResult(f"{problem.path}: declares no workload (META \"workload\"): no tuning shapes", start)
    buckets = dispatch.read_buckets(start_source)
    probes, edges = ({}, {}) if time_options.interpret else probes_for(meta, buckets, shapes)
    setup = TableSetup(Path(problem.path), Path(start.path), kept, work_dir, Ledger(ledger_path), shapes,
                       list(meta.dtypes), probes=probes, edges=edges, fresh=fresh,
                       rounds=settings.rounds, per_bucket=settings.per_bucket, probes_only=settings.probes_only,
                       only=settings.buckets,
                       budget_s=settings.limits.problem_budget_s, seed=settings.seed, run_id=run_id,
                       gpu=env.get("gpu", "cpu"), flush=settings.flush)
    if session_factory is None:
        from harness.jobs.tuning_session import TuningSession

        session = TuningSession(problem, time_options)
    else:
        session = session_factory(problem, time_options)
    if full_check is None:
        check_options = base_options(settings.check_shapes, ("all",), settings.timeout_s, time=False)
        evaluator = HarnessEvaluator(problem, check_options, time_options, env)

        def full_check(path: Path) -> str | None:
            outcome = evaluator.check(SolutionRef(Path(path).stem, Path(path)))
            return None if outcome.status == "ok" else outcome.detail
    groups = dispatch.group(shapes, buckets)
    yours = f" ({len(users)} of them yours, --shape)" if users else ""
    echo(f"{problem.name}: table search over {len(groups)} buckets of {len(shapes)} tuning shapes{yours} x "
         f"{len(meta.dtypes)} dtypes, {len(probes)} at probe shapes and {len(edges)} edge probes; this GPU's "
         f"table: {table}; ledger {setup.ledger.path}")
    try:
        result = TableSearch(setup, session, echo=echo, full_check=full_check).run()
    finally:
        session.close()
    gains = ", ".join(f"{b} {g:.2f}x" for b, g in result.gains.items()) or "none"
    same = f", {result.same} not timed (the best's own kernels)" if result.same else ""
    echo(f"{problem.name}: stopped: {result.reason}; {result.kept} kept in {result.experiments} experiments{same} "
         f"(buckets faster than the start: {gains}); table in {setup.kept} ({table})")
    return LoopResult(result.reason, SolutionRef(setup.kept.stem, setup.kept), kept=result.kept,
                      untimed=result.untimed, evaluated=result.experiments)
