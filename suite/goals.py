"""Does a recorded run meet each problem's goals? Per solution and dtype: its % of speed of light at the
problem's large shapes against META's goal_pct_sol, never slower than the best baseline of the same run at
any timed shape, and a geometric-mean speedup bar over the shapes where that baseline is weak (so a kernel
cannot hide behind shapes where the baseline is already at the ceiling, nor be asked to beat the ceiling).

A run of held-out workload shapes (`ksuite bench --shapes heldout`, records with shape_set "heldout") is
judged by the workload goals instead: the problem's recommended solution (META "recommended"; one file,
not the best of several picked per shape afterwards) at least as fast as the best baseline at
HELDOUT_WON_SHARE of the shapes, and a geometric-mean speedup over them of HELDOUT_GEOMEAN. A problem whose
goals differ says so in META "heldout_goals" (won_share, geomean, and floor: the speedup every shape keeps);
matmul's is a geometric mean of 1.0 against cuBLAS, attention's 0.9 of SDPA's speed at every shape.

A problem whose goals at its named shapes (a run of `--shape`s or the default sweep) differ from the floor of
1.0 and the geometric mean over weak baselines says so in META "goals" (floor, geomean): matmul 0.97 of
cuBLAS, attention 1.0 of SDPA and fused MLP 1.1 of the best baseline at every timed shape, with no
geometric-mean bar.

For a memory-bound problem a held-out row also says how far the goal is within reach at all: the geometric
mean a kernel would score if at every shape it took the least time conceivable there (its bytes at the copy
ceiling, but no less than the fastest call of any implementation in the run, the launch floor, unless some
implementation already went below that at the shape). Where torch.compile already runs at the ceiling and the
floor, even that kernel stays under 1.15x, and the row says so.

A run that timed torch.compile but holds no record of a Liger baseline the problem names (liger-kernel was not
installed where it ran) is "not measured" rather than met: its best baseline is of the others, and Liger is the
best one at some shapes (cross_entropy at 128k-152k vocabularies on the H100).

Only baselines of the same run count: times from two runs differ by more than the margins judged here. A
baseline timing reused from the cache (`bench --cached-baselines`, record field cached_from) is left out
of every speedup judged here, and the (problem, dtype) it belongs to is "not measured" until a run times
its baselines side by side again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from harness.environment import gpu_slug
from harness.loader import LoadError, ProblemMeta, load_problem
from harness.metrics import add_speedups
from suite.registry import Registry, RegistryError, find_problem
from suite.report import shape_text

FLOOR = 1.0  # never slower than the best baseline, at any shape
GEOMEAN_BAR = 1.2  # geometric-mean speedup wanted where the baseline is weak
WEAK_BASELINE_PCT = 80.0  # a baseline under this % of speed of light leaves room to win
HELDOUT_WON_SHARE = 0.95  # held-out shapes where the recommended solution is at least the best baseline
HELDOUT_GEOMEAN = 1.15  # its geometric-mean speedup over the best baseline across held-out shapes


@dataclass
class GoalRow:
    problem: str
    dtype: str
    solution: str
    goal_pct: float | None
    large: list[tuple[str, float | None]] = field(default_factory=list)  # (shape, % SOL or None if not timed)
    worst: tuple[float, str] | None = None  # (speedup vs best baseline, shape), the lowest over the run
    geomean_weak: float | None = None
    weak_shapes: int = 0
    misses: list[str] = field(default_factory=list)
    unmeasured: list[str] = field(default_factory=list)
    heldout: bool = False  # judged by the workload goals (held-out shapes)
    won: int = 0  # held-out shapes at least as fast as the best baseline
    judged: int = 0  # held-out shapes with a baseline to compare with
    geomean: float | None = None  # over the held-out shapes
    not_recommended: str | None = None  # the problem's recommended solution, when this is another one
    reach: float | None = None  # held-out, memory-bound: the geometric mean of the least conceivable times (_reach)
    cached_baselines: int = 0  # baseline records of this (problem, dtype) reused from the cache: not judged
    table_gpu: str | None = None  # the GPU whose dispatch table the solution ran (its records' table_gpu)
    gpu: str | None = None  # the GPU of the run, as its results folder is named

    @property
    def verdict(self) -> str:
        if self.not_recommended:
            return f"for comparison (the recommended solution is {self.not_recommended})"
        if self.misses:
            cached = f"; {self.cached_baselines} cached baseline timing(s) not judged" if self.cached_baselines else ""
            return "missed: " + "; ".join(self.misses) + cached
        if self.unmeasured:
            return "not measured: " + "; ".join(self.unmeasured)
        return "met"


def _loaded(problem: str, registry: Registry | None, cache: dict):
    """The problem as loaded (its META and its optional baselines), or None where its file is not found."""
    if problem not in cache:
        try:
            ref = registry.problem(problem) if registry else find_problem(problem)[1]
            cache[problem] = load_problem(ref.path, f"ksuite_goals_{len(cache)}")
        except (RegistryError, LoadError):
            cache[problem] = None
    return cache[problem]


def _meta(problem: str, registry: Registry | None, cache: dict) -> ProblemMeta | None:
    loaded = _loaded(problem, registry, cache)
    return loaded.meta if loaded is not None else None


def missing_liger(loaded, baselines: set) -> str | None:
    """Why a verdict against "the best baseline" is incomplete: the problem names a Liger baseline, the run timed
    torch.compile (so it asked for more than eager) but holds no Liger record (liger-kernel was not installed
    where it ran, or --baselines left it out). None where nothing is missing."""
    if loaded is None or loaded.liger_class is None or "compile" not in baselines or "liger" in baselines:
        return None
    return ("no Liger baseline in this run (liger-kernel not installed where it ran, or left out by --baselines): "
            "the best baseline is of the others; bench again with liger-kernel installed")


def evaluate(records: list[dict], registry: Registry | None = None) -> list[GoalRow]:
    """One row per (problem, dtype, solution) of the run, in the run's order. KernelBench problem names
    (`level1/19_ReLU`) are looked up in the repository's own KernelBench tree."""
    cached: dict = {}
    for r in records:
        if r.get("cached_from"):
            cached[(r["problem"], r["dtype"])] = cached.get((r["problem"], r["dtype"]), 0) + 1
    records = add_speedups([dict(r) for r in records if not r.get("cached_from")])  # same-run baselines only
    metas: dict = {}
    groups: dict = {}
    peers: dict = {}  # (problem, dtype) -> every correct timed record, baselines included
    baselines: dict = {}  # (problem, dtype) -> the baselines with a record in the run
    for r in records:
        if r["kind"] == "solution":
            groups.setdefault((r["problem"], r["dtype"], r["solution"]), []).append(r)
        elif r["kind"] == "baseline":
            baselines.setdefault((r["problem"], r["dtype"]), set()).add(r.get("solution"))
        if r.get("correct") and r.get("median_us"):
            peers.setdefault((r["problem"], r["dtype"]), []).append(r)
    rows = [_judge(key, group, _meta(key[0], registry, metas), peers.get(key[:2], []))
            for key, group in groups.items()]
    for row, group in zip(rows, groups.values()):
        row.table_gpu = next((r["table_gpu"] for r in group if r.get("table_gpu")), None)
        row.gpu = gpu_slug(group[0].get("gpu") or "cpu")
    for row in rows:
        absent = missing_liger(_loaded(row.problem, registry, metas), baselines.get((row.problem, row.dtype), set()))
        if absent:
            row.unmeasured.append(absent)
        row.cached_baselines = cached.get((row.problem, row.dtype), 0)
        if row.cached_baselines:
            row.unmeasured.insert(0, f"{row.cached_baselines} baseline timing(s) reused from the cache, not judged "
                                     "(goals need baselines timed in the same run: bench without --cached-baselines)")
    return rows


