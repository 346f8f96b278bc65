"""Which solution to send when the user names none: the fastest one our own runs recorded.

Reads results/<gpu>/<run>.jsonl directly (one JSON record per line): the newest run that timed at least
one correct solution of the problem decides. The leaderboard ranks by the last benchmark (`last`) or by
a mean over all of them, so the comparison is at the largest shape of the run (among the solutions timed
there), or the geometric mean over every shape (among the solutions timed on all of them). A solution
with any incorrect record in that run is never chosen. Given the leaderboard's GPU (`--gpu H100`), the runs of
that GPU's folders (results/nvidia-h100-80gb-hbm3/) decide first: the fastest kernel on one generation need not
be on another (2026-12-05: ksuite compare-gpus has vectorsum_v2's single-pass kernel and torch.compile changing
places between the H100 and the H200 at 1.6M floats); without such a run, any GPU's newest run, and the
choice names the folder it came from.
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
    gpu: str = ""  # the results folder of the run, e.g. nvidia-h100-80gb-hbm3


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


def _on_board(shape: tuple, cases: list[dict]) -> bool:
    """Whether a recorded shape is one of the leaderboard's benchmark cases (its sizes; a case's seed aside)."""
    return any(all(case.get(k) == v for k, v in shape) for case in cases)


def _pick(records: list[dict], ranking_by: str, benchmarks: list[dict] = ()) -> tuple[str, str] | None:
    """(solution name, how) of the fastest correct solution among these records, or None. Where the run timed
    the leaderboard's own benchmark sizes, those decide (its last one, or the mean over them): a held-out run
    reaches past them (vectorsum_v2 to 134M floats, where the board stops at 52M)."""
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
    shapes = {k for k in shapes if _on_board(k, list(benchmarks))} or shapes
    if ranking_by == "last":  # the board's last size, or the largest shape, decides among the solutions timed on it
        last = [k for k in shapes if _on_board(k, list(benchmarks)[-1:])]
        shape = last[0] if last else max(shapes, key=_size)
        name = min((s for s in times if shape in times[s]), key=lambda s: times[s][shape])
        return name, f"{times[name][shape]:.1f} us at {shape_text(as_recorded[shape])}"
    full = [s for s in times if shapes <= set(times[s])]  # timed on every shape that decides
    if not full:
        return None

    def geomean(s: str) -> float:
        return math.exp(sum(math.log(times[s][k]) for k in shapes) / len(shapes))
    name = min(full, key=geomean)
    return name, f"geometric mean {geomean(name):.1f} us over {len(shapes)} shapes"


def _on_gpu(folder: str, gpu: str) -> bool:
    """Whether a results folder (nvidia-h100-80gb-hbm3) holds runs of a leaderboard GPU name (H100)."""
    words = folder.lower().split("-")
    return gpu.lower() in words


def fastest_recorded(problem: str, ranking_by: str, results_root: Path, solutions_root: Path,
                     gpu: str | None = None, benchmarks: list[dict] = ()) -> Choice | None:
    """The fastest correct solution file of the newest run that timed `problem`, if its file still exists; with
    `gpu`, the newest such run on that GPU first, then any; with the board's `benchmarks`, judged at them."""
    runs = runs_newest_first(results_root)  # by run id, never by file date
    if gpu:
        runs = [r for r in runs if _on_gpu(r.parent.name, gpu)] + [r for r in runs if not _on_gpu(r.parent.name, gpu)]
    for run in runs:
        picked = _pick(_records(run, problem), ranking_by, benchmarks)
        if picked is None:
            continue
        path = solutions_root / problem / f"{picked[0]}.py"
        if path.is_file():
            return Choice(path, run.stem, picked[1], run.parent.name)
    return None
