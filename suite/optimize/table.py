"""`ksuite optimize` on a family solution: search each shape bucket's tunables and write the dispatch table.

For every bucket the tuning shapes fall in (never a held-out shape), coordinate descent over the family's
TUNABLE_CHOICES around the bucket's current entry (suite/optimize/search.py), the buckets in turn a few
experiments at a time (slowest first), so a short budget reaches all of them; each candidate is the best file
with only that bucket's entry changed, checked at the bucket's shapes and timed against the best in one warm
child (harness/jobs/tuning_session.py), interleaved, unless one recorded call of each shows the same Triton
launches and torch operations (then it is a ledger row, not an experiment); kept when the paired confidence
interval says faster (suite/optimize/paired.py; a near miss, faster on the evidence but under the line, is
timed once more over twice the rounds first). Buckets are decided one by one, so a noisy bucket costs only
its own experiments. A bucket no tuning shape falls in is searched at a probe shape made from the tuning set
and the bucket's ranges, never a held-out shape (suite/optimize/probe_shapes.py), first in each round, since
its entry was a copy, and a bucket whose tuning shapes sit in the low part of its ranges gets an edge probe
beside them, so its entry is chosen on shapes spanning it (`--probes-only`: the probes' buckets alone;
`--split rows=256` first adds an edge to BUCKETS, and the buckets it makes, copies of the ones they were cut
from, are searched too). At the end, buckets neither reaches take the entry of their nearest bucket that one
does (suite/optimize/dispatch.py), and the file passes the full five-stage check, or the starting file is put
back.
"""

from __future__ import annotations

import math
import re
import statistics
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.environment import gpu_slug
from harness.spec import file_hash
from harness.workloads import shape_key
from suite.optimize import dispatch, paired, tunables
from suite.optimize.ledger import Ledger, Row
from suite.optimize.proposal import Context
from suite.optimize.search import SearchProposer

COMMENT = "# ksuite optimize table:"
# A table another GPU's search started from DISPATCH says so while it lasts: its entries no search on this GPU
# has timed are still the home GPU's.
INHERITED = "the entries no search on this GPU has timed are DISPATCH's, from"
# The table's comment names the buckets whose entries are copies, after this, so a later run that reaches fewer
# buckets (--bucket, no --shape) keeps the entries an earlier one tuned instead of copying over them.
COPIES = "the rest copy the nearest tuned bucket's entry"
OWN_COUNT = re.compile(r"(\d+) of (\d+) buckets tuned at their own shapes")
PASS = 4  # experiments per bucket per round of the rotation


@dataclass
class TableSetup:
    problem_path: Path
    start: Path  # the family file; also where the table is written unless `kept` says otherwise
    kept: Path
    work_dir: Path  # every candidate as a real file, in the cache (command.candidates_root), not results/
    ledger: Ledger
    shapes: list[dict]  # the workload's tuning set
    dtypes: list[str]
    probes: dict = field(default_factory=dict)  # bucket -> probe shape, for buckets no tuning shape is in
    edges: dict = field(default_factory=dict)  # bucket -> a shape toward its ranges' far edge (probe_shapes.py)
    probes_only: bool = False  # search the probes' buckets alone; the tuning shapes' entries stay as they are
    fresh: set = field(default_factory=set)  # buckets `--split` made: copies, searched even with probes_only
    only: tuple = ()  # `--bucket` glob patterns: search only the buckets they match (empty: every bucket)
    rounds: int = 15
    per_bucket: int = 12  # experiments per bucket at most
    budget_s: float | None = None
    seed: int = 0
    run_id: str = ""
    gpu: str = "cpu"
    request_timeout_s: float = 180.0
    flush: str = "clean"  # the timer's L2 flush (harness/timing.py), named in the table's comment if not clean
    confirm: bool = True  # a kept change is timed again as fresh copies of both files (again_as_copies)
    second_look: bool = True  # a near miss (paired.near_miss) is timed once more over twice the rounds


