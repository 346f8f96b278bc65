"""The experiment log: one TSV row per experiment, appended and flushed at once (autoresearch-style), so
an interrupted run keeps every row. Lives at results/<gpu-slug>/optimize/<problem>-<run>.tsv.

A row says what its candidate was (description, source hash); the candidate file itself is a cache
(suite/optimize/command.py: candidates_root) and the kept version is the solution file under solutions/."""

from __future__ import annotations

import csv
import os
from dataclasses import asdict, dataclass, fields
from datetime import datetime, timezone
from pathlib import Path

STATUSES = ("kept", "discarded", "crashed", "timed-out")


@dataclass(frozen=True)
class Row:
    experiment: int
    strategy: str
    description: str
    correct: bool | None
    median_us: float | None
    pct_sol: float | None
    speedup_vs_baseline: float | None
    status: str
    source_hash: str
    time: str = ""
    bucket: str = ""  # the dispatch bucket the experiment tuned (table search), "" for the whole file
    per_min: float | None = None  # experiments per minute so far in this run (table search)


COLUMNS = ["time"] + [f.name for f in fields(Row) if f.name != "time"]


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return " ".join(str(value).split())  # no tabs or newlines inside a cell


def _parse(name: str, text: str):
    if text == "-":
        return None
    if name in ("median_us", "pct_sol", "speedup_vs_baseline", "per_min"):
        return float(text)
    if name == "experiment":
        return int(text)
    if name == "correct":
        return text == "True"
    return text


class Ledger:
    def __init__(self, path: Path):
        self.path = Path(path)

    def append(self, row: Row) -> Row:
        assert row.status in STATUSES, row.status
        row = Row(**{**asdict(row), "time": row.time or datetime.now(timezone.utc).isoformat(timespec="seconds")})
        self.path.parent.mkdir(parents=True, exist_ok=True)
        new = not self.path.exists() or self.path.stat().st_size == 0
        line = "\t".join(_cell(asdict(row)[c]) for c in COLUMNS) + "\n"
        with open(self.path, "a") as f:
            if new:
                f.write("\t".join(COLUMNS) + "\n")
            f.write(line)
            f.flush()
            os.fsync(f.fileno())
        return row

    def rows(self) -> list[Row]:
        if not self.path.is_file():
            return []
        with open(self.path, newline="") as f:
            reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
            return [Row(**{k: _parse(k, v) for k, v in rec.items() if k in COLUMNS}) for rec in reader
                    if rec.get("status") in STATUSES]