def _judge(key: tuple, group: list[dict], meta: ProblemMeta | None, peers: list[dict] = ()) -> GoalRow:
    row = GoalRow(*key, goal_pct=meta.goal_pct_sol if meta else None)
    wrong = [shape_text(r["shape"]) for r in group if r.get("correct") is False]
    if wrong:
        row.misses.append(f"incorrect at {', '.join(wrong)}")
    if meta is None:
        row.unmeasured.append("problem file not found: no % of speed of light goal")
    elif all(r.get("shape_set") == "heldout" for r in group):
        return _judge_heldout(row, group, meta, peers)
    else:
        _judge_large(row, group, meta)
    goals = {"floor": FLOOR, "geomean": GEOMEAN_BAR, **(meta.goals if meta else {})}
    _judge_baselines(row, [r for r in group if r.get("correct") and r.get("median_us")], goals)
    return row


def _judge_heldout(row: GoalRow, group: list[dict], meta: ProblemMeta, peers: list[dict] = ()) -> GoalRow:
    """The workload goals: won share and geometric mean over the held-out shapes of the run."""
    row.heldout = True
    if meta.recommended and row.solution != meta.recommended:
        row.not_recommended = meta.recommended
    timed = [r for r in group if r.get("correct") and r.get("median_us")]
    against = [r for r in timed if r.get("speedup_vs_best_baseline")]
    if not against:
        row.unmeasured.append("no held-out shape timed beside a baseline")
        return row
    if len(against) < len(group):
        row.unmeasured.append(f"{len(group) - len(against)} of {len(group)} held-out shapes without a timed "
                              "baseline or time")
    speedups = [r["speedup_vs_best_baseline"] for r in against]
    row.judged, row.won = len(against), sum(1 for v in speedups if v >= FLOOR)
    row.geomean = math.exp(sum(math.log(v) for v in speedups) / len(speedups))
    worst = min(against, key=lambda r: r["speedup_vs_best_baseline"])
    row.worst = (worst["speedup_vs_best_baseline"], shape_text(worst["shape"]))
    goals = {"won_share": HELDOUT_WON_SHARE, "geomean": HELDOUT_GEOMEAN, "floor": 0.0, **meta.heldout_goals}
    if row.won < goals["won_share"] * row.judged:
        row.misses.append(f"at least the best baseline at {row.won} of {row.judged} held-out shapes "
                          f"(< {goals['won_share']:.0%})")
    row.reach = _reach(against, peers) if meta.bound == "memory" else None
    if row.geomean < goals["geomean"]:
        out_of_reach = (f" (out of reach in this run: at the copy ceiling and the launch floor {row.reach:.2f}x)"
                        if row.reach is not None and row.reach < goals["geomean"] else "")
        row.misses.append(f"geomean {row.geomean:.3f}x < {goals['geomean']}x over {row.judged} held-out shapes"
                          + out_of_reach)
    if row.worst[0] < goals["floor"]:
        row.misses.append(f"{row.worst[0]:.2f}x at {row.worst[1]} < {goals['floor']}x, the least any held-out "
                          "shape may reach")
    return row


