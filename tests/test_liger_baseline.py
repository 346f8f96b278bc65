"""Liger-Kernel is an optional baseline: used where installed and where the problem names its op, one line
where it is missing, never an error."""

import importlib.util

import pytest

from harness import baselines
from harness.loader import load_problem
from harness.spec import BASELINES
from tests.conftest import PROBLEMS_DIR

LIGER_OPS = ("rmsnorm", "layernorm", "softmax", "cross_entropy", "rotary", "swiglu_act")


def test_liger_is_one_of_the_baselines():
    assert "liger" in BASELINES


@pytest.mark.parametrize("name", LIGER_OPS)
def test_problems_with_a_liger_op_name_it(name, monkeypatch):
    problem = load_problem(PROBLEMS_DIR / f"{name}.py", f"ksuite_liger_{name}")
    assert problem.liger_class is not None
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: object() if n == "liger_kernel" else real(n, *a))
    assert "liger" in baselines.available(problem, interpret=False)
    assert "liger" not in baselines.available(problem, interpret=True)  # nothing is timed on CPU


def test_a_missing_liger_is_a_reason_not_an_error(monkeypatch):
    problem = load_problem(PROBLEMS_DIR / "rmsnorm.py", "ksuite_liger_missing")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "liger_kernel" else real(n, *a))
    assert "liger" not in baselines.available(problem, interpret=False)
    assert baselines.unavailable_reason(problem, "liger", interpret=False) == baselines.LIGER_MISSING


def test_problems_without_a_liger_op_do_not_ask_for_it():
    problem = load_problem(PROBLEMS_DIR / "reduce_rows.py", "ksuite_liger_none")
    assert problem.liger_class is None
    assert baselines.unavailable_reason(problem, "liger", interpret=False) == "not applicable here"


def test_a_baseline_s_own_limit_is_a_reason_per_shape_not_a_failure():
    softmax = load_problem(PROBLEMS_DIR / "softmax.py", "ksuite_liger_limit")
    reason = baselines.unsupported_at(softmax, "liger", {"batch_size": 16, "dim": 128256})
    assert reason == "Liger's softmax takes rows of at most 65536 columns (its own limit), not 128256"
    assert baselines.unsupported_at(softmax, "liger", {"batch_size": 16, "dim": 65536}) is None
    assert baselines.unsupported_at(softmax, "fused", {"batch_size": 16, "dim": 128256}) is None
    assert baselines.unsupported_at(softmax, "compile", {"batch_size": 16, "dim": 128256}) is None
    rmsnorm = load_problem(PROBLEMS_DIR / "rmsnorm.py", "ksuite_liger_nolimit")
    assert baselines.unsupported_at(rmsnorm, "liger", {"batch_size": 16, "dim": 1 << 20}) is None


def test_a_child_that_dies_after_a_skipped_shape_is_not_charged_for_it():
    from harness import ProblemRef, SolutionRef
    from harness.jobs.runner import _fill_missing, _handle

    shapes = [{"batch_size": 16, "dim": 128256}, {"batch_size": 16, "dim": 32000}]
    state = {"plan": {"shapes": shapes, "dtypes": ["float16"]}, "current": "liger", "started_at": 0.0,
             "finished": [], "recorded": set(), "fatal": None, "done": False, "measuring": None}
    seen = []
    list(_handle({"event": "unsupported", "impl": "liger", "kind": "baseline", "shape": shapes[0],
                  "dtype": "float16", "message": "its own limit"}, state, seen.append))
    assert seen and seen[0]["event"] == "unsupported"  # the bench prints it
    filled = list(_fill_missing(ProblemRef("softmax", PROBLEMS_DIR / "softmax.py"), SolutionRef("liger", None),
                                state, "crashed", ()))
    assert [f["shape"] for f in filled] == [shapes[1]]  # only the shape it was to measure


def test_the_bench_says_a_skipped_shape_once_in_one_line():
    from suite.bench import event_printer

    lines = []

    class Bar:
        def write(self, line, file=None):
            lines.append(line)

    on_event = event_printer(Bar(), verbose=False)
    for dtype in ("float16", "bfloat16"):
        on_event({"event": "unsupported", "impl": "liger", "kind": "baseline", "dtype": dtype,
                  "shape": {"batch_size": 16, "dim": 128256}, "message": "rows of at most 65536 columns, not 128256"})
    assert lines == ["  liger: not run at 16x128256: rows of at most 65536 columns, not 128256"]
