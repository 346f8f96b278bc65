"""ksuite extract: a profile's top ops as problem files that load, list, and pass `ksuite check`."""

import json

import pytest
from conftest import SOLUTIONS_DIR
from test_profile_attribution import MODEL, TRACE

from harness.loader import load_problem
from suite import commands
from suite.profile.attribute import attribute
from suite.profile.extract import ExtractError, extract
from suite.profile.profile_run import summarise
from suite.registry import PROBLEMS_DIR, Registry


@pytest.fixture(scope="module")
def profile_file(tmp_path_factory):
    att = attribute(json.loads(TRACE.read_text())["traceEvents"], steps=1)
    path = tmp_path_factory.mktemp("profile") / "profile.json"
    path.write_text(json.dumps(summarise(att, [2350.0], MODEL)))
    return path


@pytest.fixture(scope="module")
def written(profile_file, tmp_path_factory):
    problems = tmp_path_factory.mktemp("problems")
    for src in PROBLEMS_DIR.glob("*.py"):
        (problems / src.name).write_text(src.read_text())
    return problems, extract(profile_file, 4, problems_dir=problems)


def test_top_distinct_ops_are_written_with_the_models_shapes(written):
    problems, paths = written
    assert [p.name for p in paths] == ["matmul__8192x4096x128256_bf16.py", "attention_causal__4x32x2048x128_bf16.py",
                                       "matmul__8192x4096x4096_bf16.py", "cross_entropy__8192x128256_bf16.py"]
    assert all(p.parent == problems / "extracted" / "llama3-8b-1-layers" for p in paths)
    loaded = load_problem(paths[1], "ksuite_test_extracted_attn")
    assert loaded.meta.dtypes == ("bfloat16",)
    assert list(loaded.meta.large_shapes) == [{"batch_size": 4, "num_heads": 32, "seq_len": 2048, "head_dim": 128}]
    assert loaded.defaults["seq_len"] == 2048  # the size constants themselves
    assert loaded.meta.tolerance("bfloat16") == (4e-2, 4e-2)  # the registry problem's
    assert loaded.meta.flops_fn(loaded.meta.large_shapes[0], 2) == 4 * 4 * 32 * 2048**2 * 128 // 2
    assert "llama3-8b:1-layers" in paths[1].read_text().split('"""')[1]


def test_registry_lists_them_and_tries_the_ops_solutions(written):
    problems, paths = written
    registry = Registry(problems_dir=problems, solutions_dir=SOLUTIONS_DIR)
    names = [r.name for r in registry.extracted_problems()]
    assert "extracted/llama3-8b-1-layers/cross_entropy__8192x128256_bf16" in names
    assert "extracted/llama3-8b-1-layers/cross_entropy__8192x128256_bf16" not in [r.name for r in registry.problems()]
    ref = registry.problem("extracted/llama3-8b-1-layers/cross_entropy__8192x128256_bf16")
    assert ref.path == paths[3]
    assert registry.problem(str(paths[3])).name == ref.name
    assert "triton_starter" in [s.name for s in registry.solutions(ref)]


def test_an_extracted_problem_passes_check_with_the_starter(written, monkeypatch):
    problems, paths = written
    monkeypatch.setattr(commands, "Registry", lambda kernelbench_dir=None: Registry(problems, SOLUTIONS_DIR))
    assert commands.check("extracted/llama3-8b-1-layers/cross_entropy__8192x128256_bf16", "triton_starter",
                          "all", ("all",), 120.0, None)


def test_a_profile_without_mapped_groups_is_a_clear_error(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"model": MODEL, "groups": [{"problem": None, "shape": None, "dtype": None}]}))
    with pytest.raises(ExtractError, match="no group is mapped"):
        extract(path, 3, tmp_path)
    with pytest.raises(ExtractError, match="no such profile"):
        extract(tmp_path / "missing.json", 3, tmp_path)