def _reach(against: list[dict], peers: list[dict]) -> float | None:
    """The geometric mean over these shapes of the best baseline's time over the least time conceivable there:
    the shape's bytes at the copy ceiling (sol_us), but no less than the launch floor (the fastest call of any
    implementation at any shape of this problem and dtype in the run), unless some implementation already took
    less at that very shape. None where a record has no cost model."""
    if not peers or any(not r.get("sol_us") for r in against):
        return None
    floor = min(r["median_us"] for r in peers)
    fastest: dict = {}
    for r in peers:
        key = shape_text(r["shape"])
        fastest[key] = min(fastest.get(key, math.inf), r["median_us"])
    logs = [math.log(r["speedup_vs_best_baseline"] * r["median_us"]
                     / min(fastest[shape_text(r["shape"])], max(r["sol_us"], floor))) for r in against]
    return math.exp(sum(logs) / len(logs))


def _judge_large(row: GoalRow, group: list[dict], meta: ProblemMeta) -> None:
    by_shape = {shape_text(r["shape"]): r for r in group}
    for shape in meta.sweep("large"):  # large_shapes, or the mid shapes where a file declares none
        text = shape_text(shape)
        r = by_shape.get(text)
        pct = r.get("pct_sol") if r and r.get("correct") else None
        row.large.append((text, pct))
        if row.goal_pct is None:
            continue
        if pct is None:
            row.unmeasured.append(f"no % SOL at {text}")
        elif pct < row.goal_pct:
            row.misses.append(f"{pct:.0f} % SOL < {row.goal_pct:.0f} at {text}")


