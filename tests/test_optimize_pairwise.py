"""harness.jobs.pairwise: both implementations in one child, alternating batches; on CPU checked, untimed."""

from conftest import SCALE_ROWS, SCALE_ROWS_DTYPES, SCALE_ROWS_SHAPES, candidate

from harness import Options, ProblemRef, SolutionRef
from harness.jobs.pairwise import run_pairwise, time_alternating


class FakeTimer:
    """Records the order of batches; times drift upwards by 1 us per batch (alternation must share it)."""

    min_runs, max_runs, target_rse, budget_s = 20, 40, 0.0, 10.0

    def __init__(self):
        self.order, self.t = [], 0.0

    lead_us = None

    def warmup(self, fn):
        fn()

    def prepare(self, *fns):
        for fn in fns:
            self.warmup(fn)

    def time_batch(self, fn, n):
        name = fn()
        self.order.append(name)
        self.t += 1.0
        return [self.t] * n


def test_time_alternating_interleaves_and_flips_order():
    timer = FakeTimer()
    result = time_alternating(timer, {"best": lambda: "best", "cand": lambda: "cand"})
    assert timer.order[:6] == ["best", "cand", "cand", "best", "best", "cand"]
    assert result["best"].runs == result["cand"].runs == 40
    assert abs(result["best"].median_us - result["cand"].median_us) <= 1.0  # drift shared, not one-sided


def test_run_pairwise_on_cpu_checks_both_and_reports_untimed():
    problem = ProblemRef("scale_rows", SCALE_ROWS)
    best = SolutionRef("best", candidate("honest_triton"))
    cand = SolutionRef("cand", candidate("wrong_math"))
    result = run_pairwise(problem, best, cand, Options(interpret=True, time=False, trials=1, timeout_s=120))
    assert result.status == "ok"
    assert len(result.of("best")) == len(result.of("cand")) == len(SCALE_ROWS_SHAPES) * len(SCALE_ROWS_DTYPES)
    assert all(r["correct"] and r.get("median_us") is None for r in result.of("best"))
    assert not any(r["correct"] for r in result.of("cand"))


class ListEvents:
    def __init__(self):
        self.items = []

    def emit(self, **event):
        self.items.append(event)


class StubTimer:
    """Stands in for CudaTimer on CPU so the timed branch (metrics, re-check, speed floor) runs."""

    min_runs, max_runs, target_rse, budget_s = 10, 20, 0.5, 1.0

    lead_us = None

    def warmup(self, fn):
        fn()

    def prepare(self, *fns):
        for fn in fns:
            self.warmup(fn)

    def time_batch(self, fn, n):
        fn()
        return [10.0 + i * 0.1 for i in range(n)]


def test_timed_branch_records_medians_and_rechecks(tmp_path):
    from harness.jobs.pairwise import PairRunner

    options = {"interpret": True, "time": False, "trials": 1, "copy_bandwidth": 1e9}
    job = {"problem_name": "scale_rows", "problem_path": str(SCALE_ROWS), "options": options}
    events = ListEvents()
    runner = PairRunner(job, events)
    runner.timer = StubTimer()
    runner.timed, runner.dtypes = runner.timed[:1], ["float32"]
    runner.run([SolutionRef("best", candidate("honest_triton")), SolutionRef("cand", candidate("wrong_math"))])
    records = [e for e in events.items if e["event"] == "measurement"]
    best = next(r for r in records if r["solution"] == "best")
    assert best["correct"] and best["median_us"] > 10.0 and best["runs"] == 10 and best["pct_sol"] > 0
    assert not next(r for r in records if r["solution"] == "cand")["correct"]
