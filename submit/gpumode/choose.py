"""Which solution to send when the user names none: the fastest one our own runs recorded.

Reads results/<gpu>/<run>.jsonl directly (one JSON record per line): the newest run that timed at least
one correct solution of the problem decides. The leaderboard ranks by the last benchmark (`last`) or by
a mean over all of them, so the comparison is at the largest shape of the run (among the solutions timed
there), or the geometric mean over every shape (among the solutions timed on all of them). A solution
with any incorrect record in that run is never chosen.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from harness.records import shape_text
from suite.results_store import runs_newest_first


@dataclass(frozen=True)
class Choice:
    path: Path
    run: str
    how: str  # e.g. "61.2 us at 52428800" or "geometric mean 30.1 us over 3 shapes"


def _records(path: Path, problem: str) -> list[dict]:
    out = []
    for line in path.read_text().splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue  # a torn last line
        if r.get("problem") == problem and r.get("kind") == "solution":
            out.append(r)
    return out


def _shape_key(record: dict) -> tuple:
    return tuple(sorted(record.get("shape", {}).items()))


def _size(shape: tuple) -> float:
    return math.prod(v for _, v in shape if isinstance(v, (int, float)) and not isinstance(v, bool))


def _pick(records: list[dict], ranking_by: str) -> tuple[str, str] | None:
    """(solution name, how) of the fastest correct solution among these records, or None."""
    bad = {r["solution"] for r in records if r.get("correct") is False}
    times: dict[str, dict[tuple, float]] = {}
    as_recorded = {}  # shape key -> the shape in the problem's order, for printing
    for r in records:
        if r["solution"] not in bad and r.get("correct") and r.get("median_us"):
            times.setdefault(r["solution"], {})[_shape_key(r)] = r["median_us"]
            as_recorded[_shape_key(r)] = r.get("shape") or {}
    if not times:
        return None
    shapes = set().union(*(set(t) for t in times.values()))
    if ranking_by == "last":  # the largest shape decides, among the solutions timed on it
        shape = max(shapes, key=_size)
        name = min((s for s in times if shape in times[s]), key=lambda s: times[s][shape])
        return name, f"{times[name][shape]:.1f} us at {shape_text(as_recorded[shape])}"
    full = [s for s in times if set(times[s]) == shapes]  # timed on every shape of the run
    if not full:
        return None

    def geomean(s: str) -> float:
        return math.exp(sum(math.log(times[s][k]) for k in shapes) / len(shapes))
    name = min(full, key=geomean)
    return name, f"geometric mean {geomean(name):.1f} us over {len(shapes)} shapes"


def fastest_recorded(problem: str, ranking_by: str, results_root: Path, solutions_root: Path) -> Choice | None:
    """The fastest correct solution file of the newest run that timed `problem`, if its file still exists."""
    for run in runs_newest_first(results_root):  # by run id, never by file date
        picked = _pick(_records(run, problem), ranking_by)
        if picked is None:
            continue
        path = solutions_root / problem / f"{picked[0]}.py"
        if path.is_file():
            return Choice(path, run.stem, picked[1])
    return None
