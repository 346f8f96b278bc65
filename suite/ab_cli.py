"""`ksuite ab PROBLEM A B`: B against A in paired, interleaved rounds at each shape (suite/ab.py judges)."""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import asdict, replace
from pathlib import Path

import click
from tabulate import tabulate

from harness.dtype_choice import HELP as DTYPE_HELP
from harness.spec import SolutionRef
from suite import exit_codes
from suite.ab import (
    NoTablesError,
    compare_all,
    compare_shape,
    fresh_copy,
    home_table_copy,
    own_table_gpus,
    with_second_draw,
)
from suite.report import num_text, shape_text

SETS = ["heldout", "tuning", "workload", "large", "all"]
HELP = ("Time solution B against solution A (names or files) in one process, a batch of each in turn for --rounds "
        "rounds on the same inputs at each shape, after checking both there; print B's speedup over A (A's time / "
        "B's) per (shape, dtype) and over the whole set, each with a 95 % bootstrap interval over rounds: 'B "
        "faster' or 'A faster' where the interval leaves out 1, else a tie. Two bench runs differ by more than two "
        "files do at small shapes; this is how the table search decides, asked of any two files, by default at the "
        "held-out shapes neither was tuned on. --home-table: A is the file as it is, B the same file running its "
        "home table instead of this GPU's own, which says whether this GPU's search paid. --again asks each "
        "question a second time of fresh copies of both files, and a verdict needs both answers on the same side, "
        "as the table search's keep rule does: two copies of one file can differ by a few per cent at shapes of a "
        "few microseconds. Both files pass the source check and are checked at each shape before and after the "
        "timing, on fresh inputs (the five stages and the integrity probe are `ksuite check`'s). Without CUDA both "
        "are checked and nothing is timed.")


def _one(answer, shape: dict, dtype: str):
    """(the row of one (shape, dtype), its per-round times (A's, B's) when both were right and timed)."""
    if answer.status != "ok":
        return compare_shape(shape, dtype, [], [], f"{answer.status}: {answer.message}"), None
    (p,) = answer.shapes
    error = "; ".join(f"{side} wrong: {why}" for side, why in (("A", p.best_error),
                                                                ("B", None if p.correct else p.error)) if why)
    row = compare_shape(p.shape, p.dtype, p.best_us, p.cand_us, error or None)
    return row, (p.best_us, p.cand_us) if row.speedup is not None else None


def _interval(low, high) -> str:
    return f"[{low:.3f}, {high:.3f}]" if low is not None and high is not None else "-"


def _progress(c, again: bool) -> str:
    """One (shape, dtype) as it finishes, so a run cut short still says what it found."""
    if c.error or c.speedup is None:
        return c.error or c.verdict
    against = f" (fresh copies {_interval(c.again_low, c.again_high)})" if again else ""
    return (f"A {c.a_us:.2f} us, B {c.b_us:.2f} us: B {c.speedup:.3f}x A {_interval(c.low, c.high)}{against}, "
            f"{c.verdict}")


def _label(c, again: bool) -> list:
    cells = [num_text(c.a_us, ".2f"), num_text(c.b_us, ".2f"), num_text(c.speedup, ".3f"), _interval(c.low, c.high)]
    return cells + ([_interval(c.again_low, c.again_high)] if again else []) + [c.error or c.verdict]


@click.command("ab", help=HELP)
@click.argument("problem")
@click.argument("a")
@click.argument("b", required=False)
@click.option("--shapes", type=click.Choice(SETS), default="heldout", show_default=True,
              help="The shapes: the workload's held-out or tuning half, both (workload), or META's; on CPU its small "
                   "ones.")
@click.option("--shape", "shape_texts", multiple=True,
              help="This shape instead (4096x4096 or batch_size=4096,dim=8192); repeatable; on CPU too.")
@click.option("--dtype", "dtypes", multiple=True, default=("all",), show_default=True, help=DTYPE_HELP)
@click.option("--rounds", default=15, show_default=True, help="Paired rounds at each (shape, dtype).")
@click.option("--flush", type=click.Choice(["clean", "write"]), default="clean", show_default=True,
              help="The L2 flush before each timed call: clean (the suite's) or write (do_bench's, GPU MODE's).")
@click.option("--home-table", "home_table", is_flag=True,
              help="A is the file, B the same file with this GPU's own dispatch table dropped (B may be left out).")
@click.option("--again", is_flag=True,
              help="Ask each question again of fresh copies of both files; a verdict needs both on the same side.")
@click.option("--timeout", default=180.0, show_default=True,
              help="Seconds one (shape, dtype) may take, its checks and compilation included, before the child "
                   "counts as hung: that pair is a failure, a fresh child takes the next.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparisons as JSON lines instead of a table.")
