"""The profile as a terminal table and as a PNG bar chart of time shares with each op's Amdahl ceiling."""

from __future__ import annotations

from pathlib import Path

from tabulate import tabulate

from harness.records import shape_text
from suite.profile import amdahl


def _x(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}x"


def what(row: dict) -> str:
    return row["problem"] or f"unmapped ({row['op'].removeprefix('aten::')})"


def _ceiling(row: dict) -> str:
    """e2e at speed of light; without one (unmapped, or no calibration), in brackets, the gain if the op took
    no time at all: what ranks the row."""
    if row["sol"]:
        return _x(row["sol"]["gain"], 3)
    return f"({row['ceiling']:.3f}x)" if row.get("ceiling") else "-"


def _by_problem(groups: list[dict]) -> list[tuple[str, float]]:
    """(problem or "unmapped", summed share), largest first."""
    by: dict = {}
    for r in groups:
        name = r["problem"] or "unmapped"
        by[name] = by.get(name, 0.0) + r["share"]
    return sorted(by.items(), key=lambda kv: -kv[1])


def rest(profile: dict, top: int) -> str | None:
    """One line for the groups below the top rows: their share, by problem, so no time goes unseen."""
    below = profile["groups"][top:]
    if not below:
        return None
    parts = ", ".join(f"{name} {share * 100:.1f} %" for name, share in _by_problem(below))
    return f"the other {len(below)} groups: {sum(r['share'] for r in below) * 100:.1f} % of the time ({parts})"


def table(profile: dict, top: int = 10, tablefmt: str = "simple") -> str:
    rows = []
    for r in profile["groups"][:top]:
        m, s = r["measured"], r["sol"]
        rows.append([r["rank"], what(r), r["module"] or "-",
                     shape_text(r["shape"]) if r["shape"] else r["inputs"][:28], r["dtype"] or "-",
                     f"{r['share'] * 100:.1f}", f"{r['time_us'] / 1e3:.3f}", r["calls"],
                     f"{_x(m['k'])} {m['solution']}" if m else "not measured", _x(m and m["gain"], 3),
                     _x(s and s["k"], 1), _ceiling(r)])
    headers = ["#", "problem", "module", "shape", "dtype", "% time", "ms/step", "calls", "k measured",
               "e2e", "k SoL", "e2e SoL"]
    lines = [tabulate(rows, headers=headers, disable_numparse=True, tablefmt=tablefmt)]
    if any(not r["sol"] and r.get("ceiling") for r in profile["groups"][:top]):
        lines.append("e2e SoL in brackets: no speed of light for that row (unmapped, or no calibration); the gain "
                     "if it took no time at all, which ranks it")
    below = rest(profile, top)
    if below:
        lines.append(below)
    return "\n".join(lines)


def totals(profile: dict) -> str:
    m = profile["model"]
    lines = [
        f"model {m['name']} ({m['kind']}, {m['parameters'] / 1e9:.2f} B parameters) {m['dtype']} "
        f"batch {m['batch']} x {m['seq']}, {m['mode']}, on {m['gpu']}",
        f"measured step {profile['step_us'] / 1e3:.3f} ms; profiled {profile['device']} time "
        f"{profile['profiled_us'] / 1e3:.3f} ms/step over {profile['steps']} steps; "
        f"{profile['coverage'] * 100:.1f} % attributed to an op, {profile['mapped_share'] * 100:.1f} % mapped "
        f"to a problem; {len(profile['groups'])} groups",
        ("reconciles: " if profile["reconcile"]["ok"] else "does NOT reconcile: ") + profile["reconcile"]["note"],
    ]
    if not profile["calibrated"]:
        lines.append("k SoL: not known (no calibration for this device: `ksuite calibrate` on a GPU)")
    lines.append("k measured: the op's time per call in the model over our fastest correct solution at that "
                 "shape and dtype" + (f" in {_relative(profile['results_dir'])}" if profile["results_dir"] else
                                      " (no results on this device)"))
    return "\n".join(lines)


def _relative(folder: str) -> str:
    """results/<gpu> for a folder inside the repository that wrote the profile (its absolute path otherwise)."""
    parts = Path(folder).parts
    return "/".join(parts[parts.index("results"):]) if "results" in parts else folder


def plot(profile: dict, path: Path, top: int = 10) -> Path:
    """Bars: each group's share of the step; beside each, the end-to-end ceiling at its speed of light."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = profile["groups"][:top][::-1]
    labels = [f"{what(r)} {shape_text(r['shape']) if r['shape'] else ''} {r['module']}".strip() for r in rows]
    below = profile["groups"][top:]
    if below:  # the groups below the top rows as one bar, so the chart shows all of the time
        together = None
        if all(r["sol"] for r in below):
            together = {"gain": amdahl.combined_gain([(r["share"], r["sol"]["k"]) for r in below])}
        rows = [{"share": sum(r["share"] for r in below), "problem": None, "sol": together, "measured": None}] + rows
        names = [name for name, _ in _by_problem(below)]
        labels = [f"the other {len(below)} groups ({', '.join(names[:2])}{', ...' if len(names) > 2 else ''})"] + labels
    shares = [r["share"] * 100 for r in rows]
    fig, ax = plt.subplots(figsize=(11, 0.45 * len(rows) + 1.6))
    colours = ["#4C72B0" if r["problem"] else "#999999" for r in rows]
    if below:
        colours[0] = "#DDDDDD"
    ax.barh(range(len(rows)), shares, color=colours)
    for i, r in enumerate(rows):
        note = f" {r['share'] * 100:.1f} %"
        if r["sol"]:
            note += f"   ceiling {r['sol']['gain']:.3f}x"
        if r["measured"]:
            note += f"   ours {r['measured']['gain']:.3f}x"
        ax.text(shares[i], i, note, va="center", fontsize=8)
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.set_xlabel("% of the profiled step (grey: no registry problem)")
    ax.set_xlim(0, max(shares + [1]) * 1.6)
    m = profile["model"]
    ax.set_title(f"{m['name']} {m['dtype']} {m['batch']}x{m['seq']} {m['mode']} on {m['gpu']}:\n"
                 f"end-to-end gain if the op ran at speed of light / at our best kernel", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)
