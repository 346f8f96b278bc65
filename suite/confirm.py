"""Re-time a run's close calls in one process, interleaved, so a few-microsecond verdict is the kernels'.

`ksuite bench` times each solution in a fresh worker and the baselines in another. At shapes of a few
microseconds the two processes differ by more than the kernels do: on the H200 (2026-12-02,
scripts/small_shape_probe.py) torch.compile and triton_family timed in one process, batches interleaved,
were 0.98-1.13x at decode shapes where the bench had the family at 0.83-0.92x; the same kernel measured
3.65 us in one process and 4.10 in another. The optimiser's keep rule already compares this way.

A close call is a solution record of the run faster than `max_us` whose speedup over the best baseline is
within `within` of 1 (WITHIN: as far as one run to the next moves such calls), or whose gap to the best
baseline's median is inside the wider of the two records' interquartile ranges (`iqr_us`): either median could
have landed on the other side. On the H100 (2026-12-06) reduce_rows' family at 127x3072 ran 5.47 us by the
held-out bench's median (interquartile range 1.15 us, 10th percentile 4.16) against torch.compile's 4.70: 0.86x,
outside the 10 % window of then, so never re-timed; two more benches of that shape gave 4.77 and 4.51 us (0.99x,
1.09x), and one process, interleaved, 1.00x and 0.96x. A compute-bound problem's record of any length within
COMPUTE_WITHIN of 1 is a close call too: such a long call's median moves from one run to the next as a short one's
does (below).
Per (problem, solution, dtype), one child (harness/jobs/pairwise.run_together) checks and times the solution beside
every baseline within CONTENDER of the best at one of those shapes, alternating batches. The new run holds every
record of the old one, with the close shapes' records of those implementations replaced by the paired ones (field
`paired`), so `ksuite goals` judges the whole set again.
The solution's file must be the one the run measured (its source hash), or differ from it only where the run's
GPU does not look (another GPU's table: the record's ran_hash, harness/ran_hash.py), or that solution is left
out. A baseline the run timed that fails in the paired child (on the H100, 2026-12-07, Liger was not on the
confirm's path: every record "No module named 'liger_kernel'") leaves that shape as the run had it, with a note
and a failed exit: the paired records would judge the solution against the next-best baseline, a verdict the run
never supported.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone

from harness.baselines import liger_installed
from harness.environment import gpu_slug
from harness.metrics import add_speedups
from harness.ran_hash import same_run
from harness.records import Measurement
from harness.spec import Options, SolutionRef, file_hash
from suite.results_store import RunFile

# a speedup between 1 / 1.25 and 1.25: close enough for a process's draw to decide it. One implementation's median
# at one shape under 20 us moves between two runs by more than 10 % in 15-20 % of such pairs and by more than 25 %
# in 6 % (scripts/process_spread.py, 2026-12-07, the records a confirm's run carries over left out: 2,853 pairs on
# the H100, 7,478 on the H200); torch.compile and our families pass 10 % in 1-27 % and 25 % in 0-2 %, max-autotune,
# which autotunes again in each process, 25 % in 23-28 %. The window was 10 % before, and swiglu_act's 7x18944 bf16
# at 0.81x (5.38 us, 4.51 in the run before) went unchecked while its fp16 twin at 0.96x was paired to 0.99x
WITHIN = 0.25
MAX_US = 20.0  # above this the processes' offset (a few tenths of a microsecond) cannot turn a memory-bound verdict
# baselines within this factor of the best at a close shape are timed beside the solution: the 95th percentile of
# the same draw (1.23-1.24), so one left out becomes the best paired only where both runs drew past it
CONTENDER = 1.25
# MAX_US holds for memory-bound calls: above 20 us their medians move little from one run to the next. A compute-bound
# call's does, at any length (likely as the kernels run at the card's power limit): on the H200, calls of 20 us and
# more (scripts/process_spread.py --min-us 20 --max-us 1e9, results to 2026-12-07), cuBLAS's median at one matmul
# shape moved past 5 % in 29 % of pairs of runs and past 10 % in 13 % (95th percentile 1.15), torch.compile's and our
# fused MLP's alike (our persistent Triton matmul's in 5 %), against 2 % past 5 % for the memory-bound problems'
# kernels and baselines together (max-autotune aside: it autotunes again in each process). matmul's held-out bench of
# 2026-12-07 had three shapes of 0.5-2 ms at 1.05-1.14x, and the same calls paired 0.96-1.01x. So a problem whose META
# says "bound": "compute" has its calls of any length within this window re-timed too.
COMPUTE_WITHIN = 0.15


@dataclass
class CloseGroup:
    """The close shapes of one (problem, solution, dtype) and the baselines to time beside it there."""

    problem: str
    solution: str
    dtype: str
    source_hash: str | None
    shapes: list[dict] = field(default_factory=list)
    baselines: list[str] = field(default_factory=list)
    ran_hash: str | None = None  # the code and table its GPU ran (harness/ran_hash.py)
    gpu: str | None = None  # that GPU's results folder name


def changed_elsewhere(group: CloseGroup, path) -> bool:
    """The file changed since the run, but not in what the run's GPU runs (another GPU's table, comments of the
    table writer): its close calls can still be paired."""
    return same_run(group.ran_hash, path, group.gpu)


def still_measured(group: CloseGroup, path) -> bool:
    """The file at `path` is what the group's records measured: the same source, or changed only where the run's GPU
    does not look. Anything else confirm leaves out."""
    return not group.source_hash or file_hash(path) == group.source_hash or changed_elsewhere(group, path)


def _shape_key(shape: dict) -> tuple:
    return tuple(sorted(shape.items()))


def _record_key(r: dict) -> tuple:
    """A record's identity in a run, as Measurement.key has it, on a plain dict."""
    return r["problem"], r["solution"], _shape_key(r["shape"]), r["dtype"]


