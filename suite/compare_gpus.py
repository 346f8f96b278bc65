"""`ksuite compare-gpus`: one suite across GPU kinds, by % of speed of light and rank order, not raw times.

Why not `ksuite compare`: it divides two runs' medians, which across GPU kinds measures the machines,
not the kernels (it warns when the devices differ). Across kinds the fair questions are how close each
implementation comes to that GPU's own ceiling (pct_sol, from its calibration) and whether the order of
the implementations changes (a kernel that wins on one generation and loses on the next). Reads, in each
results/<gpu>/ folder, the newest run that timed each (problem, dtype) (ranks stay within one run: times of
two runs are not compared), or the files of one run id (a Ray run across kinds). Before 2026-12-05 it read
only each folder's newest run, which on two machines used for different rounds rarely held a common problem.
"""

from __future__ import annotations

import click
from tabulate import tabulate

from suite.report import num_text, shape_text
from suite.results_store import RESULTS_DIR, ResultsError, RunFile, runs_newest_first


def runs_by_gpu(slugs: tuple, run_id: str | None, root=None) -> dict[str, list]:
    """{gpu folder: records} for the folders asked for (default: every folder with a run): per (problem,
    dtype), the records of the newest run that has it, or with `run_id` that run's records."""
    root = root or RESULTS_DIR
    with_runs = sorted({p.parent.name for p in runs_newest_first(root)})
    unknown = [slug for slug in slugs if slug not in with_runs]
    if unknown:
        raise ResultsError(f"no runs under {root / unknown[0]} (GPU folders with runs: "
                           f"{', '.join(with_runs) or 'none'})")
    folders = list(slugs) or with_runs
    found = {}
    for slug in folders:
        paths = [p for p in runs_newest_first(root, slug) if run_id is None or p.stem == run_id]
        records: list = []
        seen: set = set()
        for path in paths[:1] if run_id else paths:
            run_records = RunFile(path).read()
            pairs = {(r.problem, r.dtype) for r in run_records} - seen
            records += [r for r in run_records if (r.problem, r.dtype) in pairs]
            seen |= pairs
        if records:
            found[slug] = records
    if len(found) < 2:
        raise ResultsError(f"compare-gpus needs runs from two GPU folders under {root}; found: "
                           f"{', '.join(found) or 'none'}" + (f" with run {run_id}" if run_id else ""))
    return found


MARGIN_PCT = 3.0  # two implementations closer than this on a GPU are a tie there: their order is noise


def ranks(records: list) -> dict[tuple, dict[str, tuple]]:
    """{(problem, shape, dtype): {implementation: (pct_sol, rank, median_us)}}, rank 1 the fastest correct one."""
    groups: dict[tuple, list] = {}
    for r in records:
        if r.correct and r.median_us:
            groups.setdefault((r.problem, shape_text(r.shape), r.dtype), []).append(r)
    return {key: {r.solution: (r.pct_sol, n, r.median_us)
                  for n, r in enumerate(sorted(rs, key=lambda r: r.median_us), 1)}
            for key, rs in groups.items()}


def reversed_pairs(times: dict[str, dict[str, float]], margin_pct: float) -> list[tuple[str, str]]:
    """Pairs of implementations (a, b) that one GPU times a faster than b by more than the margin and another
    b faster than a by more than the margin. `times`: {gpu: {implementation: median us}}, the same names."""
    factor = 1 + margin_pct / 100
    impls = sorted(next(iter(times.values())))
    out = []
    for n, a in enumerate(impls):
        for b in impls[n + 1:]:
            ratios = [t[b] / t[a] for t in times.values()]  # > 1: a faster on that GPU
            if max(ratios) > factor and min(ratios) < 1 / factor:
                out.append((a, b))
    return out


def compare_gpus(by_gpu: dict[str, list], margin_pct: float = MARGIN_PCT) -> tuple[list[list], list[tuple]]:
    """(table rows, groups where two implementations every GPU has change places by more than the margin)."""
    ranked = {slug: ranks(records) for slug, records in by_gpu.items()}
    keys = sorted(set.intersection(*(set(r) for r in ranked.values())))
    rows, differ = [], []
    for key in keys:
        common = set.intersection(*(set(ranked[s][key]) for s in ranked))
        times = {s: {i: ranked[s][key][i][2] for i in common} for s in ranked}
        if reversed_pairs(times, margin_pct):
            differ.append(key)
        for impl in sorted(common, key=lambda i: ranked[next(iter(ranked))][key][i][1]):
            cells = [c for s in ranked for c in (num_text(ranked[s][key][impl][0], ".0f"), ranked[s][key][impl][1])]
            rows.append([*key[:1], impl, *key[1:], *cells, "differs" if key in differ else ""])
    return rows, differ


@click.command("compare-gpus")
@click.argument("slugs", nargs=-1)
@click.option("--run", "run_id", default=None,
              help="This run id in each folder (default: per problem and dtype, each folder's newest run of it).")
@click.option("--margin", "margin_pct", default=MARGIN_PCT, show_default=True,
              help="Percent: two implementations closer than this on a GPU are a tie there, not an order.")
@click.option("--format", "fmt", type=click.Choice(["table", "md"]), default="table", show_default=True)
def compare_gpus_cmd(slugs, run_id, margin_pct, fmt):
    """Compare GPU folders (SLUGS, e.g. nvidia-h100 nvidia-h200; default all): each implementation's % of
    speed of light and rank on each GPU, and where two implementations change places by more than --margin."""
    by_gpu = runs_by_gpu(slugs, run_id)
    rows, differ = compare_gpus(by_gpu, margin_pct)
    headers = ["problem", "implementation", "shape", "dtype"] + [h for s in by_gpu for h in (f"{s} %SOL", "rank")]
    click.echo(tabulate(rows, headers=headers + ["order"], tablefmt="github" if fmt == "md" else "simple"))
    total = len({tuple(r[:1] + r[2:4]) for r in rows})
    click.echo(f"rank order the same (ties within {margin_pct:g} % aside) on {total - len(differ)} of {total} "
               "(problem, shape, dtype) groups"
               + (f"; differs on: {', '.join(' '.join(k) for k in differ)}" if differ else ""))


commands = [compare_gpus_cmd]