def _judge_baselines(row: GoalRow, timed: list[dict], goals: dict) -> None:
    against = [r for r in timed if r.get("speedup_vs_best_baseline")]
    if not timed:
        row.unmeasured.append("nothing timed")
        return
    if len(against) < len(timed):
        row.unmeasured.append(f"no baseline in this run at {len(timed) - len(against)} of {len(timed)} shapes")
    if not against:
        return
    worst = min(against, key=lambda r: r["speedup_vs_best_baseline"])
    row.worst = (worst["speedup_vs_best_baseline"], shape_text(worst["shape"]))
    if row.worst[0] < goals["floor"]:
        row.misses.append(f"{row.worst[0]:.2f}x the best baseline at {row.worst[1]}"
                          + (f" < {goals['floor']}x" if goals["floor"] != FLOOR else ""))
    weak = [r["speedup_vs_best_baseline"] for r in against if _baseline_pct(r) < WEAK_BASELINE_PCT]
    row.weak_shapes = len(weak)
    if weak:
        row.geomean_weak = math.exp(sum(math.log(s) for s in weak) / len(weak))
        if row.geomean_weak < goals["geomean"]:
            row.misses.append(f"geomean {row.geomean_weak:.2f}x < {goals['geomean']}x over {len(weak)} shape(s) with "
                              f"the baseline under {WEAK_BASELINE_PCT:.0f} % SOL")


def _baseline_pct(r: dict) -> float:
    """The best baseline's % of speed of light, from the solution's own: pct scales with 1 / time."""
    if r.get("pct_sol") is None:
        return 0.0  # no cost model: every shape counts as one where the baseline leaves room
    return r["pct_sol"] / r["speedup_vs_best_baseline"]


def unmet_pairs(rows: list[GoalRow]) -> list[tuple[str, str]]:
    """(problem, dtype) pairs of the run with no solution whose verdict is 'met'."""
    pairs = {(g.problem, g.dtype) for g in rows}
    return sorted(pairs - {(g.problem, g.dtype) for g in rows if g.verdict == "met" and not g.not_recommended})


def borrowed_tables(rows: list[GoalRow]) -> list[str]:
    """A line per (problem, solution) that ran a dispatch table searched on another GPU than the run's: its
    verdict is that table's, not one this GPU's own search would give (README, "One table per GPU")."""
    seen = {(g.problem, g.solution): g for g in rows if g.table_gpu and g.table_gpu != g.gpu}
    return [f"{p} {s}: the dispatch table searched on {g.table_gpu} ({g.gpu} has no table of its own)"
            for (p, s), g in seen.items()]


def summary_line(rows: list[GoalRow]) -> str:
    unmet = unmet_pairs(rows)
    total = len({(g.problem, g.dtype) for g in rows})
    cached = sum(g.cached_baselines for g in {(g.problem, g.dtype): g for g in rows}.values())
    return (f"{total - len(unmet)} of {total} (problem, dtype) pairs have a solution that meets every goal"
            + (f"; not: {', '.join(f'{p} {d}' for p, d in unmet)}" if unmet else "")
            + (f"; {cached} baseline timing(s) reused from the cache were not judged (goals need same-run "
               "baselines)" if cached else ""))
