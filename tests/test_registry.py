"""Registry: suites, name or path resolution, KernelBench trees, clear errors."""

import shutil

import pytest
from conftest import (
    CANDIDATES,
    KERNELBENCH,
    PROBLEMS_DIR,
    SCALE_ROWS,
    SOLUTIONS_DIR,
    candidate,
    problem_files,
)

from harness.loader import load_problem
from suite.registry import SUITES, Registry, RegistryError, kernelbench_problems


@pytest.fixture
def tmp_registry(tmp_path):
    """A registry over its own problems/ and solutions/: the fixture problem and three candidates."""
    problems, solutions = tmp_path / "problems", tmp_path / "solutions"
    problems.mkdir()
    (solutions / "scale_rows").mkdir(parents=True)
    shutil.copy(SCALE_ROWS, problems / "scale_rows.py")
    (problems / "_helpers.py").write_text("# not a problem\n")
    for name in ("honest_triton", "wrong_math"):
        shutil.copy(candidate(name), solutions / "scale_rows" / f"{name}.py")
    (solutions / "scale_rows" / "_draft.py").write_text("# private: not a solution\n")
    return Registry(problems_dir=problems, solutions_dir=solutions)


def test_default_suite_is_every_problem_file():
    names = [ref.name for ref in Registry().problems()]
    assert names == [p.stem for p in problem_files()]
    assert all(ref.path.is_file() for ref in Registry().problems())


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_every_suite_resolves_to_existing_problems(suite):
    refs = Registry().problems(suite)
    assert refs
    if SUITES[suite]:
        assert [r.name for r in refs] == list(SUITES[suite])
    assert all(r.path.parent == PROBLEMS_DIR for r in refs)


def test_unknown_suite_is_a_registry_error():
    with pytest.raises(RegistryError, match="unknown suite 'nope'.*default"):
        Registry().problems("nope")


def test_suite_naming_a_missing_problem_is_a_registry_error(tmp_registry, monkeypatch):
    monkeypatch.setitem(SUITES, "broken", ("scale_rows", "no_such_problem"))
    with pytest.raises(RegistryError, match="no_such_problem"):
        tmp_registry.problems("broken")


def test_underscore_files_are_not_problems_or_solutions(tmp_registry):
    assert [r.name for r in tmp_registry.problems()] == ["scale_rows"]
    ref = tmp_registry.problem("scale_rows")
    assert [s.name for s in tmp_registry.solutions(ref)] == ["honest_triton", "wrong_math"]


def test_problem_by_name_and_by_path(tmp_registry, monkeypatch):
    by_name = tmp_registry.problem("scale_rows")
    assert by_name.name == "scale_rows" and by_name.path.is_file()
    by_path = tmp_registry.problem(str(SCALE_ROWS))
    assert by_path.name == "scale_rows" and by_path.path == SCALE_ROWS
    monkeypatch.chdir(SCALE_ROWS.parent.parent)
    relative = tmp_registry.problem("problems/scale_rows.py")
    assert relative.name == "scale_rows" and relative.path.resolve() == SCALE_ROWS


def test_unknown_problem_name_is_a_clear_registry_error(tmp_registry):
    with pytest.raises(RegistryError) as info:
        tmp_registry.problem("rmsnrom")
    message = str(info.value)
    assert "'rmsnrom'" in message and str(tmp_registry.problems_dir) in message


def test_missing_problem_file_is_a_clear_registry_error(tmp_registry, tmp_path):
    with pytest.raises(RegistryError, match="no such problem file"):
        tmp_registry.problem(str(tmp_path / "missing.py"))


def test_solution_by_name_and_by_path(tmp_registry):
    ref = tmp_registry.problem("scale_rows")
    assert tmp_registry.solution(ref, "wrong_math").path.name == "wrong_math.py"
    outside = tmp_registry.solution(ref, str(candidate("raises")))
    assert outside.name == "raises" and outside.path == candidate("raises") and outside.kind == "solution"


def test_unknown_solution_lists_the_known_ones(tmp_registry):
    ref = tmp_registry.problem("scale_rows")
    with pytest.raises(RegistryError, match=r"no solution 'fast' for scale_rows \(known: honest_triton, wrong_math\)"):
        tmp_registry.solution(ref, "fast")
    with pytest.raises(RegistryError, match="no such solution file"):
        tmp_registry.solution(ref, str(CANDIDATES / "missing.py"))


def test_problem_without_solutions_folder_has_none(tmp_registry):
    problems = tmp_registry.problems_dir
    shutil.copy(SCALE_ROWS, problems / "lonely.py")
    assert tmp_registry.solutions(tmp_registry.problem("lonely")) == []


def test_every_shipped_solution_folder_belongs_to_a_problem():
    names = {p.stem for p in problem_files()} | {"kernelbench"}  # solutions/kernelbench: problems/kernelbench's
    folders = {d.name for d in SOLUTIONS_DIR.iterdir() if d.is_dir() and not d.name.startswith(("_", "."))}
    assert folders <= names, f"solutions/ folders without a problem: {sorted(folders - names)}"


# ---- KernelBench trees ------------------------------------------------------------------------------

def test_kernelbench_tree_loads_with_level_names():
    registry = Registry(kernelbench_dir=KERNELBENCH)
    refs = registry.problems()
    assert [r.name for r in refs] == ["level1/19_ReLU", "level1/23_Softmax"]
    assert all(r.level == 1 for r in refs)
    relu = registry.problem("level1/19_ReLU")
    assert relu.path == KERNELBENCH / "level1" / "19_ReLU.py"
    meta = load_problem(relu.path, "ksuite_test_kb_relu").meta
    assert meta.dtypes == ("float32",)
    assert list(meta.small_shapes) == [{"batch_size": 4, "dim": 64}]


def test_kernelbench_file_by_path_gets_its_level_name():
    ref = Registry().problem(str(KERNELBENCH / "level1" / "23_Softmax.py"))
    assert ref.name == "level1/23_Softmax" and ref.level == 1


def test_kernelbench_ordered_by_level_then_numeric_id(tmp_path):
    for rel in ("level2/1_Conv.py", "level1/10_Tenth.py", "level1/2_Second.py", "level1/notes.py",
                "misc/3_Other.py"):
        path = tmp_path / rel
        path.parent.mkdir(exist_ok=True)
        path.write_text("")
    names = [r.name for r in kernelbench_problems(tmp_path)]
    assert names == ["level1/2_Second", "level1/10_Tenth", "level2/1_Conv"]


def test_kernelbench_checkout_root_is_accepted(tmp_path):
    (tmp_path / "KernelBench").symlink_to(KERNELBENCH, target_is_directory=True)
    assert [r.name for r in kernelbench_problems(tmp_path)] == ["level1/19_ReLU", "level1/23_Softmax"]


def test_folder_that_is_not_kernelbench_is_a_registry_error(tmp_path):
    with pytest.raises(RegistryError, match="KernelBench"):
        kernelbench_problems(tmp_path)
    with pytest.raises(RegistryError, match="not a folder"):
        kernelbench_problems(tmp_path / "missing")
