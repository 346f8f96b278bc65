"""The profile as a terminal table and as a PNG bar chart of time shares with each op's Amdahl ceiling."""

from __future__ import annotations

from pathlib import Path

from tabulate import tabulate

from harness.records import shape_text


def _x(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}x"


def what(row: dict) -> str:
    return row["problem"] or f"unmapped ({row['op'].removeprefix('aten::')})"


def table(profile: dict, top: int = 10) -> str:
    rows = []
    for r in profile["groups"][:top]:
        m, s = r["measured"], r["sol"]
        rows.append([r["rank"], what(r), r["module"] or "-",
                     shape_text(r["shape"]) if r["shape"] else r["inputs"][:28], r["dtype"] or "-",
                     f"{r['share'] * 100:.1f}", f"{r['time_us'] / 1e3:.3f}", r["calls"],
                     f"{_x(m['k'])} {m['solution']}" if m else "not measured", _x(m and m["gain"], 3),
                     _x(s and s["k"], 1), _x(s and s["gain"], 3)])
    headers = ["#", "problem", "module", "shape", "dtype", "% time", "ms/step", "calls", "k measured",
               "e2e", "k SoL", "e2e SoL"]
    return tabulate(rows, headers=headers, disable_numparse=True)


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
                 "shape and dtype" + (f" in {profile['results_dir']}" if profile["results_dir"] else
                                      " (no results on this device)"))
    return "\n".join(lines)


def plot(profile: dict, path: Path, top: int = 10) -> Path:
    """Bars: each group's share of the step; beside each, the end-to-end ceiling at its speed of light."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = profile["groups"][:top][::-1]
    labels = [f"{what(r)} {shape_text(r['shape']) if r['shape'] else ''} {r['module']}".strip() for r in rows]
    shares = [r["share"] * 100 for r in rows]
    fig, ax = plt.subplots(figsize=(11, 0.45 * len(rows) + 1.6))
    colours = ["#4C72B0" if r["problem"] else "#999999" for r in rows]
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
    ax.set_title(f"{m['name']} {m['dtype']} {m['batch']}x{m['seq']} {m['mode']} on {m['gpu']}: "
                 f"end-to-end gain if the op ran at speed of light / at our best kernel", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)
