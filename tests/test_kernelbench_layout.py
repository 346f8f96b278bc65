"""KernelBench naming: id lists, which candidate file answers which problem, record keys."""

import pytest

from harness.spec import ProblemRef, SolutionRef
from submit.kernelbench_layout import LayoutError, candidates, parse_ids, record_key, select


def problem(level, stem):
    return ProblemRef(f"level{level}/{stem}", f"/tree/level{level}/{stem}.py", level)


def test_ids_take_lists_and_ranges():
    assert parse_ids("1,19,23-26") == {1, 19, 23, 24, 25, 26}
    assert parse_ids(None) is None and parse_ids("") is None
    for bad in ("1,x", "5-3", "1;2"):
        with pytest.raises(LayoutError):
            parse_ids(bad)


def test_select_one_level_and_its_ids():
    probs = [problem(1, "1_Square_matrix_multiplication_"), problem(1, "19_ReLU"), problem(2, "19_Conv_ReLU")]
    assert [p.name for p in select(probs, 1, {19})] == ["level1/19_ReLU"]
    assert len(select(probs, 1, None)) == 2
    with pytest.raises(LayoutError, match="no level2 problem with id 7"):
        select(probs, 2, {7, 19})


def test_every_candidate_form_is_found_and_named(tmp_path):
    runs = tmp_path / "my_run"
    (runs / "level1" / "19_ReLU").mkdir(parents=True)
    for rel in ("level1/19_ReLU/fast.py", "level1/19_ReLU/_helper.py", "level1/19_ReLU.py",
                "level_1_problem_19_sample_0_kernel.py", "level_1_problem_19_sample_3_kernel.py",
                "level_1_problem_190_sample_0_kernel.py", "level_2_problem_19_sample_0_kernel.py"):
        (runs / rel).write_text("")
    found = candidates(runs, problem(1, "19_ReLU"))
    assert found == [SolutionRef("fast", runs / "level1/19_ReLU/fast.py"),
                     SolutionRef("my_run", runs / "level1/19_ReLU.py"),
                     SolutionRef("sample_0", runs / "level_1_problem_19_sample_0_kernel.py"),
                     SolutionRef("sample_3", runs / "level_1_problem_19_sample_3_kernel.py")]


def test_flat_file_without_level_folder(tmp_path):
    (tmp_path / "19_ReLU.py").write_text("")
    assert [s.path for s in candidates(tmp_path, problem(1, "19_ReLU"))] == [tmp_path / "19_ReLU.py"]


def test_record_keys_are_kernelbench_json_keys():
    assert record_key("level1/19_ReLU") == ("level1", "19_ReLU.py")
    assert record_key("rmsnorm") is None and record_key("gpumode/vectorsum_v2") is None