def ab_cmd(problem, a, b, shapes, shape_texts, dtypes, rounds, flush, home_table, again, timeout, as_json):
    from harness.dtype_choice import DtypeChoiceError, select_dtypes
    from harness.integrity.static_check import check_file
    from harness.jobs.tuning_session import TuningSession
    from harness.jobs.worker import timed_shapes
    from harness.loader import load_problem
    from suite.commands import base_options, device_slug
    from suite.registry import Registry
    from suite.selection import shape_specs

    if rounds < 3:
        raise click.UsageError(f"--rounds {rounds}: at least 3 rounds make an interval")
    registry = Registry()
    ref = registry.problem(problem)  # unknown problem or solution: RegistryError, exit 2 (suite/cli.py)
    first = registry.solution(ref, a)
    if b is None and not home_table:
        raise click.UsageError("name B, or pass --home-table to compare A with its own home table")
    second = registry.solution(ref, b) if b is not None else first
    if home_table and second.path != first.path:
        raise click.UsageError("--home-table compares one file with itself: name A alone (or B the same as A)")
    if not home_table and first.path == second.path:
        raise click.UsageError(f"A and B are the same file ({first.path}): name two, or pass --home-table")
    options = replace(base_options("all", (), timeout, time=True), flush=flush,
                      custom_shapes=shape_specs([ref], tuple(shape_texts)),
                      shapes=shapes if not shape_texts else "all")
    loaded = load_problem(ref.path, "ksuite_ab_problem")
    try:
        dtype_list = select_dtypes(list(loaded.meta.dtypes), tuple(dtypes), str(ref.path))
    except DtypeChoiceError as exc:
        raise click.UsageError(str(exc)) from None
    shape_list = timed_shapes(loaded, options)[1]
    with tempfile.TemporaryDirectory(prefix="ksuite-ab-") as tmp:
        if home_table:
            try:
                second = SolutionRef(f"{first.name} (home table)", home_table_copy(first.path, Path(tmp)))
            except NoTablesError as exc:
                raise click.UsageError(str(exc)) from None
            slug = device_slug() if options.time else None
            if slug is not None and slug not in own_table_gpus(first.path):
                raise click.UsageError(f"{first.path}: --home-table: no table of its own for {slug}, so it already "
                                       "runs its home table here: nothing to compare")
        copies = (fresh_copy(first.path, Path(tmp), "a"), fresh_copy(second.path, Path(tmp), "b")) if again else None
        for side, sol in (("A", first), ("B", second)):
            found = check_file(sol.path, ref.path)
            if found:
                click.echo(f"{ref.name}: {side} ({sol.path}): {found}", err=True)
                sys.exit(exit_codes.FAILED)
        click.echo(f"{ref.name}: A = {first.name}, B = {second.name}; {len(shape_list)} shape(s) x "
                   f"{len(dtype_list)} dtype(s), {rounds} paired rounds each"
                   + ("; each asked again of fresh copies of both" if again else "")
                   + ("" if options.time else "; no CUDA device: both checked, nothing timed"), err=True)
        session = TuningSession(ref, options)
        rows, timed, seconds = [], [], []
        try:  # one question per (shape, dtype) to the warm child: a hang or a crash costs that pair alone
            for shape in shape_list:
                for dtype in dtype_list:
                    row, pair = _one(session.compare(first.path, second.path, [shape], [dtype], rounds, timeout,
                                                     check_best=True), shape, dtype)
                    if copies is not None:
                        second_row, second_pair = _one(session.compare(*copies, [shape], [dtype], rounds, timeout,
                                                                       check_best=True), shape, dtype)
                        row = with_second_draw(row, second_row)
                        seconds += [second_pair] if second_pair else []
                    rows.append(row)
                    timed += [pair] if pair else []
                    click.echo(f"{shape_text(shape)} {dtype}: {_progress(row, again)}", err=True)
        finally:
            session.close()
    overall = compare_all(timed)
    if again:
        overall = with_second_draw(overall, compare_all(seconds))
    if as_json:
        for c in rows + [overall]:
            click.echo(json.dumps({**asdict(c), "verdict": c.verdict, "a": first.name, "b": second.name}))
    else:
        table = [[shape_text(c.shape), c.dtype] + _label(c, again) for c in rows]
        headers = ["shape", "dtype", "A us", "B us", "B vs A", "95 % interval"] + (["fresh copies"] if again else [])
        click.echo(tabulate(table, headers=headers + ["verdict"], disable_numparse=True))
        counts = {v: sum(c.verdict == v for c in rows) for v in ("B faster", "A faster", "tie", "failed", "untimed")}
        click.echo(", ".join(f"{v}: {n}" for v, n in counts.items() if n))
        if overall.speedup is not None:
            against = f", fresh copies {_interval(overall.again_low, overall.again_high)}" if again else ""
            click.echo(f"all {overall.rounds} rounds, geometric mean over the timed (shape, dtype) pairs: B is "
                       f"{overall.speedup:.3f}x A [{overall.low:.3f}, {overall.high:.3f}]{against}: {overall.verdict}")
    sys.exit(exit_codes.FAILED if any(c.error for c in rows) else exit_codes.OK)


commands = [ab_cmd]
