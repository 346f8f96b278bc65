"""The warm child of the table search, on the CPU (interpreter): checks each request, survives a crash."""

from harness.spec import Options, ProblemRef
from harness.tuning_session import TuningSession
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
        hung = session.compare(candidate("honest_triton"), candidate("hangs"), SHAPES[:1], ["float32"], 3, 20)
        assert hung.status == "timed-out"
    finally:
        session.close()
