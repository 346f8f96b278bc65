"""Workload shapes: drawn from published model configurations, split once into tuning and held-out sets."""

import pytest

from harness import workloads
from harness.loader import load_problem
from tests.conftest import problem_files

WITH_WORKLOAD = [p for p in problem_files() if load_problem(p, f"ksuite_wl_{p.stem}").meta.workload_fn]


def test_every_memory_bound_problem_has_a_workload():
    names = {p.stem for p in WITH_WORKLOAD}
    assert {"rmsnorm", "layernorm", "softmax", "cross_entropy", "reduce_rows", "rotary", "swiglu_act",
            "vectorsum_v2"} <= names


@pytest.mark.parametrize("path", WITH_WORKLOAD, ids=lambda p: p.stem)
def test_split_is_deterministic_disjoint_and_complete(path):
    meta = load_problem(path, f"ksuite_wl_a_{path.stem}").meta
    first, again = meta.workload(), load_problem(path, f"ksuite_wl_b_{path.stem}").meta.workload()
    assert first.shapes == again.shapes and first.sets == again.sets
    tuning, heldout = first.select("tuning"), first.select("heldout")
    keys = lambda shapes: {workloads.shape_key(s) for s in shapes}  # noqa: E731
    assert not keys(tuning) & keys(heldout)
    assert keys(tuning) | keys(heldout) == keys(first.select("workload"))
    assert len(heldout) >= workloads.MIN_HELDOUT
    assert len(tuning) >= len(heldout)


@pytest.mark.parametrize("path", WITH_WORKLOAD, ids=lambda p: p.stem)
def test_workload_shapes_are_the_files_size_constants_and_bounded(path):
    problem = load_problem(path, f"ksuite_wl_c_{path.stem}")
    for shape in problem.meta.workload().shapes:
        assert set(shape) <= set(problem.defaults), shape
        assert all(isinstance(v, int) and v >= 1 for v in shape.values()), shape
        assert problem.meta.bytes_fn(shape, 2) <= workloads.MAX_BYTES


def test_token_counts_span_decoding_to_long_prompts_with_odd_sizes():
    tokens = sorted({t for m in workloads.MODELS for t in workloads.tokens_for(m)})
    assert tokens[0] <= 16 and tokens[-1] >= 16384
    assert any(t % 2 for t in tokens if t > 1), "odd token counts"
    shapes = load_problem(next(p for p in WITH_WORKLOAD if p.stem == "rmsnorm"), "ksuite_wl_d").meta.workload().shapes
    dims = {s["dim"] for s in shapes}
    assert any(d & (d - 1) for d in dims), "hidden sizes that are not powers of two"


def test_vectorsum_workload_holds_gpumode_benchmark_sizes():
    path = next(p for p in WITH_WORKLOAD if p.stem == "vectorsum_v2")
    sizes = {s["size"] for s in load_problem(path, "ksuite_wl_e").meta.workload().shapes}
    assert {1638400, 3276800, 6553600, 13107200, 26214400, 52428800} <= sizes


def test_split_depends_on_the_shape_only():
    """Adding models never moves an existing shape from one set to the other (below the top-up)."""
    shapes = [{"n": n} for n in range(1, 200)]
    full = workloads.split(shapes)
    part = workloads.split(shapes[:150])
    low = {k for k, v in part.items() if workloads._unit(k) < workloads.HELDOUT_SHARE}
    assert all(full[k] == "heldout" for k in low)


def test_record_names_its_shape_set():
    meta = load_problem(next(p for p in WITH_WORKLOAD if p.stem == "rmsnorm"), "ksuite_wl_f").meta
    held = meta.workload().select("heldout")[0]
    assert meta.set_of(held, "heldout") == "heldout"
    assert meta.set_of(meta.large_shapes[0], "large") == "large"
    assert meta.set_of({"batch_size": 3, "dim": 5}, "heldout") == "custom"
    with pytest.raises(ValueError):
        meta.workload().select("everything")


def test_a_workload_set_on_a_problem_without_a_workload_is_a_usage_error():
    from click.testing import CliRunner

    from suite.cli import cli
    from tests.conftest import SCALE_ROWS

    result = CliRunner().invoke(cli, ["check", str(SCALE_ROWS), "--shapes", "heldout"])
    assert result.exit_code == 2 and "declares no workload" in result.output
