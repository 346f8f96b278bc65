"""PNG charts of recorded runs (`ksuite report RUN --chart F`, `ksuite compare ... --chart F`): a picture
of what the tables say, drawn with matplotlib's Agg backend so no display is needed.

A run: per problem, the fastest correct solution's speedup over the best baseline of the same run, and
its % of speed of light beside that baseline's, against the 100 % ceiling. Two runs: per problem, how
much faster the new run is than the base (two GPUs, or two days on one), and each run's % of speed of
light. Values over several shapes and dtypes are geometric means.
"""

from __future__ import annotations

import math
from pathlib import Path

from harness.spec import BASELINES


class ChartError(Exception):
    """Nothing to draw (a run with no timings, two runs with nothing timed in both)."""


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def fastest_per_case(records: list[dict]) -> dict:
    """(problem, shape, dtype) -> (fastest correct solution, fastest correct baseline), timed ones only."""
    best: dict = {}
    for r in records:
        if not (r.get("correct") and r.get("median_us")):
            continue
        key = (r["problem"], tuple(sorted(r["shape"].items())), r["dtype"])
        slot = 0 if r["kind"] == "solution" else 1
        pair = best.setdefault(key, [None, None])
        if pair[slot] is None or r["median_us"] < pair[slot]["median_us"]:
            pair[slot] = r
    return best


def run_summary(records: list[dict]) -> dict[str, dict]:
    """problem -> {speedup, solution %SOL, baseline %SOL}: geometric means over its shapes and dtypes."""
    per_problem: dict = {}
    for (problem, _, _), (sol, base) in fastest_per_case(records).items():
        entry = per_problem.setdefault(problem, {"speedup": [], "pct_sol": [], "baseline_pct_sol": []})
        if sol and base:
            entry["speedup"].append(base["median_us"] / sol["median_us"])
        entry["pct_sol"].append(sol and sol.get("pct_sol"))
        entry["baseline_pct_sol"].append(base and base.get("pct_sol"))
    return {p: {k: geomean(v) for k, v in e.items()} for p, e in sorted(per_problem.items())}


def colour(speedup: float | None, band: float = 0.05) -> str:
    """Green a clear win, red a clear loss, grey within 5 % (where noise lives)."""
    if not speedup:
        return "tab:gray"
    return "tab:green" if speedup > 1 + band else "tab:red" if speedup < 1 - band else "tab:gray"


def _bars(ax, labels: list[str], series: list[tuple[str, list, str]], ylabel: str, title: str) -> None:
    """Grouped bars, one group per label, one bar per series (name, values, colour); None draws nothing."""
    width = 0.8 / len(series)
    for i, (name, values, colour) in enumerate(series):
        xs = [x + (i - (len(series) - 1) / 2) * width for x in range(len(labels))]
        ax.bar(xs, [v or 0 for v in values], width, label=name, color=colour)
    ax.set_xticks(range(len(labels)), labels, rotation=35, ha="right")
    ax.set(ylabel=ylabel, title=title)


def _save(fig, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    _pyplot().close(fig)
    return path


def run_chart(records: list[dict], title: str, path: Path) -> Path:
    """Speedup over the best baseline, and % of speed of light, per problem of one run."""
    summary = run_summary(records)
    if not summary:
        raise ChartError(f"{title}: nothing was timed, so there is nothing to chart")
    plt = _pyplot()
    labels = list(summary)
    fig, (left, right) = plt.subplots(1, 2, figsize=(max(8, 1.1 * len(labels) + 4), 4.8))
    speedups = [summary[p]["speedup"] for p in labels]
    left.bar(labels, [s or 0 for s in speedups], color=[colour(s) for s in speedups])
    left.axhline(1.0, color="black", linewidth=0.8)
    left.set_xticks(range(len(labels)), labels, rotation=35, ha="right")
    left.set(ylabel="x the best baseline (geomean over shapes)", title="speedup of the fastest solution")
    _bars(right, labels, [("fastest solution", [summary[p]["pct_sol"] for p in labels], "tab:blue"),
                          ("best baseline", [summary[p]["baseline_pct_sol"] for p in labels], "tab:gray")],
          "% of speed of light", "against this GPU's ceiling")
    right.axhline(100.0, color="black", linestyle="--", linewidth=0.8, label="speed of light")
    right.legend(fontsize=8)
    fig.suptitle(title)
    return _save(fig, path)


def compare_summary(rows: list) -> dict[str, dict]:
    """problem -> {speedup: base us / new us, base and new %SOL}, over the solutions timed in both runs."""
    per_problem: dict = {}
    for r in rows:
        if r.implementation in BASELINES:
            continue
        entry = per_problem.setdefault(r.problem, {"speedup": [], "base_pct_sol": [], "new_pct_sol": []})
        if r.base_us and r.new_us:  # the same solution, shape and dtype in both runs
            entry["speedup"].append(r.base_us / r.new_us)
            entry["base_pct_sol"].append(r.base_pct_sol)
            entry["new_pct_sol"].append(r.new_pct_sol)
    summary = {p: {k: geomean(v) for k, v in e.items()} for p, e in sorted(per_problem.items())}
    return {p: s for p, s in summary.items() if s["speedup"]}


def compare_chart(rows: list, base_label: str, new_label: str, path: Path) -> Path:
    """New against base per problem: the speedup of the same solutions, and each run's % of speed of light."""
    summary = compare_summary(rows)
    if not summary:
        raise ChartError(f"{base_label} and {new_label}: no solution was timed in both, so there is nothing "
                         "to chart")
    plt = _pyplot()
    labels = list(summary)
    fig, (left, right) = plt.subplots(1, 2, figsize=(max(8, 1.1 * len(labels) + 4), 4.8))
    speedups = [summary[p]["speedup"] for p in labels]
    left.bar(labels, speedups, color=[colour(s) for s in speedups])
    left.axhline(1.0, color="black", linewidth=0.8)
    left.set_xticks(range(len(labels)), labels, rotation=35, ha="right")
    left.set(ylabel="base time / new time (geomean)", title=f"{new_label} vs {base_label}")
    _bars(right, labels, [(base_label, [summary[p]["base_pct_sol"] for p in labels], "tab:gray"),
                          (new_label, [summary[p]["new_pct_sol"] for p in labels], "tab:blue")],
          "% of speed of light (each GPU's own)", "solutions against each ceiling")
    right.axhline(100.0, color="black", linestyle="--", linewidth=0.8)
    right.legend(fontsize=8)
    return _save(fig, path)