@dataclass
class TableResult:
    reason: str
    kept: int = 0
    experiments: int = 0
    table: dict = field(default_factory=dict)
    gains: dict = field(default_factory=dict)  # bucket -> speedup of its final entry over the start's
    untimed: bool = False
    probed: int = 0  # buckets searched at a probe shape
    edged: int = 0  # buckets searched at their tuning shapes and an edge probe
    same: int = 0  # candidates not timed: the same GPU work as the best (TuningSession.same_launches)
    second_looks: int = 0  # near misses timed once more (paired.near_miss)


def _fault(answer) -> str | None:
    """Why a comparison of a file with itself cannot be a starting point (failed, or wrong somewhere), or None."""
    if answer.status != "ok":
        return answer.message
    wrong = [p for p in answer.shapes if not p.correct]
    return f"{wrong[0].error} at {wrong[0].shape} {wrong[0].dtype}" if wrong else None


def _decided(answer, seed: int, failed: str) -> paired.PairedVerdict:
    """A further answer about a candidate decided by the keep rule; not kept where it failed or a side was wrong on
    its inputs (`failed` names which further question it was)."""
    fault = _fault(answer)
    if fault:
        return paired.PairedVerdict(False, f"{failed} ({fault})")
    return paired.decide([(p.best_us, p.cand_us) for p in answer.shapes], seed=seed)


def _times(answer) -> dict:
    """shape key -> median time of the best file there, summed over dtypes."""
    times: dict = {}
    for p in answer.shapes:
        key = shape_key(p.shape)
        times[key] = times.get(key, 0.0) + (statistics.median(p.best_us) if p.best_us else 0.0)
    return times


def _geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else None