def _inside_spread(solution: dict, best: dict) -> bool:
    """The two medians differ by no more than the wider interquartile range of the two records (a record
    without one counts as 0)."""
    spread = max(solution.get("iqr_us") or 0.0, best.get("iqr_us") or 0.0)
    return abs(solution["median_us"] - best["median_us"]) <= spread


def compute_bound(problems: Collection[str]) -> frozenset[str]:
    """Those of `problems` whose META says "bound": "compute"; a problem not found or not loadable counts as
    memory-bound (its long calls keep the MAX_US rule)."""
    from harness.loader import LoadError, load_problem
    from suite.registry import Registry, RegistryError

    registry, found = Registry(), set()
    for i, name in enumerate(sorted(set(problems))):
        try:
            if load_problem(registry.problem(name).path, f"ksuite_confirm_{i}").meta.bound == "compute":
                found.add(name)
        except (RegistryError, LoadError):
            continue
    return frozenset(found)


def _close(r: dict, best: dict, within: float, max_us: float, compute: Collection[str]) -> bool:
    """A close call: under max_us, near 1 or inside the samples' spread; or, for a compute-bound problem, of any
    length within COMPUTE_WITHIN."""
    speedup = r["speedup_vs_best_baseline"]
    if r["median_us"] <= max_us and (1 / (1 + within) <= speedup <= 1 + within or _inside_spread(r, best)):
        return True
    return r["problem"] in compute and 1 / (1 + COMPUTE_WITHIN) <= speedup <= 1 + COMPUTE_WITHIN


