"""A against B: two implementations of one problem timed in turn, round by round, in one warm process.

Two `ksuite bench` runs of two files (or of one file a day apart) differ by more than the files do at shapes of a
few microseconds: each worker has its own clocks, allocations and neighbours. The table search decides with paired
rounds instead (suite/optimize/paired.py); this puts the same question to any two files at the shapes a user
names, the held-out set by default, where neither side was tuned. Per (shape, dtype) the speedup of B over A is
the geometric mean over rounds of A's time / B's, with a bootstrap interval over rounds; overall, each round's
mean log-ratio over every shape, as the keep rule takes a bucket's. Pure functions of the numbers (the CLI runs
the child, suite/ab_cli.py), so they are tested without a GPU.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace
from pathlib import Path

from suite.optimize import dispatch, paired

HOME_TABLE_SUFFIX = "_home_table"
AGAIN_SUFFIX = "_again"


@dataclass(frozen=True)
class Comparison:
    """One (shape, dtype), or the whole set (shape None): medians, B's speedup over A and its interval."""

    shape: dict | None
    dtype: str | None
    a_us: float | None = None
    b_us: float | None = None
    speedup: float | None = None  # A's time / B's: above 1, B is faster
    low: float | None = None
    high: float | None = None
    rounds: int = 0
    error: str | None = None  # why nothing was timed: a wrong answer of A or B, a crash, a hang
    again_low: float | None = None  # the same question of fresh copies of both files (--again): its interval
    again_high: float | None = None

    @property
    def verdict(self) -> str:
        """'B faster' or 'A faster' where the interval leaves out 1 (and, asked again with fresh copies of both
        files, that interval too, on the same side), else 'tie'; 'failed' (a wrong answer, a crash, a hang) and
        'untimed' say why there is no interval."""
        if self.error:
            return "failed"
        if self.low is None or self.high is None:
            return "untimed"
        side = "B faster" if self.low > 1 else "A faster" if self.high < 1 else "tie"
        if self.again_low is None or self.again_high is None:
            return side
        again = "B faster" if self.again_low > 1 else "A faster" if self.again_high < 1 else "tie"
        return side if again == side else "tie"


def compare_shape(shape: dict, dtype: str, a_us: list[float], b_us: list[float], error: str | None = None,
                  seed: int = 0) -> Comparison:
    """One (shape, dtype) from its per-round times (A's and B's, the same rounds)."""
    if error:
        return Comparison(shape, dtype, error=error)
    rounds = min(len(a_us), len(b_us))
    v = paired.decide([(a_us, b_us)], seed=seed)  # the keep rule's numbers: A as the best, B as the candidate
    if v.speedup is None:  # untimed (no CUDA), or too few rounds for an interval
        return Comparison(shape, dtype, rounds=rounds)
    return Comparison(shape, dtype, statistics.median(a_us), statistics.median(b_us), v.speedup, v.low, v.high,
                      rounds)


def compare_all(timed: list[tuple[list[float], list[float]]], seed: int = 0) -> Comparison:
    """The set: per round the mean over (shape, dtype) pairs of log(A / B), then its interval over rounds."""
    timed = [(a, b) for a, b in timed if min(len(a), len(b)) >= 3]
    v = paired.decide(timed, seed=seed)
    if v.speedup is None:
        return Comparison(None, None)
    rounds = min(min(len(a), len(b)) for a, b in timed)
    return Comparison(None, None, speedup=v.speedup, low=v.low, high=v.high, rounds=rounds)


def with_second_draw(c: Comparison, again: Comparison) -> Comparison:
    """`c` with the same comparison of fresh copies of both files beside it: new modules, so new buffers and new
    code addresses. Two copies of one file differed by 2-6 % at calls of a few microseconds (scripts/
    same_file_probe.py, H100, 2026-12-06), a draw that all rounds of one comparison share; the table search keeps
    a change only when a second draw agrees (suite/optimize/table.py), and so does this verdict. A second draw
    that failed (the same code, wrong or crashed the second time) fails the row; one not timed leaves `c`."""
    if again.error:
        return replace(c, error=c.error or f"fresh copies: {again.error}")
    if again.low is None or again.high is None:
        return c
    return replace(c, again_low=again.low, again_high=again.high)


def fresh_copy(path: Path, folder: Path, tag: str) -> Path:
    """A copy of `path` in `folder`, the same source under another module name (`tag` keeps A's and B's apart)."""
    copy = Path(folder) / f"{Path(path).stem}{AGAIN_SUFFIX}_{tag}.py"
    copy.write_text(Path(path).read_text())
    return copy


class NoTablesError(ValueError):
    """The file keeps no per-GPU dispatch tables, so it has no home table to compare with."""


def own_table_gpus(path: Path) -> set[str]:
    """The GPUs (results folder names) the family file keeps a table of its own for: DISPATCH_BY_GPU's keys, read
    from the source without importing it (suite/optimize/dispatch.py, as the table search reads them)."""
    try:
        return set(dispatch.tables_by_gpu(Path(path).read_text()) or {})
    except (SyntaxError, ValueError, dispatch.DispatchError):  # a file the table search would refuse too
        return set()


def home_table_copy(path: Path, folder: Path) -> Path:
    """A copy of the family file `path` in `folder` that runs its home table (DISPATCH, searched on
    DISPATCH_GPU) on this GPU too: its DISPATCH_BY_GPU entry for this GPU dropped at import. `ksuite ab
    --home-table` times it against the file itself, which says whether this GPU's own search paid at shapes
    it did not tune on."""
    source = Path(path).read_text()
    if "DISPATCH_BY_GPU" not in source or "def this_gpu" not in source:
        raise NoTablesError(f"{path}: --home-table: the file keeps no per-GPU dispatch tables "
                            "(DISPATCH_BY_GPU and this_gpu())")
    copy = Path(folder) / f"{Path(path).stem}{HOME_TABLE_SUFFIX}.py"
    copy.write_text(source.rstrip("\n") + "\n\n\n# ksuite ab --home-table: this GPU's own table dropped, so the "
                    "file runs DISPATCH (the table of DISPATCH_GPU)\nDISPATCH_BY_GPU.pop(this_gpu(), None)\n")
    return copy