class TableSearch:
    def __init__(self, setup: TableSetup, session, clock: Callable[[], float] = time.monotonic,
                 echo: Callable[[str], None] = print, full_check: Callable[[Path], str | None] | None = None):
        self.s, self.session, self.clock, self.echo, self.full_check = setup, session, clock, echo, full_check
        self.source = Path(setup.start).read_text()
        # what the kept file held before (None: no such file), put back if the tuned table fails its check
        self.original = Path(setup.kept).read_text() if Path(setup.kept).is_file() else None
        self.buckets = dispatch.read_buckets(self.source)
        # this GPU's table (dispatch.py: one per GPU where the file has DISPATCH_GPU), searched and rewritten
        self.slug = gpu_slug(setup.gpu)
        self.table = dict(dispatch.read_table(self.source, self.slug))
        self.best_path = Path(setup.start)
        self.started = clock()
        self.result = TableResult("")
        self.n = len(setup.ledger.rows())
        self.reached: set = set()  # buckets with a tuning or probe shape: their entries are their own
        self.searched: set = set()  # buckets this run put a candidate to (timed, or found to be the same work)
        self.inherits = self.inherited_from()
        self.unasked: set = set()  # buckets with a probe shape that --bucket left out: theirs too
        self.tuned_before = self.tuned_in_earlier_runs()  # theirs too, where this run does not reach them

    def tuned_in_earlier_runs(self) -> set:
        """The buckets of this GPU's table that an earlier run tuned at their own shapes (tuning, probe or the
        user's): all but the copies its comment names; every one where it counts all buckets as tuned (a
        table written before the comment named its copies); none where it cannot tell."""
        if dispatch.writes_home(self.source, self.slug):
            remarks = [line for line in self.source.splitlines() if line.startswith(COMMENT)]
        else:
            remarks = dispatch.gpu_remarks(self.source, self.slug)
        text = " ".join(line.removeprefix(COMMENT).strip() for line in remarks if line.startswith(COMMENT))
        if f"{COPIES}:" in text:
            named = set(text.split(f"{COPIES}:", 1)[1].replace(";", " ").split())
            return set(self.table) - named
        counted = OWN_COUNT.search(text)
        if counted and counted.group(1) == counted.group(2) and len(self.table) == int(counted.group(2)):
            return set(self.table)
        return set()

    def inherited_from(self) -> str | None:
        """The home GPU whose DISPATCH this GPU's table started as (its first search here copies it, and the
        table says so in each later run), or None: the home table itself, or one filled on this GPU."""
        if dispatch.writes_home(self.source, self.slug):
            return None
        fresh = self.slug not in (dispatch.tables_by_gpu(self.source) or {})
        if fresh or any(INHERITED in line for line in dispatch.gpu_remarks(self.source, self.slug)):
            return dispatch.home_gpu(self.source)
        return None

    def log(self, bucket: str, description: str, status: str, correct, median_us, source_hash: str) -> None:
        minutes = max(self.clock() - self.started, 1e-9) / 60
        row = self.s.ledger.append(Row(self.n, "table", description, correct, median_us, None, None, status,
                                       source_hash, bucket=bucket, per_min=self.result.experiments / minutes))
        self.n += 1
        numbers = f" {row.median_us:.2f} us" if row.median_us else ""
        self.echo(f"  #{row.experiment} [{bucket}] {status}{numbers}: {description}")

    def over_budget(self) -> bool:
        return self.s.budget_s is not None and self.clock() - self.started >= self.s.budget_s

    def run(self) -> TableResult:
        """Buckets in turn, PASS experiments each per round (the slowest bucket first), so a short budget
        still reaches every bucket; a bucket leaves the rotation when its proposer is done or it has had
        per_bucket experiments."""
        groups = dispatch.group(self.s.shapes, self.buckets)
        if not groups:
            self.result.reason = "no tuning shapes"
            return self.result
        try:
            times = self.check_start(groups)
            if times is None:
                return self.result
            probed = self.check_probes(groups, times)
            self.check_edges(groups, times)
            self.reached = set(groups) | self.unasked
            order = sorted(groups, key=lambda b: (b not in probed, -sum(times.get(shape_key(s), 0.0)
                                                                          for s in groups[b])))
            if self.s.probes_only:
                order = [b for b in order if b in probed or b in self.s.fresh]
                if not order:
                    self.result.reason = "--probes-only: no bucket without tuning shapes to search"
            if self.s.only:
                order = [b for b in order if dispatch.matches(b, self.s.only)]
                if not order:
                    self.result.reason = (f"--bucket {' '.join(self.s.only)}: no bucket with a tuning or probe "
                                          "shape matches")
            states = {b: self.start_bucket(b) for b in order}
            while states and not self.over_budget():
                for bucket in list(states):
                    if self.search_steps(bucket, groups[bucket], states[bucket], PASS):
                        del states[bucket]
                    if self.over_budget():
                        break
            if states:
                self.result.reason = f"time budget of {self.s.budget_s / 60:g} min spent"
        except KeyboardInterrupt:
            self.result.reason = "interrupted (Ctrl-C): best so far kept"
        self.finish()
        return self.result

    def check_start(self, groups: dict) -> dict | None:
        """The starting file against itself at every tuning shape: correct, and timeable. Its median time
        per shape (summed over dtypes), or None when it fails."""
        shapes = [s for group in groups.values() for s in group]
        answer = self.session.compare(self.best_path, self.best_path, shapes, self.s.dtypes, 3,
                                      self.s.request_timeout_s * 4)
        detail = _fault(answer)
        if detail:
            self.log("", f"start {self.best_path.name}: {detail}", "discarded", False, None,
                     file_hash(self.best_path))
            self.result.reason = f"the starting file fails at the tuning shapes: {detail}"
            return None
        self.result.untimed = not any(p.best_us for p in answer.shapes)
        self.log("", f"start: {self.best_path.name}", "kept", True,
                 _geomean([statistics.median(p.best_us) for p in answer.shapes if p.best_us]),
                 file_hash(self.best_path))
        return _times(answer)

    def start_times_at(self, bucket: str, shape: dict, label: str) -> dict | None:
        """The starting file against itself at one made-up shape (a probe): its times, or None when it fails or
        times nothing there (a ledger row says so)."""
        answer = self.session.compare(self.best_path, self.best_path, [shape], self.s.dtypes, 3,
                                      self.s.request_timeout_s)
        detail = _fault(answer) or ("" if answer.shapes else "nothing timed")
        if detail:
            self.log(bucket, f"{label} {shape_key(shape)} left out: {detail}", "discarded", False, None,
                     file_hash(self.best_path))
            return None
        return _times(answer)

    def check_probes(self, groups: dict, times: dict) -> set:
        """Each probe shape's bucket joins `groups` when the starting file is correct and timeable there
        (its time goes into `times`); a probe it fails at is a ledger row, and its bucket copies its
        nearest as before. The buckets that joined."""
        joined = set()
        for bucket, shape in self.s.probes.items():
            if bucket in groups or self.over_budget():
                continue
            if self.s.only and not dispatch.matches(bucket, self.s.only):
                self.unasked.add(bucket)  # --bucket leaves it out: not probed, its entry stays as it is
                continue
            shape_times = self.start_times_at(bucket, shape, "probe shape")
            if shape_times is None:
                continue
            groups[bucket] = [shape]
            times.update(shape_times)
            joined.add(bucket)
        if joined:
            self.echo(f"  probe shapes for buckets no tuning shape is in: "
                      f"{', '.join(f'[{b}] {shape_key(groups[b][0])}' for b in sorted(joined))}")
        self.result.probed = len(joined)
        return joined

    def check_edges(self, groups: dict, times: dict) -> None:
        """Each edge probe joins its bucket's tuning shapes when the starting file is correct and timeable
        there; one it fails at is a ledger row, and the bucket keeps its tuning shapes alone."""
        joined = []
        for bucket, shape in self.s.edges.items():
            if bucket not in groups or shape in groups[bucket] or self.over_budget():
                continue
            if self.s.only and not dispatch.matches(bucket, self.s.only):
                continue
            shape_times = self.start_times_at(bucket, shape, "edge probe")
            if shape_times is None:
                continue
            groups[bucket] = groups[bucket] + [shape]
            times.update(shape_times)
            joined.append(bucket)
        if joined:
            self.echo(f"  edge probes, beside the tuning shapes of buckets they cover only the low part of: "
                      f"{', '.join(f'[{b}] {shape_key(groups[b][-1])}' for b in sorted(joined))}")
        self.result.edged = len(joined)

    def start_bucket(self, bucket: str) -> dict:
        """A bucket's search state: coordinate descent around its current entry (or TUNABLES)."""
        current = {**tunables.read(self.source), **self.table.get(bucket, {})}
        self.table.setdefault(bucket, tunables.unflatten(tunables.flatten(current)))  # searched: its own entry
        return {"proposer": SearchProposer(tunables.replace(self.source, current), seed=self.s.seed),
                "tried": 0, "gains": []}

    def search_steps(self, bucket: str, shapes: list[dict], state: dict, steps: int) -> bool:
        """Up to `steps` experiments on one bucket; True when the bucket is finished."""
        for _ in range(steps):
            if state["tried"] >= self.s.per_bucket or self.over_budget():
                return state["tried"] >= self.s.per_bucket
            proposal = state["proposer"].propose(Context("", ""))
            if proposal is None:
                return True
            config = tunables.unflatten(proposal.config)
            source = dispatch.write_table(self.source, {**self.table, bucket: config}, gpu=self.slug)
            path = self.s.work_dir / f"candidate_{self.n:03d}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(source)
            if self.same_work(bucket, shapes, proposal.description, path):
                state["proposer"].feedback(proposal, False)
                path.unlink(missing_ok=True)
                continue  # nothing timed: not one of the bucket's experiments
            state["tried"] += 1
            kept, speedup = self.experiment(bucket, shapes, proposal.description, path)
            state["proposer"].feedback(proposal, kept)
            if not kept:  # the ledger row says what it was (its change and hash); only kept files stay
                path.unlink(missing_ok=True)
            if kept:
                self.table[bucket], self.source, self.best_path = config, source, path
                state["gains"].append(speedup)
                self.result.gains[bucket] = math.prod(state["gains"])
                self.write_kept()
        return state["tried"] >= self.s.per_bucket

    def same_work(self, bucket: str, shapes: list[dict], description: str, path: Path) -> bool:
        """True (and a ledger row) when the candidate puts the best's own work on the GPU at the bucket's
        shapes, so timing it would time one kernel twice. Sessions without the question answer no."""
        ask = getattr(self.session, "same_launches", None)
        same = ask(self.best_path, path, shapes, self.s.dtypes, self.s.request_timeout_s) if ask else None
        if same:
            self.result.same += 1
            self.searched.add(bucket)
            self.log(bucket, f"{description}; not timed: {same}", "discarded", None, None, file_hash(path))
        return bool(same)

    def experiment(self, bucket: str, shapes: list[dict], description: str, path: Path) -> tuple[bool, float]:
        self.result.experiments += 1
        self.searched.add(bucket)
        answer = self.session.compare(self.best_path, path, shapes, self.s.dtypes, self.s.rounds,
                                      self.s.request_timeout_s)
        if answer.status != "ok":
            self.log(bucket, f"{description}; {answer.message}", answer.status, None, None, file_hash(path))
            return False, 1.0
        wrong = [p for p in answer.shapes if not p.correct]
        if wrong:
            self.log(bucket, f"{description}; incorrect at {wrong[0].shape} {wrong[0].dtype}: {wrong[0].error}",
                     "discarded", False, None, file_hash(path))
            return False, 1.0
        verdict = paired.decide([(p.best_us, p.cand_us) for p in answer.shapes], seed=self.n)
        median = _geomean([statistics.median(p.cand_us) for p in answer.shapes if p.cand_us])
        keep, speedup, reason = verdict.keep, verdict.speedup or 1.0, verdict.reason
        if self.s.second_look and paired.near_miss(verdict):
            keep, look = self.second_look(shapes, path)
            speedup = look.speedup or 1.0
            reason += f"; a near miss, asked again over {2 * self.s.rounds} rounds: {look.reason}"
        if keep and self.s.confirm:
            keep, again = self.again_as_copies(shapes, path)
            speedup = min(speedup, again.speedup or 1.0)
            reason += f"; again as fresh copies of both: {again.reason}"
        self.log(bucket, f"{description}; {reason}", "kept" if keep else "discarded", True, median, file_hash(path))
        if keep:
            self.result.kept += 1
        return keep, speedup

    def second_look(self, shapes: list[dict], path: Path) -> tuple[bool, paired.PairedVerdict]:
        """A near miss timed once more, the same files over twice the rounds, and decided on that answer alone:
        an interval straddling the keep line narrows with rounds, so a real gain of a few per cent clears it and
        a tie falls back under it. A kept one still faces again_as_copies."""
        self.result.second_looks += 1
        answer = self.session.compare(self.best_path, path, shapes, self.s.dtypes, 2 * self.s.rounds,
                                      self.s.request_timeout_s)
        verdict = _decided(answer, seed=self.n + 2, failed="not timed")
        return verdict.keep, verdict

    def again_as_copies(self, shapes: list[dict], path: Path) -> tuple[bool, paired.PairedVerdict]:
        """A win timed again with both files loaded afresh, under new names: new modules, so new buffers and new
        code addresses. Two copies of one file each keeping a workspace of its own differed by 2-6 % at calls of
        a few microseconds (scripts/same_file_probe.py, H100), a draw that the rounds of one comparison share and
        do not average out; a second pair of draws has to agree before a change is kept."""
        copies = []
        for source, name in ((self.best_path, "best"), (path, "candidate")):
            copy = self.s.work_dir / f"again_{self.n:03d}_{name}.py"
            copy.write_text(Path(source).read_text())
            copies.append(copy)
        try:
            answer = self.session.compare(copies[0], copies[1], shapes, self.s.dtypes, self.s.rounds,
                                          self.s.request_timeout_s)
        finally:
            for copy in copies:
                copy.unlink(missing_ok=True)
        verdict = _decided(answer, seed=self.n + 1, failed="not confirmed")
        return verdict.keep, verdict

    def own_buckets(self) -> set:
        """The buckets whose entries are their own: reached now (a tuning, probe or user shape) or tuned in an
        earlier run on this GPU."""
        return self.reached | self.tuned_before

    def completed(self) -> dict:
        """Every bucket: the entries of those with a tuning or probe shape (searched now or in an earlier
        run; one the file has no entry for runs TUNABLES, and keeps them), the rest their nearest such
        bucket's."""
        defaults = tunables.unflatten(tunables.flatten(tunables.read(self.source)))
        own = {b: self.table.get(b, defaults) for b in self.own_buckets()} or self.table
        return dispatch.complete(own, self.buckets)

    def table_source(self) -> str:
        table = self.completed()
        own = [b for b in table if b in self.own_buckets()] or list(self.table)
        probed, edged = self.result.probed, self.result.edged
        searched = len(self.searched)
        parts = [part for part in (f"{searched} searched" if searched else "",
                                   f"{probed} at probe shapes" if probed else "",
                                   f"{edged} edge probe{'s' * (edged != 1)}" if edged else "") if part]
        flushed = "" if self.s.flush == "clean" else f", timed after the {self.s.flush} flush"
        # each line within the project's 120 columns, indented 8 in DISPATCH_BY_GPU (the GPU name and the flush
        # vary); the counts before "this run" are the whole table's, those after it this run's
        lines = [f"run {self.s.run_id} on {self.s.gpu},", f"from the tuning shapes only{flushed};",
                 f"{len(own)} of {len(table)} buckets tuned at their own shapes,", COPIES]
        copies = [b for b in table if b not in own]
        if copies:  # named, so the next run keeps the others' entries
            lines[-1] += ":"
            lines += textwrap.wrap(" ".join(copies), 80, break_on_hyphens=False, break_long_words=False)
        if parts:
            lines[-1] += ";"
            lines.append(f"this run: {', '.join(parts)}")
        if self.inherits:
            lines[-1] += ";"
            lines.append(f"{INHERITED} {self.inherits}")
        comment = "".join(f"{COMMENT} {line}\n" for line in lines) if table else ""
        home = dispatch.writes_home(self.source, self.slug)  # else the home table's comment stays
        return dispatch.write_table(_strip_comment(self.source) if home else self.source, table, comment, self.slug)

    def write_kept(self) -> None:
        self.s.kept.parent.mkdir(parents=True, exist_ok=True)
        self.s.kept.write_text(self.table_source())

    def finish(self) -> None:
        self.result.table = self.completed()
        if not self.result.kept:
            self.result.reason = self.result.reason or "no bucket got faster"
            self.result.table = {}
            return
        self.write_kept()
        problem = self.full_check(self.s.kept) if self.full_check else None
        if problem:
            if self.original is not None:
                self.s.kept.write_text(self.original)
            else:
                self.s.kept.unlink()
            self.result.reason = f"the tuned file fails the full check ({problem}); not kept"
            self.result.kept = 0
            return
        self.result.reason = self.result.reason or "every bucket searched"


def _strip_comment(source: str) -> str:
    return "".join(line for line in source.splitlines(keepends=True) if not line.startswith(COMMENT))