def close_groups(records: list[dict], within: float = WITHIN, max_us: float = MAX_US,
                 compute: Collection[str] | None = None) -> list[CloseGroup]:
    """The run's close calls, grouped per (problem, solution, dtype), in the run's order. `compute`: the
    compute-bound problems among them (default: read from each problem's META)."""
    records = add_speedups([dict(r) for r in records if not r.get("cached_from")])
    if compute is None:
        compute = compute_bound({r["problem"] for r in records if r["kind"] == "solution"})
    baselines: dict = {}  # (problem, shape, dtype) -> {baseline: record}
    for r in records:
        if r["kind"] == "baseline" and r.get("correct") and r.get("median_us"):
            baselines.setdefault((r["problem"], _shape_key(r["shape"]), r["dtype"]), {})[r["solution"]] = r
    groups: dict = {}
    for r in records:
        if r["kind"] != "solution" or not r.get("correct") or not r.get("speedup_vs_best_baseline"):
            continue
        rivals = baselines[(r["problem"], _shape_key(r["shape"]), r["dtype"])]
        times = {name: b["median_us"] for name, b in rivals.items()}
        fastest = min(rivals.values(), key=lambda b: b["median_us"])
        best = fastest["median_us"]
        if not _close(r, fastest, within, max_us, compute):
            continue
        group = groups.setdefault((r["problem"], r["solution"], r["dtype"]),
                                  CloseGroup(r["problem"], r["solution"], r["dtype"], r.get("source_hash"),
                                             ran_hash=r.get("ran_hash"), gpu=gpu_slug(r.get("gpu") or "cpu")))
        group.shapes.append(dict(r["shape"]))
        for name, t in sorted(times.items(), key=lambda kv: kv[1]):
            if t <= best * CONTENDER and name not in group.baselines:
                group.baselines.append(name)
    return list(groups.values())


def hint(records: list[dict], run_id: str) -> str | None:
    """One line for the end of a bench: how many calls of the run a paired re-timing may turn, and the command;
    None where there are none."""
    shapes = sum(len(g.shapes) for g in close_groups(records))
    if not shapes:
        return None
    return (f"{shapes} close call{'s' * (shapes != 1)} (under {MAX_US:g} us, within {WITHIN:.0%} of the best baseline "
            f"or inside the spread of the samples; compute-bound, of any length within {COMPUTE_WITHIN:.0%}): "
            f"`ksuite confirm {run_id}` times them again beside the baselines in one process, paired")


def shape_spec(shape: dict) -> str:
    """The shape as `--shape` reads it (harness/shape_spec.py): name=value pairs."""
    return ",".join(f"{k}={v}" for k, v in shape.items())


def merged(old: list[dict], paired: list[dict], run_id: str) -> list[dict]:
    """The old run's records with each paired record in place of the old one of its key; the new run's id."""
    new = {_record_key(r): r for r in paired}
    out = [{**new.pop(_record_key(r), r), "run_id": run_id} for r in old]
    return out + [{**r, "run_id": run_id} for r in new.values()]


@dataclass
class ConfirmResult:
    records: list[dict]  # the new run's, merged
    paired: list[dict]  # the paired records alone
    notes: list[str]  # one line per group left out or failed


def timed_baselines(records: list[dict]) -> set:
    """The record keys of the baselines a run timed."""
    return {_record_key(r) for r in records if r["kind"] == "baseline" and r.get("correct") and r.get("median_us")}


def lost_baselines(group: list[dict], timed: set) -> dict:
    """{shape key: (shape, [(baseline, error), ...])} for the shapes of a paired `group` where a baseline that the
    run timed (`timed`: timed_baselines of its records) failed or went untimed in the paired child."""
    lost: dict = {}
    for r in group:
        if r["kind"] == "baseline" and _record_key(r) in timed and not (r.get("correct") and r.get("median_us")):
            error = (r.get("error") or "not timed").splitlines()[0]
            lost.setdefault(_shape_key(r["shape"]), (r["shape"], []))[1].append((r["solution"], error))
    return lost


def without_liger(g: CloseGroup, timed: set, run_id: str) -> tuple[CloseGroup, str]:
    """Where liger-kernel is not installed, known before any timing (unlike lost_baselines): the group without
    Liger and without the shapes where the run timed it (those keep the run's records), and a note saying so."""
    kept = [shape for shape in g.shapes if (g.problem, "liger", _shape_key(shape), g.dtype) not in timed]
    note = (f"{g.problem} {g.solution} {g.dtype}: liger-kernel is not installed here and run {run_id} timed Liger at "
            f"{len(g.shapes) - len(kept)} of its {len(g.shapes)} close shapes: those keep the run's records "
            "(pip install liger-kernel)")
    return replace(g, shapes=kept, baselines=[n for n in g.baselines if n != "liger"]), note


