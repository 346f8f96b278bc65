"""Warm workers (harness/children/worker_pool.py): a crash, a hang or an exit mid-job costs only the implementation
that was running (recorded with the same reasons as a one-shot child), the next job still runs, spares are
pre-started, baselines share a worker, and no worker is ever given two candidate jobs. One job at a time,
each in its own process: no Triton-interpreted code runs in two threads."""

from __future__ import annotations

import pytest
from conftest import SCALE_ROWS, candidate

from harness.children.worker_pool import WorkerPool
from harness.jobs.runner import run_job
from harness.spec import Options, ProblemRef, SolutionRef

PROBLEM = ProblemRef("scale_rows", SCALE_ROWS)
CPU = Options(interpret=True, time=False, dtypes=("float32",), timeout_s=120)


def run(pool: WorkerPool, impls: list[SolutionRef], options: Options = CPU) -> tuple[list[dict], list[dict]]:
    events: list[dict] = []
    records = list(run_job(PROBLEM, impls, options, events.append, pool))
    return records, events


def exits_mid_job(folder) -> SolutionRef:
    """The segfault fixture, but leaving with os._exit(7) in forward: a worker gone mid-job."""
    source = candidate("segfault").read_text().replace("os.kill(os.getpid(), signal.SIGSEGV)", "os._exit(7)")
    path = folder / "exits_mid_job.py"
    path.write_text(source)
    return SolutionRef("exits_mid_job", path)


@pytest.fixture
def pool():
    pool = WorkerPool(prestart=False)
    yield pool
    pool.close()


def test_exit_and_segfault_mid_job_are_recorded_and_the_next_candidate_runs(pool, tmp_path):
    impls = [exits_mid_job(tmp_path), SolutionRef("segfault", candidate("segfault")),
             SolutionRef("honest_triton", candidate("honest_triton"))]
    records, events = run(pool, impls)
    by_name = {name: [r for r in records if r["solution"] == name] for name in ("exits_mid_job", "segfault",
                                                                                "honest_triton")}
    assert by_name["exits_mid_job"] and all(
        r["correct"] is False and "crashed: child exited with code 7" in r["error"] for r in by_name["exits_mid_job"])
    assert by_name["segfault"] and all(
        r["correct"] is False and "killed by SIGSEGV" in r["error"] for r in by_name["segfault"])
    assert by_name["honest_triton"] and all(r["correct"] for r in by_name["honest_triton"])
    assert [e["impl"] for e in events if e["event"] == "crash"] == ["exits_mid_job", "segfault"]
    assert len(pool.started) == 3  # each crash: a fresh worker for the rest
    assert all(w.jobs == 1 and not w.child.alive() for w in pool.started)


def test_a_hang_is_killed_at_the_timeout_and_the_worker_replaced(pool):
    options = Options(interpret=True, time=False, dtypes=("float32",), timeout_s=5)
    records, events = run(pool, [SolutionRef("hangs", candidate("hangs"))], options)
    assert records and all(r["correct"] is False and "timed out after 5 s" in r["error"] for r in records)
    assert [e["impl"] for e in events if e["event"] == "crash"] == ["hangs"]
    assert not pool.started[0].child.alive() and pool.reusable is None and pool.spares == []


def test_spares_are_prestarted_baselines_share_a_worker_a_candidate_gets_a_fresh_one():
    pool = WorkerPool(prestart=True, spares=2)
    try:
        for _ in range(2):  # baselines: trusted code, one warm worker for both jobs
            records, _ = run(pool, [SolutionRef("eager")])
            assert records and all(r["correct"] for r in records)
        baseline_worker, first, second = pool.started
        assert pool.spares == [first, second] and first.jobs == second.jobs == 0
        assert first.child.alive() and second.child.alive()  # pre-started, waiting
        records, _ = run(pool, [SolutionRef("honest_triton", candidate("honest_triton"))])
        assert records and all(r["correct"] for r in records)
        assert first.jobs == 1 and not first.child.alive()  # the candidate took the oldest spare, which then retired
        assert len(pool.started) == 4 and pool.spares == [second, pool.started[3]]  # one more is warming up
        records, _ = run(pool, [SolutionRef("eager")])
        assert records and all(r["correct"] for r in records)
        assert baseline_worker.jobs == 3 and baseline_worker.trusted_only
        assert all(w.trusted_only or w.jobs <= 1 for w in pool.started)  # never two candidate jobs
    finally:
        pool.close()


def test_the_number_of_spares_comes_from_ksuite_spares_when_it_is_a_whole_number(monkeypatch):
    from harness.children import worker_pool

    def depth(**kwargs) -> int:
        pool = WorkerPool(prestart=False, **kwargs)
        pool.close()
        return pool.depth

    monkeypatch.setenv("KSUITE_SPARES", "6")
    assert depth() == 6
    monkeypatch.setenv("KSUITE_SPARES", "many")  # not a number: the default, not a crash
    assert depth() == worker_pool.SPARES
    assert depth(spares=1) == 1
