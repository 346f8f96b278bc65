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
