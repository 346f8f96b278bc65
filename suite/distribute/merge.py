"""The driver's side of a spread run: every record lands in one run file, and lost work still gets records.

Why here and not in the workers: only the driver writes results/ (one writer, atomic appends, so a cut run
resumes like any other), and a worker that died cannot say what it left undone; the driver knows the
group it sent, so it writes a failed record, with the cause, for every implementation that has none.
"""

from __future__ import annotations

from datetime import datetime, timezone

from harness.records import Measurement
from suite.distribute.groups import GroupJob, shape_key
from suite.results_store import RunFile
from suite.resume import identity_path, read_identity, write_identity


def record_key(record: dict) -> tuple:
    """(impl, shape items, dtype): Options.done's form of a record's key within its problem."""
    return record["solution"], shape_key(record.get("shape") or {}), record.get("dtype")


def failure_records(job: GroupJob, cause: str) -> list[Measurement]:
    """A failed record for each implementation of the group without one (the worker died twice)."""
    group, have = job.group, set(job.received)
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    impls = group.impls or tuple((s.name, "solution") for s in group.solutions)
    return [Measurement(problem=group.problem.name, solution=name, kind=kind, shape=group.shape or {},
                        dtype=group.dtype or "", correct=False, error=cause, gpu=job.env.get("gpu", "cpu"),
                        env=job.env, run_id=job.run_id, timestamp=stamp)
            for name, kind in impls if (name, shape_key(group.shape or {}), group.dtype) not in have]


def keys_of(records) -> set:
    """Record identities, to tell whether two runs measured the same things (tests, scripts)."""
    return {r.key for r in records}


class RunFiles:
    """Run files of one run id, one per GPU folder: Ray may bring records from several GPU kinds, and
    results stay per GPU folder (results/<gpu-slug>/<run-id>.jsonl), each with the run's options file."""

    def __init__(self, first: RunFile):
        self.first = first
        self.by_slug = {first.path.parent.name: first}

    def for_slug(self, slug: str) -> RunFile:
        if slug not in self.by_slug:
            run = RunFile.create(slug, self.first.run_id, self.first.path.parent.parent)
            identity = read_identity(self.first)
            if identity is not None and not identity_path(run).exists():
                write_identity(run, identity)
            self.by_slug[slug] = run
        return self.by_slug[slug]

    def done_keys(self) -> set:
        """Keys recorded under this run id in every GPU folder (a resume skips them)."""
        root = self.first.path.parent.parent
        keys = set()
        for path in sorted(root.glob(f"*/{self.first.run_id}.jsonl")):
            keys |= RunFile(path).done_keys()
        return keys
