"""Recorded runs on disk: one JSON-lines file per run under results/<gpu-slug>/, appended atomically."""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path

from harness.records import Measurement
from suite.registry import ROOT

RESULTS_DIR = ROOT / "results"
RUN_ID = re.compile(r"\d{8}-\d{6}")  # new_run_id(): UTC start time, so text order is time order


class ResultsError(Exception):
    """A run file that does not exist or cannot be read; the message names it."""


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")


class RunFile:
    """Append-only while a run is measured: each record is one line written with a single O_APPEND write and
    fsync'd, so an interrupted run keeps every finished record and can be resumed. `rewrite` replaces a finished
    file whole (`ksuite confirm`, once its last group is timed)."""

    def __init__(self, path: Path):
        self.path = Path(path)

    @classmethod
    def create(cls, slug: str, run_id: str, root: Path | None = None) -> RunFile:
        folder = Path(root or RESULTS_DIR) / slug
        folder.mkdir(parents=True, exist_ok=True)
        return cls(folder / f"{run_id}.jsonl")

    @property
    def run_id(self) -> str:
        return self.path.stem

    def append(self, record: Measurement) -> None:
        line = _line(record).encode()
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            _drop_torn_tail(fd)
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    def rewrite(self, records: list[Measurement]) -> None:
        """Replace the file's records with these, at once: written beside it, then renamed over it."""
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w") as f:
            f.writelines(_line(r) for r in records)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def read(self) -> list[Measurement]:
        """The run's records; a record measured again (a resume after its source changed) supersedes the
        earlier one of the same key, which stays in the file."""
        if not self.path.is_file():
            raise ResultsError(f"{self.path}: no such run file")
        lines = self.path.read_text().splitlines()
        records = []
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                if not isinstance(data, dict):
                    raise TypeError(f"a JSON {type(data).__name__}, not an object")
                records.append(Measurement.from_dict(data))
            except (json.JSONDecodeError, TypeError) as exc:
                if isinstance(exc, json.JSONDecodeError) and n == len(lines):
                    continue  # a torn last line from a killed run: everything before it is intact
                raise ResultsError(f"{self.path}:{n}: not a record ({exc})") from None
        latest = {}
        for record in records:
            latest.pop(record.key, None)
            latest[record.key] = record
        return list(latest.values())

    def done_keys(self) -> set:
        return {r.key for r in self.read()} if self.path.is_file() else set()


def _line(record: Measurement) -> str:
    """A record as one line of its run file."""
    return json.dumps(record.to_dict(), default=str) + "\n"


def _drop_torn_tail(fd: int) -> None:
    """A run killed mid-write leaves a last line without its newline; it was never a record, so cut it
    off before appending (otherwise the next record would be glued onto it and lost)."""
    size = os.fstat(fd).st_size
    if not size or os.pread(fd, 1, size - 1) == b"\n":
        return
    tail = os.pread(fd, min(size, 1 << 20), max(0, size - (1 << 20)))
    cut = tail.rfind(b"\n")
    os.ftruncate(fd, size - len(tail) + cut + 1 if cut >= 0 else 0)


def run_order_key(path: Path) -> tuple[str, str]:
    """When a run was started, as sortable text: its id (YYYYMMDD-HHMMSS, in UTC), else the run id or the
    timestamp of its first record. Never the file's modification time, which git does not keep."""
    path = Path(path)
    if RUN_ID.fullmatch(path.stem):
        return path.stem, path.stem
    try:
        with open(path) as f:
            first = json.loads(f.readline() or "{}")
    except (OSError, ValueError):
        first = {}
    first = first if isinstance(first, dict) else {}
    if RUN_ID.fullmatch(str(first.get("run_id") or "")):
        return first["run_id"], path.stem
    stamp = str(first.get("timestamp") or "")  # 2026-11-30T03:14:48+00:00 -> 20261130-031448
    started = stamp[:19].replace("-", "").replace(":", "").replace("T", "-")
    return (started if RUN_ID.fullmatch(started) else ""), path.stem


def runs_newest_first(root: Path | None = None, slug: str | None = None) -> list[Path]:
    """Every run file of `slug` (or of every GPU), newest first by run id."""
    paths = Path(root or RESULTS_DIR).glob(f"{slug or '*'}/*.jsonl")
    return sorted(paths, key=run_order_key, reverse=True)


def find_run(run: str | None, slug: str | None = None, root: Path | None = None) -> RunFile:
    """A run by path, by id (searched in every GPU folder), or the newest run of `slug` (or of all)."""
    root = Path(root or RESULTS_DIR)
    if run and Path(run).is_file():
        return RunFile(Path(run))
    candidates = runs_newest_first(root, slug)
    if run:
        matches = [p for p in candidates if p.stem == run] or sorted(root.glob(f"*/{run}.jsonl"))
        if not matches:
            raise ResultsError(f"no run {run!r} under {root}")
        return RunFile(matches[0])
    if not candidates:
        raise ResultsError(f"no recorded runs under {root}" + (f"/{slug}" if slug else "")
                           + " (run `ksuite bench` first)")
    return RunFile(candidates[0])


def previous_run(run: RunFile) -> RunFile:
    """The run recorded just before `run` in its GPU folder, by run id."""
    key = run_order_key(run.path)
    older = [p for p in runs_newest_first(run.path.parent.parent, run.path.parent.name) if run_order_key(p) < key]
    if not older:
        raise ResultsError(f"{run.path}: no earlier run in {run.path.parent} to compare it with; name two runs")
    return RunFile(older[0])


def calibrated_gpus_newest_first(root: Path | None = None) -> list[str]:
    """GPU folders with a calibration, the one whose newest run is newest first (by run id, not file date)."""
    folders = [p.parent for p in Path(root or RESULTS_DIR).glob("*/calibration.json")]
    newest = {f: max((run_order_key(p) for p in f.glob("*.jsonl")), default=("", "")) for f in folders}
    return [f.name for f in sorted(folders, key=lambda f: (newest[f], f.name), reverse=True)]


def calibration_path(slug: str, root: Path | None = None) -> Path:
    return Path(root or RESULTS_DIR) / slug / "calibration.json"


def load_calibration(slug: str, root: Path | None = None) -> dict | None:
    path = calibration_path(slug, root)
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path}: not valid JSON ({exc})") from None


def save_calibration(slug: str, data: dict, root: Path | None = None) -> Path:
    path = calibration_path(slug, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)
    return path
