"""Our recorded runs in KernelBench's terms: baseline-times JSON from the eager and torch.compile
records, score samples from the candidate records, and one summary row per problem.

KernelBench times one shape per problem, the file's own; if a run holds several shapes of a problem,
the largest is used. Times are means in milliseconds, as theirs are (our reports use medians).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from harness.records import Measurement
from submit.kernelbench import Sample
from submit.kernelbench_layout import record_key, sort_key

# our baseline name -> KernelBench's file name for it (results/timing/<hardware>/ in their tree)
BASELINE_FILES = {"eager": "baseline_time_torch.json",
                  "compile": "baseline_time_torch_compile_inductor_default.json"}


class RecordsError(ValueError):
    """A run that lacks what was asked of it (no timed baselines, no candidates); one line."""


def _size(record: Measurement) -> int:
    return math.prod(v for v in record.shape.values() if isinstance(v, int) and v > 0)


def _timed(record: Measurement) -> bool:
    return record.correct is True and (record.mean_us or record.median_us) is not None


def runtime_ms(record: Measurement) -> float | None:
    """Mean per-call time in ms (the median for records written before means were kept)."""
    us = record.mean_us if record.mean_us is not None else record.median_us
    return us / 1000.0 if us is not None else None


def by_problem(records: list[Measurement]) -> dict[tuple[str, str], list[Measurement]]:
    """KernelBench problems only, each at its largest recorded shape, in level then id order."""
    grouped: dict[tuple[str, str], list[Measurement]] = {}
    for r in records:
        key = record_key(r.problem)
        if key is not None:
            grouped.setdefault(key, []).append(r)
    out = {}
    for key in sorted(grouped, key=sort_key):
        largest = max(_size(r) for r in grouped[key])
        out[key] = [r for r in grouped[key] if _size(r) == largest]
    return out


def _stats(record: Measurement) -> dict:
    """KernelBench's entry: milliseconds to 3 significant digits, like their get_timing_stats."""
    def ms(us):
        return float(f"{us / 1000.0:.3g}") if us is not None else None
    mean_us, std_us = record.mean_us, record.std_us
    if mean_us is None:  # an older record: median and the std implied by its relative standard error
        mean_us = record.median_us
        std_us = record.rse * mean_us * math.sqrt(record.runs) if record.rse is not None and record.runs else None
    return {"mean": ms(mean_us), "std": ms(std_us), "min": ms(record.min_us), "max": ms(record.max_us),
            "num_trials": record.runs, "hardware": record.gpu, "device": "cuda:0"}


def baseline_json(records: list[Measurement], baseline: str = "eager") -> dict:
    """{"level1": {"19_ReLU.py": {mean, std, min, max, num_trials, hardware, device}}} from one baseline's
    correct, timed records."""
    out: dict = {}
    for (level, name), group in by_problem(records).items():
        timed = [r for r in group if r.kind == "baseline" and r.solution == baseline and _timed(r)]
        if timed:
            out.setdefault(level, {})[name] = _stats(timed[0])
    return out


def write_baselines(records: list[Measurement], out_dir: Path) -> dict[str, Path]:
    """Both of KernelBench's baseline files into out_dir; the baselines this run timed, by name."""
    tables = {name: baseline_json(records, name) for name in BASELINE_FILES}
    if not any(tables.values()):
        raise RecordsError("no timed eager or torch.compile records of KernelBench problems in this run "
                           "(a run without a CUDA device times nothing)")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, table in tables.items():
        if table:
            path = out_dir / BASELINE_FILES[name]
            path.write_text(json.dumps(table, indent=2) + "\n")
            written[name] = path
    return written


def _best(candidates: list[Measurement]) -> Measurement:
    """Fastest correct timed record; else a correct one; else a failure; else a skipped one."""
    timed = [r for r in candidates if _timed(r)]
    if timed:
        return min(timed, key=runtime_ms)
    correct = [r for r in candidates if r.correct]
    failed = [r for r in candidates if r.correct is False]
    return (correct or failed or candidates)[0]


def candidate_records(records: list[Measurement], solution: str | None = None) -> dict:
    """{(level, file): the record scored}: the named solution, or each problem's best candidate."""
    chosen = {}
    for key, group in by_problem(records).items():
        cands = [r for r in group if r.kind == "solution" and (solution is None or r.solution == solution)]
        if cands:
            chosen[key] = _best(cands)
    return chosen


def samples(records: list[Measurement], solution: str | None = None) -> list[Sample]:
    """One sample per attempted problem; a candidate skipped here (correct None: a CUDA C++ file on a
    machine without CUDA) was not attempted and is left out."""
    chosen = {k: r for k, r in candidate_records(records, solution).items() if r.correct is not None}
    if not chosen:
        raise RecordsError("no candidate records of KernelBench problems in this run"
                           + (f" for solution {solution!r}" if solution else ""))
    return [Sample(level, name, bool(r.correct), runtime_ms(r) if _timed(r) else None)
            for (level, name), r in chosen.items()]


def summary_rows(records: list[Measurement]) -> list[list]:
    """One row per problem: the best candidate, its state and time, the eager and compile times and the
    candidate's speedup over each (KernelBench's baseline_time / candidate_time)."""
    rows = []
    best = candidate_records(records)
    for key, group in by_problem(records).items():
        base = {b: runtime_ms(r) for r in group for b in BASELINE_FILES
                if r.kind == "baseline" and r.solution == b and _timed(r)}
        cand = best.get(key)
        t = runtime_ms(cand) if cand is not None and _timed(cand) else None
        state = "-" if cand is None else {True: "ok", False: "FAIL", None: "skip"}[cand.correct]
        rows.append([f"{key[0]}/{key[1]}", cand.solution if cand else "-", state, _fmt(t),
                     _fmt(base.get("eager")), _fmt(base.get("compile")),
                     _ratio(base.get("eager"), t), _ratio(base.get("compile"), t),
                     (cand.error or "")[:60] if cand is not None and cand.correct is not True else ""])
    return rows


SUMMARY_HEADERS = ["problem", "candidate", "correct", "ms", "eager ms", "compile ms", "vs eager", "vs compile",
                   "error"]


def _fmt(ms: float | None) -> str:
    return f"{ms:.4g}" if ms is not None else "-"


def _ratio(base: float | None, t: float | None) -> str:
    return f"{base / t:.2f}x" if base and t else "-"
