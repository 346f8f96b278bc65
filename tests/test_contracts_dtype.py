"""--dtype: an unknown or undeclared dtype is a usage error naming what the problem declares, never a
silent run of another dtype (issue 11, point 1)."""

import pytest
from click.testing import CliRunner
from conftest import SCALE_ROWS, candidate

from harness.dtype_choice import DtypeChoiceError, canonical_request, select_dtypes
from suite import commands
from suite.cli import cli

DECLARED = ["float32", "float16"]  # the fixture problem's


@pytest.fixture(autouse=True)
def no_cuda(monkeypatch):
    monkeypatch.setattr(commands, "cuda_available", lambda: False)


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.mark.parametrize("asked, want", [
    ((), DECLARED), (("all",), DECLARED), (("primary",), ["float32"]), (("float16",), ["float16"]),
    (("fp16",), ["float16"]), (("FP32", "fp16"), DECLARED), (("primary", "float16"), DECLARED),
])
def test_select_dtypes_keeps_the_declared_order(asked, want):
    assert select_dtypes(DECLARED, asked) == want


@pytest.mark.parametrize("asked, words", [
    (("bf16",), ["bfloat16", "not declared", "float32, float16"]),
    (("float64",), ["float64", "not declared", "float32, float16"]),
    (("float61",), ["'float61'", "unknown", "float32, float16"]),
    (("float16", "float61"), ["'float61'", "unknown"]),
])
def test_select_dtypes_never_substitutes(asked, words):
    with pytest.raises(DtypeChoiceError) as info:
        select_dtypes(DECLARED, asked, "scale_rows.py")
    assert all(w in str(info.value) for w in words), str(info.value)


def test_aliases_map_explicitly():
    assert canonical_request(("bf16", "fp16", "fp32", "fp64", "half")) == ("bfloat16", "float16", "float32",
                                                                            "float64")


def assert_usage_error(result, *words):
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert "Traceback" not in result.output
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.parametrize("dtype, words", [
    ("bf16", ["bfloat16", "float32, float16"]),
    ("float61", ["float61", "unknown", "float32, float16"]),
    ("float64", ["float64", "float32, float16"]),
])
def test_check_refuses_an_undeclared_dtype_before_any_child(dtype, words, monkeypatch):
    started = []
    monkeypatch.setattr(commands, "evaluate_problem", lambda *a, **k: started.append(a) or [])
    result = invoke("check", SCALE_ROWS, candidate("honest_triton"), "--dtype", dtype)
    assert_usage_error(result, str(SCALE_ROWS), *words)
    assert not started


def test_bench_refuses_an_undeclared_dtype_and_records_nothing(results_root):
    result = invoke("bench", SCALE_ROWS, "--solution", candidate("honest_triton"), "--dtype", "bf16")
    assert_usage_error(result, "bfloat16", "float32, float16")
    assert not list(results_root.glob("*/*.jsonl"))


def test_bench_refuses_a_dtype_a_real_problem_does_not_declare(results_root):
    result = invoke("bench", "vectorsum_v2", "--dtype", "float16", "--no-baselines")
    assert_usage_error(result, "vectorsum_v2.py", "float16", "declares float32")


def test_an_alias_runs_the_dtype_it_names(results_root):
    from suite.results_store import find_run

    result = invoke("bench", SCALE_ROWS, "--solution", candidate("honest_triton"), "--dtype", "fp16",
                    "--no-baselines")
    assert result.exit_code == 0, result.output
    assert {r.dtype for r in find_run(None).read()} == {"float16"}


def test_help_names_the_aliases():
    for command in ("check", "bench"):
        text = " ".join(invoke(command, "--help").output.split())
        assert "bf16=bfloat16" in text and "fp16=float16" in text and "primary" in text


def test_inspect_refuses_an_undeclared_dtype():
    result = invoke("inspect", "rmsnorm", "--dtype", "float64", "--capability", "90", "--sms", "132")
    assert_usage_error(result, "rmsnorm.py", "float64", "declares float16, bfloat16")
