"""`ksuite bench-plan PROBLEM...`: which solutions of each (extracted) problem are worth a bench, and in
which order to bench the problems so that a time-limited round gives every one its baselines.

Per problem, the first rule that names something wins:
1. its op's META "recommended" solution (problems/<op>.py);
2. the fastest correct solutions measured at this exact shape and dtype on this GPU (results/<gpu>/);
3. the solutions fastest at the most shapes of the op measured on this GPU;
4. its starters (triton_starter*).
CUDA C++ solutions (each a ~30 s build) are left out unless asked for, and then all of them are added.
Problems come cheapest first (META's bytes at the shape they time), so a slow one at the end cannot
starve the others of their baselines. One tab-separated line per problem: name, solutions, why.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from harness.cuda_build import is_cuda_solution
from harness.records import shape_text
from harness.spec import ProblemRef
from suite.profile import amdahl
from suite.registry import Registry

KEEP = 2  # measured solutions kept per problem under rules 2 and 3
STARTER = "triton_starter"


@dataclass(frozen=True)
class Planned:
    problem: str
    solutions: tuple[str, ...]
    why: str
    cost_bytes: float  # META bytes at the timed shape: the order key

    def line(self) -> str:
        return f"{self.problem}\t{','.join(self.solutions)}\t{self.why}"


def _timed_shape(meta) -> dict:
    shapes = meta.sweep("large")
    return dict(shapes[0]) if shapes else {}


def _cost(meta, shape: dict, dtype: str) -> float:
    from harness.loader import DTYPES

    if meta.bytes_fn is None or not shape:
        return float("inf")
    try:
        return float(meta.bytes_fn(shape, DTYPES[dtype].itemsize))
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return float("inf")


def _fastest_per_shape(records: list[dict], allowed) -> Counter:
    """How many measured (shape, dtype) each allowed solution is the fastest at."""
    best: dict = {}
    for r in records:
        if not allowed(r["solution"]):
            continue
        key = (tuple(sorted(r["shape"].items())), r["dtype"])
        if key not in best or r["median_us"] < best[key]["median_us"]:
            best[key] = r
    return Counter(r["solution"] for r in best.values())


def _unique(names) -> list[str]:
    return list(dict.fromkeys(names))


def _meta(path: Path):
    from harness.loader import load_problem

    return load_problem(path, "ksuite_plan_" + "".join(c if c.isalnum() else "_" for c in str(path))).meta


def worth_trying(registry: Registry, ref: ProblemRef, results_dir: Path | None, cuda: bool = False
                 ) -> tuple[list[str], str]:
    """(solution names, why) for one problem; empty names when it has no solution to try."""
    sols = {s.name: s for s in registry.solutions(ref)}
    is_cuda = {name: is_cuda_solution(s.path) for name, s in sols.items()}

    def allowed(name: str) -> bool:
        return name in sols and not is_cuda[name]

    op = amdahl.base_problem(ref.name)
    op_file = registry.problems_dir / f"{op}.py"
    op_meta = _meta(op_file) if op_file.is_file() else None
    meta = _meta(ref.path)
    shape, dtype = _timed_shape(meta), meta.dtypes[0]
    records = amdahl.newest_records(results_dir, op) if results_dir else []
    chosen, why = [], "no solution to try"
    if op_meta and op_meta.recommended and allowed(op_meta.recommended):
        chosen, why = [op_meta.recommended], f"{op}'s META recommended"
    else:
        here = [r["solution"] for r in sorted(records, key=lambda r: r["median_us"])
                if r["shape"] == shape and r["dtype"] == dtype and allowed(r["solution"])]
        wins = _fastest_per_shape(records, allowed)
        starters = sorted(n for n in sols if n.startswith(STARTER) and allowed(n))
        if here:
            chosen = _unique(here)[:KEEP]
            why = f"fastest measured at {shape_text(shape)} {dtype} in {_where(results_dir)}"
        elif wins:
            chosen = [n for n, _ in wins.most_common(KEEP)]
            why = f"fastest at the most {op} shapes measured in {_where(results_dir)}"
        elif starters:
            chosen, why = starters, "starter (nothing measured on this GPU)"
    if cuda:
        extra = sorted(n for n in sols if is_cuda[n] and n not in chosen)
        if extra:
            chosen, why = chosen + extra, why + "; CUDA solutions (asked for)"
    return chosen, why


def _where(results_dir: Path | None) -> str:
    if results_dir is None:
        return "results/"
    parts = Path(results_dir).parts
    return "/".join(parts[-2:])


def plan(registry: Registry, refs: list[ProblemRef], results_dir: Path | None, cuda: bool = False
         ) -> list[Planned]:
    """Every problem with its solutions to bench, cheapest problem first."""
    out = []
    for ref in refs:
        names, why = worth_trying(registry, ref, results_dir, cuda)
        meta = _meta(ref.path)
        out.append(Planned(ref.name, tuple(names), why, _cost(meta, _timed_shape(meta), meta.dtypes[0])))
    return sorted(out, key=lambda p: (p.cost_bytes, p.problem))


def resolve(registry: Registry, names: tuple[str, ...]) -> list[ProblemRef]:
    """Problem names, files, or `extracted/<model>` for every problem extracted from that model."""
    refs = []
    for name in names:
        parts = name.rstrip("/").split("/")
        if len(parts) == 2 and parts[0] == "extracted":
            found = [r for r in registry.extracted_problems() if r.name.startswith(f"{name.rstrip('/')}/")]
            if not found:
                from suite.registry import RegistryError

                raise RegistryError(f"no problems under {registry.problems_dir / name} (run `ksuite extract` first)")
            refs += found
        else:
            refs.append(registry.problem(name))
    return refs
