"""The loop's control flow with a scripted evaluator: keep only real wins, write the kept file with its
numbers, log every experiment, stop on target, budget and Ctrl-C. (The real harness path is covered by
the end-to-end CPU run in test_optimize_search.py.)"""

import re
from pathlib import Path

from harness import ProblemRef, SolutionRef
from harness.records import Measurement
from suite.optimize.evaluator import CheckOutcome, PairOutcome
from suite.optimize.ledger import Ledger
from suite.optimize.loop import Loop, LoopSetup
from suite.optimize.proposal import Proposal
from suite.optimize.stopping import Limits, Progress

SHAPE = {"batch_size": 32, "dim": 128}
NO_PLATEAU = Limits(plateau=None)
START = "TUNABLES = {'BLOCK_N': 16}\n# fake: us=100\n"


def fake_us(path) -> float | None:
    found = re.search(r"# fake: us=([\d.]+)", Path(path).read_text())
    return float(found.group(1)) if found else None


class FakeEvaluator:
    """Reads `# fake: wrong|crash|hang|us=N` markers from the candidate: a GPU in a file."""

    timed = True

    def __init__(self, timed=True):
        self.timed, self.checked = timed, []

    def check(self, sol: SolutionRef) -> CheckOutcome:
        text = Path(sol.path).read_text()
        self.checked.append(sol.name)
        for marker, status in (("wrong", "failed"), ("crash", "crashed"), ("hang", "timed-out")):
            if f"# fake: {marker}" in text:
                return CheckOutcome(status, f"fake {marker}")
        return CheckOutcome("ok")

    def measurement(self, sol: SolutionRef, us: float | None) -> Measurement:
        return Measurement("p", sol.name, "solution", SHAPE, "float16", True, median_us=us,
                           iqr_us=us and us * 0.01, pct_sol=us and 5000.0 / us)

    def time_pair(self, best: SolutionRef, cand: SolutionRef) -> PairOutcome:
        return PairOutcome("ok", [self.measurement(best, fake_us(best.path))],
                           [self.measurement(cand, fake_us(cand.path))])

    def baselines(self) -> list:
        return [Measurement("p", "compile", "baseline", SHAPE, "float16", True, median_us=150.0)] if self.timed else []


class Scripted:
    name = "scripted"

    def __init__(self, sources):
        self.items = list(sources)

    def propose(self, context):
        if not self.items:
            return None
        item = self.items.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item if isinstance(item, Proposal) else Proposal(f"try {len(self.items)}", item)


def make_setup(tmp_path, limits=NO_PLATEAU):
    problem = tmp_path / "problem.py"
    problem.write_text("# the problem\n")
    start = tmp_path / "start.py"
    start.write_text(START)
    return LoopSetup(ProblemRef("p", problem), SolutionRef("start", start), tmp_path / "solutions" / "p" / "opt.py",
                     tmp_path / "work", Ledger(tmp_path / "ledger.tsv"), "scripted", limits, "run1", "NVIDIA H200")


def run(tmp_path, sources, limits=NO_PLATEAU, evaluator=None, clock=None):
    setup = make_setup(tmp_path, limits)
    loop = Loop(setup, Scripted(sources), evaluator or FakeEvaluator(), echo=lambda s: None,
                **({"clock": clock} if clock else {}))
    return loop.run(), setup


def test_keeps_only_correct_faster_versions_and_writes_them_with_numbers(tmp_path):
    sources = ["# fake: us=80\n", "# fake: us=79.9\n", "# fake: wrong\n", "# fake: crash\n", "# fake: hang\n",
               "# fake: us=120\n", "# fake: us=60\n", Proposal("no code", status="discarded")]
    result, setup = run(tmp_path, sources)
    rows = setup.ledger.rows()
    assert [r.status for r in rows] == ["kept", "kept", "discarded", "discarded", "crashed", "timed-out",
                                        "discarded", "kept", "discarded"]
    assert result.kept == 2 and result.best.name == "candidate_007"
    assert "within noise" in rows[2].description and rows[3].correct is False
    assert abs(rows[1].speedup_vs_baseline - 150 / 80) < 1e-3 and rows[1].pct_sol == 62.5
    kept = setup.kept_path.read_text()
    assert kept.startswith("# ksuite optimize: kept ") and "60.00 us" in kept and kept.endswith("# fake: us=60\n")
    assert "nothing more" in result.reason


