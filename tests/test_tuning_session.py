"""The warm child of the table search, on the CPU (interpreter): checks each request, survives a crash."""

from harness.jobs.tuning_session import TuningSession
from harness.spec import Options, ProblemRef
from tests.conftest import SCALE_ROWS, candidate

SHAPES = [{"batch_size": 8, "dim": 32}, {"batch_size": 5, "dim": 48}]


def test_checks_request_after_request_and_restarts_after_a_crash():
    session = TuningSession(ProblemRef("scale_rows", SCALE_ROWS), Options(interpret=True, time=False))
    try:
        honest = session.compare(candidate("honest_triton"), candidate("honest_triton"), SHAPES, ["float32"], 3, 120)
        assert honest.status == "ok" and [p.correct for p in honest.shapes] == [True, True]
        assert all(p.best_us == [] for p in honest.shapes)  # no CUDA: checked, not timed
        wrong = session.compare(candidate("honest_triton"), candidate("wrong_math"), SHAPES[:1], ["float16"], 3, 120)
        assert wrong.status == "ok" and not wrong.shapes[0].correct and "outside" in wrong.shapes[0].error
        crashed = session.compare(candidate("honest_triton"), candidate("segfault"), SHAPES[:1], ["float32"], 3, 120)
        assert crashed.status == "crashed" and "SIGSEGV" in crashed.message
        again = session.compare(candidate("honest_triton"), candidate("honest_triton"), SHAPES[:1], ["float32"], 3,
                                120)
        assert again.status == "ok" and again.shapes[0].correct  # a fresh child took over
    finally:
        session.close()


def test_a_hang_is_a_timed_out_answer():
    session = TuningSession(ProblemRef("scale_rows", SCALE_ROWS), Options(interpret=True, time=False))
    try:
        hung = session.compare(candidate("honest_triton"), candidate("hangs"), SHAPES[:1], ["float32"], 3, 8)
        assert hung.status == "timed-out"
    finally:
        session.close()


class StubTimer:
    """Stands in for CudaTimer on CPU so the session's timed branch runs: each call of a batch costs what
    the callable's name says."""

    def warmup(self, fn):
        fn()

    def prepare(self, *fns):
        for fn in fns:
            self.warmup(fn)

    def time_batch(self, fn, n):
        fn()
        return [fn.us] * n


def test_timed_branch_pairs_rounds_and_rechecks(monkeypatch):
    from harness.jobs import tuning_session

    child = tuning_session.SessionChild(str(SCALE_ROWS), {"interpret": True, "time": False})
    child.timer = StubTimer()

    original = tuning_session.paired_rounds

    def rounds(timer, best, cand, n, batch=5):
        best.us, cand.us = 20.0, 10.0
        return original(timer, best, cand, n, batch)
    monkeypatch.setattr(tuning_session, "paired_rounds", rounds)
    answer = child.handle({"best": str(candidate("honest_triton")), "candidate": str(candidate("honest_triton")),
                           "shapes": SHAPES[:1], "dtypes": ["float32"], "rounds": 4, "n": 1})
    (shape,) = answer["shapes"]
    assert shape["correct"] and shape["best_us"] == [20.0] * 4 and shape["cand_us"] == [10.0] * 4


def test_same_work_is_asked_of_the_child_and_unknown_under_the_interpreter(monkeypatch):
    """Under the interpreter no Triton launch is seen, so nothing is claimed equal; with launches recorded (a
    stand-in recorder) equal fingerprints at every shape are the answer, one difference is None, and a file's
    fingerprint at a shape is recorded once."""
    from contextlib import contextmanager

    from harness.jobs import tuning_session
    from harness.machine_code import launch_record

    child = tuning_session.SessionChild(str(SCALE_ROWS), {"interpret": True, "time": False})
    request = {"kind": "same", "best": str(candidate("honest_triton")), "candidate": str(candidate("wrong_math")),
               "shapes": SHAPES, "dtypes": ["float32"], "n": 1}
    assert child.handle(request) == {"same": None}

    calls = []

    @contextmanager
    def stand_in():
        record = launch_record.Recording()
        calls.append(record)
        yield record
        record.launches.append("kernel" if len(calls) != 4 else "another kernel")  # the 2nd shape's candidate
    monkeypatch.setattr(launch_record, "recording", stand_in)
    child = tuning_session.SessionChild(str(SCALE_ROWS), {"interpret": True, "time": False})
    assert child.handle(request) == {"same": None} and len(calls) == 4
    calls.clear()
    same = child.handle({**request, "shapes": SHAPES[:1]})["same"]
    assert same and "at 1 (shape, dtype) pair" in same
    assert not calls  # both files' fingerprints at that shape were kept from the first question
