"""`ksuite optimize --report`: per ledger, a PNG (each experiment's time, the best-so-far line, kept
points marked) and a Markdown summary."""

from __future__ import annotations

from pathlib import Path

from suite.optimize.ledger import Ledger, Row


def best_so_far(rows: list[Row]) -> list[float | None]:
    """The kept version's time after each experiment (a kept row sets it; others carry it forward)."""
    out, best = [], None
    for r in rows:
        if r.status == "kept" and r.median_us is not None:
            best = r.median_us
        out.append(best)
    return out


def plot(rows: list[Row], title: str, path: Path) -> Path | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    timed = [r for r in rows if r.median_us is not None]
    if not timed:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.5))
    colors = {"kept": "tab:green", "discarded": "tab:gray"}
    ax.scatter([r.experiment for r in timed], [r.median_us for r in timed], s=18,
               c=[colors.get(r.status, "tab:red") for r in timed], label="experiment")
    kept = [r for r in timed if r.status == "kept"]
    ax.scatter([r.experiment for r in kept], [r.median_us for r in kept], marker="*", s=160, c="tab:green",
               edgecolors="black", label="kept", zorder=3)
    line = best_so_far(rows)
    ax.step([r.experiment for r in rows], line, where="post", color="tab:blue", label="best so far")
    ax.set(xlabel="experiment", ylabel="median us (geomean over shapes)", title=title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def markdown(rows: list[Row], title: str, png: Path | None) -> str:
    counts = {s: sum(r.status == s for r in rows) for s in ("kept", "discarded", "crashed", "timed-out")}
    kept = [r for r in rows if r.status == "kept"]
    lines = [f"# {title}", "", f"{len(rows)} experiments: " + ", ".join(f"{n} {s}" for s, n in counts.items()), ""]
    first, last = (kept[0], kept[-1]) if kept else (None, None)
    if first and last and first.median_us and last.median_us:
        lines += [f"Best: {last.median_us:.2f} us ({first.median_us / last.median_us:.2f}x the start"
                  + (f", {last.pct_sol:.0f} % of speed of light" if last.pct_sol else "")
                  + (f", {last.speedup_vs_baseline:.2f}x the best baseline" if last.speedup_vs_baseline else "")
                  + ")", ""]
    elif not any(r.median_us for r in rows):
        lines += ["Nothing was timed (no CUDA device): nothing could be kept.", ""]
    if png:
        lines += [f"![progress]({png.name})", ""]
    lines += ["| # | status | median us | % SOL | x baseline | description |", "|---|---|---|---|---|---|"]
    for r in kept:
        fmt = (lambda v, f: f.format(v) if v is not None else "-")
        lines.append(f"| {r.experiment} | {r.status} | {fmt(r.median_us, '{:.2f}')} | {fmt(r.pct_sol, '{:.0f}')} | "
                     f"{fmt(r.speedup_vs_baseline, '{:.2f}')} | {r.description} |")
    return "\n".join(lines) + "\n"


def write_reports(ledger_paths: list[Path]) -> list[Path]:
    out = []
    for path in ledger_paths:
        rows = Ledger(path).rows()
        png = plot(rows, path.stem, path.with_suffix(".png"))
        md = path.with_suffix(".md")
        md.write_text(markdown(rows, path.stem, png))
        out.append(md)
    return out