def test_target_stops_the_loop(tmp_path):
    result, setup = run(tmp_path, ["# fake: us=80\n", "# fake: us=40\n", "# fake: us=30\n"],
                        Limits(plateau=None, target_pct_sol=100.0))
    assert "target" in result.reason and len(setup.ledger.rows()) == 3  # start, 80 (62 %), 40 (125 %)


def test_ctrl_c_keeps_the_best_and_the_whole_log(tmp_path):
    result, setup = run(tmp_path, ["# fake: us=80\n", "# fake: us=90\n", KeyboardInterrupt()])
    assert "Ctrl-C" in result.reason and result.kept == 1
    assert len(setup.ledger.rows()) == 3 and "us=80" in setup.kept_path.read_text()


def test_problem_budget_stops_the_loop(tmp_path):
    ticks = iter(range(0, 10_000, 30))
    result, setup = run(tmp_path, ["# fake: us=99\n"] * 50, Limits(plateau=None, problem_budget_s=100.0),
                        clock=lambda: next(ticks))
    assert "per-problem" in result.reason and len(setup.ledger.rows()) < 10


def test_untimed_evaluator_never_keeps(tmp_path):
    result, setup = run(tmp_path, ["# fake: us=1\n", "# fake: us=2\n"], evaluator=FakeEvaluator(timed=False))
    assert result.untimed and result.kept == 0 and not setup.kept_path.exists()
    assert [r.status for r in setup.ledger.rows()] == ["kept", "discarded", "discarded"]


def test_a_wrong_start_stops_before_any_proposal(tmp_path):
    setup = make_setup(tmp_path)
    Path(setup.start.path).write_text("# fake: wrong\n")
    result = Loop(setup, Scripted(["# fake: us=1\n"]), FakeEvaluator(), echo=lambda s: None).run()
    assert "starting solution fails" in result.reason and len(setup.ledger.rows()) == 1


def test_progress_is_shared_for_the_total_budget(tmp_path):
    progress = Progress(problem_started=0.0, total_started=-1000.0)
    setup = make_setup(tmp_path, Limits(plateau=None, total_budget_s=500.0))
    result = Loop(setup, Scripted(["# fake: us=1\n"]), FakeEvaluator(), echo=lambda s: None, progress=progress).run()
    assert "total" in result.reason


class LuckyFirstDraw(FakeEvaluator):
    """A candidate's first comparison draws an 8 % luckier placement than its true time; later ones do not."""

    def __init__(self):
        super().__init__()
        self.seen = set()

    def time_pair(self, best: SolutionRef, cand: SolutionRef) -> PairOutcome:
        luck = 0.92 if cand.path not in self.seen else 1.0
        self.seen.add(cand.path)
        return PairOutcome("ok", [self.measurement(best, fake_us(best.path))],
                           [self.measurement(cand, fake_us(cand.path) * luck)])


def test_a_win_is_kept_only_when_a_second_fresh_comparison_agrees(tmp_path):
    result, setup = run(tmp_path, ["# fake: us=100\n", "# fake: us=80\n"], evaluator=LuckyFirstDraw())
    rows = setup.ledger.rows()
    assert [r.status for r in rows] == ["kept", "discarded", "kept"]  # the start, a lucky tie, a real win
    assert "again in a fresh process: 1.000x is within noise" in rows[1].description
    assert "again in a fresh process: 1.250x faster" in rows[2].description
    assert result.kept == 1 and result.best.name == "candidate_002"