def confirm(records: list[dict], run_id: str, new_run_id: str, refs: Callable[[str, str], tuple],
            options: Options, env: dict, run_together, within: float = WITHIN,
            max_us: float = MAX_US, on_group: Callable[[list[dict]], None] | None = None) -> ConfirmResult:
    """Re-time each close group of `records` (run `run_id`) with `run_together` (harness/jobs/pairwise);
    `refs(problem, solution)` gives its (ProblemRef, SolutionRef); `on_group` gets each group's paired records as
    soon as they are timed."""
    sets = {(r["problem"], _shape_key(r["shape"]), r["dtype"]): r.get("shape_set") for r in records}
    timed = timed_baselines(records)
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    paired, notes = [], []
    for g in close_groups(records, within, max_us):
        problem, solution = refs(g.problem, g.solution)
        if not still_measured(g, solution.path):
            notes.append(f"{g.problem} {g.solution}: {solution.path} changed since run {run_id} "
                         f"(source {file_hash(solution.path)}, the run measured {g.source_hash}): not re-timed")
            continue
        if "liger" in g.baselines and not liger_installed():
            g, note = without_liger(g, timed, run_id)
            notes.append(note)
            if not g.shapes:
                continue
        impls = [SolutionRef(name) for name in g.baselines] + [solution]
        opts = replace(options, dtypes=(g.dtype,), custom_shapes=tuple(shape_spec(s) for s in g.shapes),
                       shapes="all")
        result = run_together(problem, impls, opts)
        if result.status != "ok":
            notes.append(f"{g.problem} {g.solution} {g.dtype}: {result.status}: {result.message}")
        group = []
        for r in result.records:
            r = {k: v for k, v in r.items() if k != "event"}
            r.update(shape_set=sets.get((r["problem"], _shape_key(r["shape"]), r["dtype"])),
                     paired={"run": run_id, "with": [n for n in [*g.baselines, g.solution] if n != r["solution"]]},
                     gpu=env.get("gpu", "cpu"), env=env, run_id=new_run_id, timestamp=stamp)
            group.append(Measurement.from_dict(r).to_dict())
        lost = lost_baselines(group, timed)
        for shape, failures in lost.values():
            said = "; ".join(f"{name}: {error}" for name, error in failures)
            notes.append(f"{g.problem} {g.solution} {g.dtype} {shape_spec(shape)}: a baseline run {run_id} "
                         f"timed failed here ({said}): the run's records kept, not re-timed")
        group = [r for r in group if _shape_key(r["shape"]) not in lost]
        paired += group
        if on_group and group:
            on_group(group)
    out = merged(records, paired, new_run_id)
    return ConfirmResult(add_speedups(out), add_speedups([dict(r) for r in paired]), notes)


def confirm_into(out: RunFile, records: list[dict], run_id: str, new_run_id: str, refs: Callable[[str, str], tuple],
                 options: Options, env: dict, run_together, within: float = WITHIN,
                 max_us: float = MAX_US) -> ConfirmResult:
    """confirm(), written to `out` as it goes: first the old run's records under the new id, then each group's
    paired records as they are timed (a later record of a key supersedes the earlier one when the run is read), so a
    confirm cut short by a time limit keeps the groups it finished; at the end the file is rewritten in the run's
    order, each record once."""
    def write(group: list[dict]) -> None:
        for r in group:
            out.append(Measurement.from_dict(r))

    write(merged(records, [], new_run_id))
    result = confirm(records, run_id, new_run_id, refs, options, env, run_together, within, max_us, on_group=write)
    out.rewrite([Measurement.from_dict(r) for r in result.records])
    return result


def verdict_changes(old: list[dict], new: list[dict]) -> list[tuple]:
    """(problem, solution, dtype, shape, old speedup, new speedup) for each paired solution record."""
    before = {_record_key(r): r for r in add_speedups([dict(r) for r in old])}
    rows = []
    for r in new:
        if r["kind"] != "solution" or not r.get("paired"):
            continue
        was = before.get(_record_key(r), {})
        rows.append((r["problem"], r["solution"], r["dtype"], r["shape"], was.get("speedup_vs_best_baseline"),
                     r.get("speedup_vs_best_baseline")))
    return rows
