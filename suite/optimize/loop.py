"""propose -> full check -> time against the current best -> keep or discard -> log, until a rule stops it.

Every experiment is a ledger row the moment it finishes; every kept version is written at once to
solutions/<problem>/<name>.py, so Ctrl-C or a dead machine loses nothing already measured.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from harness import ProblemRef, SolutionRef
from harness.spec import file_hash
from suite.optimize import tunables
from suite.optimize.decision import Verdict, best_baselines, decide, summarize
from suite.optimize.ledger import Ledger, Row
from suite.optimize.proposal import Context, Proposal
from suite.optimize.stopping import Limits, Progress, stop_reason

UNTIMED = ("No CUDA device: every proposal is checked through Triton's interpreter, but nothing can be "
           "timed, so nothing is kept.")


@dataclass
class LoopSetup:
    problem: ProblemRef
    start: SolutionRef
    kept_path: Path  # solutions/<problem>/<name>.py
    work_dir: Path  # every candidate as a real file, in the cache (command.candidates_root), not results/
    ledger: Ledger
    strategy: str
    limits: Limits = field(default_factory=Limits)
    run_id: str = ""
    gpu: str = "cpu"


@dataclass
class LoopResult:
    reason: str
    best: SolutionRef
    kept: int = 0
    rows: list[Row] = field(default_factory=list)
    untimed: bool = False
    evaluated: int = 0  # proposals that came with a source and were screened or checked


def shape_text(m) -> str:
    return "x".join(str(v) for v in m.shape.values()) + f" {m.dtype}"


def numbers_text(ms: list) -> str:
    return "; ".join(f"{shape_text(m)}: {m.median_us:.2f} us" + (f", {m.pct_sol:.0f} % SOL" if m.pct_sol else "")
                     for m in ms if m.median_us) or "not timed"


class Loop:
    def __init__(self, setup: LoopSetup, proposer, evaluator, clock: Callable[[], float] = time.monotonic,
                 echo: Callable[[str], None] = print, progress: Progress | None = None,
                 screen: Callable[[Path], str | None] | None = None):
        self.s, self.proposer, self.evaluator, self.clock, self.echo = setup, proposer, evaluator, clock, echo
        self.screen = screen  # candidate file -> a reason not to check and time it (suite/optimize/screen.py)
        now = clock()
        self.progress = progress or Progress(problem_started=now, total_started=now)
        self.progress.problem_started = now
        self.best = setup.start
        self.baselines: dict = {}
        self.shape_best: dict = {}  # shape class -> (flat config, median us): the configuration table
        self.result = LoopResult("", setup.start, untimed=not evaluator.timed)
        self.context = Context(Path(setup.problem.path).read_text(), Path(setup.start.path).read_text(), gpu=setup.gpu)
        self.first = len(setup.ledger.rows())  # > 0: resuming a ledger (agent --record)

    def log(self, **fields) -> Row:
        row = self.s.ledger.append(Row(strategy=self.s.strategy, **{**fields, "experiment": self.first
                                                                      + len(self.result.rows)}))
        self.result.rows.append(row)
        numbers = f" {row.median_us:.2f} us" if row.median_us else ""
        self.echo(f"  #{row.experiment} {row.status}{numbers}: {row.description}")
        return row

    def start(self) -> bool:
        """Check the starting solution and take its numbers; False if it cannot be the first best."""
        if self.first:  # resuming: the best was checked when it was kept
            if not self.evaluator.timed:
                self.echo(UNTIMED)
            self.baselines = best_baselines(self.evaluator.baselines())
            return True
        chk = self.evaluator.check(self.s.start)
        source_hash = file_hash(self.s.start.path)
        if chk.status != "ok":
            self.log(description=f"start {self.s.start.name}: {chk.detail}", correct=False,
                     median_us=None, pct_sol=None, speedup_vs_baseline=None, status="discarded",
                     source_hash=source_hash)
            self.result.reason = f"the starting solution fails its check: {chk.detail}"
            return False
        if not self.evaluator.timed:
            self.echo(UNTIMED)
        self.baselines = best_baselines(self.evaluator.baselines())
        numbers = summarize([])
        if self.evaluator.timed:
            pair = self.evaluator.time_pair(SolutionRef("start", self.s.start.path), self.s.start)
            numbers = summarize(pair.candidate, self.baselines)
            self.progress.best_pct_sol = numbers.pct_sol
            self.context.best_numbers = numbers_text(pair.candidate)
        self.log(description=f"start: {self.s.start.name}", correct=True,
                 median_us=numbers.median_us, pct_sol=numbers.pct_sol, speedup_vs_baseline=numbers.speedup_vs_baseline,
                 status="kept", source_hash=source_hash)
        return True

    def run(self) -> LoopResult:
        try:
            if not self.start():
                return self.result
            while not (reason := stop_reason(self.progress, self.s.limits, self.clock())):
                self.step()
        except KeyboardInterrupt:
            self.progress.interrupted = True
            reason = stop_reason(self.progress, self.s.limits, self.clock())
        self.result.reason = self.result.reason or reason
        self.result.best = self.best
        self.echo(f"{self.s.problem.name}: stopped: {self.result.reason}; {self.result.kept} kept; "
                  f"ledger {self.s.ledger.path}")
        return self.result

    def step(self) -> None:
        n = self.first + len(self.result.rows)
        proposal = self.proposer.propose(self.context)
        if proposal is None:
            self.progress.exhausted = True
            self.result.reason = getattr(self.proposer, "stop_reason", None) or ""  # why, when it says
            return
        kept = self.experiment(n, proposal)
        if hasattr(self.proposer, "feedback"):
            self.proposer.feedback(proposal, kept)
        self.progress.record(kept)

    def experiment(self, n: int, proposal: Proposal) -> bool:
        row = dict(experiment=n, description=proposal.description, correct=None, median_us=None, pct_sol=None,
                   speedup_vs_baseline=None, source_hash="-")
        if proposal.source is None:
            self.fail(proposal.description)
            self.log(**row, status=proposal.status or "crashed")
            return False
        path = self.s.work_dir / f"candidate_{n:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(proposal.source)
        cand = SolutionRef(f"candidate_{n:03d}", path)
        row["source_hash"] = file_hash(path)
        self.result.evaluated += 1
        reason = self.screen(path) if self.screen else None
        if reason:
            self.fail(f"{proposal.description}: {reason}")
            self.log(**{**row, "description": f"{proposal.description}; {reason}"}, status="discarded")
            return False
        chk = self.evaluator.check(cand)
        if chk.status != "ok":
            self.fail(f"{proposal.description}: {chk.detail}")
            row.update(correct=False, description=f"{proposal.description}; {chk.detail}")
            self.log(**row, status=chk.status if chk.status != "failed" else "discarded")
            return False
        row["correct"] = True
        if not self.evaluator.timed:
            self.log(**{**row, "description": f"{proposal.description}; untimed (no CUDA device)"}, status="discarded")
            return False
        return self.compare(row, proposal, cand)

    def compare(self, row: dict, proposal: Proposal, cand: SolutionRef) -> bool:
        pair = self.evaluator.time_pair(SolutionRef("best", self.best.path), cand)
        if pair.status != "ok":
            self.fail(f"{proposal.description}: {pair.detail}")
            self.log(**{**row, "description": f"{proposal.description}; {pair.detail}"}, status=pair.status)
            return False
        verdict = decide(pair.best, pair.candidate)
        if verdict.keep:
            verdict = self.again(cand, verdict)
        numbers = summarize(pair.candidate, self.baselines)
        self.note_configs(proposal, pair.candidate)
        row.update(correct=numbers.correct, median_us=numbers.median_us, pct_sol=numbers.pct_sol,
                   speedup_vs_baseline=numbers.speedup_vs_baseline,
                   description=f"{proposal.description}; {verdict.reason}")
        if not numbers.correct:
            self.fail(row["description"])
        self.log(**row, status="kept" if verdict.keep else "discarded")
        if verdict.keep:
            self.keep(cand, proposal, pair.candidate, row)
        else:
            self.progress.best_pct_sol = summarize(pair.best).pct_sol or self.progress.best_pct_sol
        return verdict.keep

    def again(self, cand: SolutionRef, first: Verdict) -> Verdict:
        """A win is timed a second time, in another fresh child (new modules, buffers and their placement), and
        kept only if that comparison says so too: one comparison is one draw of where each file's code and
        buffers land, worth a few per cent at calls of a few microseconds (the table search's second draw,
        suite/optimize/table.py `again_as_copies`)."""
        pair = self.evaluator.time_pair(SolutionRef("best", self.best.path), cand)
        if pair.status != "ok":
            return Verdict(False, f"{first.reason}; again in a fresh process: {pair.detail}", first.speedup,
                           first.noise)
        second = decide(pair.best, pair.candidate)
        return Verdict(second.keep, f"{first.reason}; again in a fresh process: {second.reason}", first.speedup,
                       first.noise)

    def fail(self, text: str) -> None:
        self.context.failures = (self.context.failures + [text])[-5:]

    def note_configs(self, proposal: Proposal, ms: list) -> None:
        if proposal.config is None:
            return
        for m in ms:
            if m.correct and m.median_us and m.median_us < self.shape_best.get(shape_text(m), (None, 1e300))[1]:
                self.shape_best[shape_text(m)] = (proposal.config, m.median_us)

    def keep(self, cand: SolutionRef, proposal: Proposal, ms: list, row: dict) -> None:
        self.best, self.result.kept = cand, self.result.kept + 1
        self.progress.best_pct_sol = row["pct_sol"]
        self.context.best_source, self.context.best_numbers = proposal.source, numbers_text(ms)
        source = proposal.source
        if proposal.config is not None:
            table = tunables.config_table([(k, c, us) for k, (c, us) in sorted(self.shape_best.items())])
            source = tunables.replace(source, tunables.unflatten(proposal.config), table)
        header = (f"# ksuite optimize: kept {datetime.now(timezone.utc).isoformat(timespec='seconds')}, run "
                  f"{self.s.run_id}, experiment {row['experiment']},\n# strategy {self.s.strategy}, from "
                  f"{self.s.start.name}, on {self.s.gpu}\n# {proposal.description}\n"
                  f"# measured: {numbers_text(ms)}\n"
                  f"# speedup vs best baseline: {row['speedup_vs_baseline'] or '-'}\n")
        self.s.kept_path.parent.mkdir(parents=True, exist_ok=True)
        self.s.kept_path.write_text(header + source)
        self.echo(f"kept: {row['description']} -> {self.s.kept_path}")
