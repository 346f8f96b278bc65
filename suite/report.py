"""Tables of recorded measurements: terminal, Markdown and JSON for other tools."""

from __future__ import annotations

import json
from pathlib import Path

from tabulate import tabulate

from harness import BASELINES
from harness.metrics import add_speedups
from harness.records import Measurement, shape_text

JSON_KEYS = ("problem", "solution", "kind", "shape", "dtype", "correct", "error", "median_us", "iqr_us", "runs",
             "gbps", "tflops", "pct_sol", "speedup_vs_best_baseline", "best_baseline", "speedup_vs",
             "max_abs_err", "rel_l2_err", "gpu", "run_id", "source_hash", "cached_from", "env")
CACHED_MARK = " [cached]"  # a baseline timing reused from an earlier run (bench --cached-baselines)


def finish(records: list[Measurement]) -> list[dict]:
    """Records as dicts with speedups recomputed over the whole run (baselines may come later)."""
    return add_speedups([r.to_dict() for r in records])


def num_text(value, fmt: str) -> str:
    """A number in `fmt`, or '-' when there is none."""
    return "-" if value is None else format(value, fmt)


def _rate(r: dict) -> str:
    if r.get("tflops") and r.get("flops") and r.get("bytes") and r["flops"] / r["bytes"] > 50:
        return f"{r['tflops']:.1f} TF/s"
    return f"{r['gbps']:.0f} GB/s" if r.get("gbps") else "-"


def _status(r: dict) -> str:
    """ok, FAIL, skip (not checked, with the reason in error: a CUDA C++ solution without a GPU) or ?."""
    return "ok" if r["correct"] else ("FAIL" if r["correct"] is False else "skip" if r.get("error") else "?")


def impl_text(r: dict) -> str:
    """The implementation's name, marked when its timing was reused from the cache."""
    return r["solution"] + (CACHED_MARK if r.get("cached_from") else "")


def cached_note(records: list[dict]) -> str:
    """A line under a table with cached rows: where their timings came from."""
    origins = sorted({(r["cached_from"].get("run_id") or "?") for r in records if r.get("cached_from")})
    if not origins:
        return ""
    n = sum(1 for r in records if r.get("cached_from"))
    return (f"{CACHED_MARK.strip()}: {n} baseline timing(s) reused from the cache (bench --cached-baselines), "
            f"timed in run(s) {', '.join(origins)}, not side by side with this run; `ksuite goals` leaves them out.")


def rows(records: list[dict]) -> list[list]:
    out = []
    for r in records:
        status = _status(r)
        vs = r.get("speedup_vs") or {}
        out.append([r["problem"], impl_text(r), r["kind"][0], shape_text(r["shape"]), r["dtype"], status,
                    num_text(r.get("median_us"), ".1f"), _rate(r), num_text(r.get("pct_sol"), ".0f"),
                    num_text(r.get("speedup_vs_best_baseline"), ".2f")]
                   + [num_text(vs.get(b), ".2f") for b in BASELINES])
    return out


HEADERS = ["problem", "impl", "k", "shape", "dtype", "check", "median us", "rate", "%SOL", "x best"] + \
    [f"x {b.replace('compile-max-autotune', 'max-at')}" for b in BASELINES]


def failures(records: list[dict]) -> list[str]:
    return [f"{r['problem']} / {r['solution']} {shape_text(r['shape'])} {r['dtype']}: {r['error']}"
            for r in records if r["correct"] is False and r.get("error")]


def without_empty_columns(headers: list[str], body: list[list]) -> tuple[list[str], list[list]]:
    """Leave out the columns that are '-' in every row (on a CPU run: every timing column)."""
    if not body:
        return headers, body
    keep = [i for i in range(len(headers)) if any(row[i] != "-" for row in body)]
    return [headers[i] for i in keep], [[row[i] for i in keep] for row in body]


def display_path(path: Path) -> str:
    """A path as the user typed it: relative to the working directory when under it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def run_heading(run_id: str, path: Path, fmt: str) -> str:
    """The first line of every report: which run it shows, and where that run is."""
    if fmt == "md":
        return f"Run `{run_id}` (`{display_path(path)}`)"
    return f"run {run_id} ({display_path(path)})"


def render(records: list[Measurement], fmt: str = "table") -> str:
    data = finish(records)
    if fmt == "json":
        return json.dumps([{k: r.get(k) for k in JSON_KEYS} for r in data], indent=1)
    headers, body = without_empty_columns(HEADERS, rows(data))
    table = tabulate(body, headers=headers, tablefmt="github" if fmt == "md" else "simple", disable_numparse=True)
    note = cached_note(data)
    if note:
        table += "\n\n" + note
    problems = failures(data)
    if problems:
        bullet = "- " if fmt == "md" else "  "
        table += "\n\nFailures:\n" + "\n".join(bullet + p for p in problems)
    return table


SUMMARY_HEADERS = ["problem", "shape", "dtype", "best baseline", "baseline us", "baseline %SOL", "solution",
                   "check", "us", "%SOL", "x best"]


def summary_rows(records: list[dict]) -> list[list]:
    """One row per (problem, shape, dtype, solution): the solution beside the fastest correct baseline."""
    best: dict = {}
    for r in records:
        key = (r["problem"], shape_text(r["shape"]), r["dtype"])
        if r["kind"] == "baseline" and r["correct"] and r.get("median_us"):
            if key not in best or r["median_us"] < best[key]["median_us"]:
                best[key] = r
    out = []
    for r in records:
        if r["kind"] != "solution":
            continue
        key = (r["problem"], shape_text(r["shape"]), r["dtype"])
        b = best.get(key, {})
        out.append([*key, impl_text(b) if b else "-", num_text(b.get("median_us"), ".1f"),
                    num_text(b.get("pct_sol"), ".0f"),
                    r["solution"], _status(r), num_text(r.get("median_us"), ".1f"),
                    num_text(r.get("pct_sol"), ".0f"), num_text(r.get("speedup_vs_best_baseline"), ".2f")])
    return out


def render_summary(records: list[Measurement], fmt: str = "table") -> str:
    data = finish(records)
    headers, body = without_empty_columns(SUMMARY_HEADERS, summary_rows(data))
    table = tabulate(body, headers=headers, tablefmt="github" if fmt == "md" else "simple", disable_numparse=True)
    note = cached_note(data)
    return table + ("\n\n" + note if note else "")
