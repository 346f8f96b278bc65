"""META is checked when a problem loads (issue 11, point 8): an unknown key or a bad value is one LoadError
line naming the file and the key; a problem file without get_inputs is one error, not a FAIL row per
implementation; a foreign file without META is said to be checked at its own shape only."""

import glob

import pytest
from click.testing import CliRunner
from conftest import KERNELBENCH, RELU_CANDIDATE, ROOT, SCALE_ROWS, candidate

from harness.loader import LoadError, load_problem
from harness.meta_schema import META_KEYS
from suite import commands
from suite.cli import cli


@pytest.fixture(autouse=True)
def no_cuda(monkeypatch):
    monkeypatch.setattr(commands, "cuda_available", lambda: False)


def variant(tmp_path, name, **changes):
    """The fixture problem with META keys replaced (or added)."""
    path = tmp_path / f"{name}.py"
    path.write_text(SCALE_ROWS.read_text() + "".join(f"\nMETA[{k!r}] = {v}" for k, v in changes.items()) + "\n")
    return path


BAD_META = {
    "unknown_key": ({"tolerence": "{'float32': (1e-5, 1e-5)}"}, ["'tolerence'", "unknown", "'tolerances'"]),
    "bound_typo": ({"bound": "'memroy'"}, ["bound", "memory, compute", "'memroy'"]),
    "shapes_not_a_list": ({"shapes": "{'batch_size': 4, 'dim': 8}"}, ["shapes", "list of dicts"]),
    "shapes_of_lists": ({"large_shapes": "[[4, 8]]"}, ["large_shapes", "list of dicts"]),
    "shape_size_not_int": ({"small_shapes": "[{'batch_size': 4.5, 'dim': 8}]"}, ["small_shapes", "ints"]),
    "tolerance_not_a_pair": ({"tolerances": "{'float32': 1e-5}"}, ["tolerances", "(atol, rtol) pair"]),
    "tolerance_one_number": ({"tolerances": "{'float32': (1e-5,)}"}, ["tolerances", "(atol, rtol) pair"]),
    "tolerance_unknown_dtype": ({"tolerances": "{'float99': (1e-5, 1e-5)}"}, ["tolerances", "float99"]),
    "deterministic_text": ({"deterministic": "'yes'"}, ["deterministic", "true, false or a relative bound"]),
    "strided_not_bool": ({"strided_inputs": "'no'"}, ["strided_inputs", "true or false"]),
    "stability_unknown": ({"stability": "['huge']"}, ["stability", "'huge'"]),
    "dtypes_empty": ({"dtypes": "[]"}, ["dtypes", "non-empty"]),
    "bytes_not_callable": ({"bytes": "1024"}, ["bytes", "a function"]),
    "workload_not_callable": ({"workload": "3"}, ["workload", "a function"]),
    "goal_as_text": ({"goal_pct_sol": "'90 %'"}, ["goal_pct_sol", "(0, 100]"]),
}


@pytest.mark.parametrize("case", sorted(BAD_META))
def test_bad_meta_is_one_line_naming_the_file_and_the_key(tmp_path, case):
    changes, words = BAD_META[case]
    path = variant(tmp_path, case, **changes)
    with pytest.raises(LoadError) as info:
        load_problem(path, f"ksuite_test_meta_{case}")
    message = str(info.value)
    assert message.startswith(f"{path}: META") and "\n" not in message
    for word in words:
        assert word in message, message


def test_optional_keys_may_be_none_and_known_extras_are_kept(tmp_path):
    path = variant(tmp_path, "extras", goal_pct_sol="None", workload="None", gpumode="{'leaderboard': 'x'}")
    meta = load_problem(path, "ksuite_test_meta_extras").meta
    assert meta.goal_pct_sol is None and meta.extra == {"gpumode": {"leaderboard": "x"}}


SHIPPED = sorted(set(glob.glob(str(ROOT / "problems" / "*.py")) + glob.glob(str(ROOT / "problems/kernelbench/**/*.py"),
                                                                             recursive=True)
                     + glob.glob(str(ROOT / "tests/fixtures/problems/*.py"))
                     + glob.glob(str(KERNELBENCH / "**" / "*.py"), recursive=True)))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.split("/")[-1])
def test_every_shipped_problem_still_loads(path):
    module = load_problem(path, "ksuite_test_shipped").module
    assert set(getattr(module, "META", None) or {}) <= set(META_KEYS)


def test_the_key_list_lives_in_one_place():
    source = (ROOT / "harness" / "loader.py").read_text()
    assert '"tolerances", "bytes"' not in source  # no second list of META keys beside harness/meta_schema.py


def no_get_inputs(tmp_path):
    path = tmp_path / "no_inputs.py"
    path.write_text(SCALE_ROWS.read_text().replace("def get_inputs(", "def make_inputs("))
    return path


@pytest.mark.parametrize("command", ["check", "bench"])
def test_a_problem_without_get_inputs_is_one_error_line(tmp_path, results_root, command):
    path = no_get_inputs(tmp_path)
    args = [command, str(path), str(candidate("honest_triton"))] if command == "check" else \
        [command, str(path), "--solution", str(candidate("honest_triton"))]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == [f"Error: {path}: problem file has no get_inputs"], result.output
    assert not list(results_root.glob("*/*.jsonl"))


def test_a_bad_meta_key_stops_check_before_any_child(tmp_path):
    path = variant(tmp_path, "typo", tolerence="{}")
    result = CliRunner().invoke(cli, ["check", str(path), str(candidate("honest_triton"))])
    assert result.exit_code == 2 and "'tolerence'" in result.output and "FAIL" not in result.output, result.output


def test_a_foreign_file_is_said_to_be_checked_at_its_own_shape_only():
    result = CliRunner().invoke(cli, ["check", "level1/19_ReLU", str(RELU_CANDIDATE), "--kernelbench",
                                      str(KERNELBENCH)])
    assert result.exit_code == 0, result.output
    assert "level1/19_ReLU: no META, so it is checked at its own shape only (batch_size=" in result.output
