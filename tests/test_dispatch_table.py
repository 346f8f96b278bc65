"""Dispatch tables: every shape falls in one bucket, untuned buckets copy their nearest, and each family
solution computes the same bucket at run time as the suite does."""

import importlib.util

import pytest

from harness.loader import load_problem
from suite.optimize import dispatch
from tests.conftest import PROBLEMS_DIR, SOLUTIONS_DIR

BUCKETS = {"dim": [1024, 4096], "batch_size": [64]}
FAMILIES = sorted(SOLUTIONS_DIR.glob("*/triton_family.py"))


def test_each_size_takes_the_first_range_it_does_not_pass():
    assert dispatch.bucket_of({"dim": 1024, "batch_size": 1}, BUCKETS) == "dim<=1024,batch_size<=64"
    assert dispatch.bucket_of({"dim": 1025, "batch_size": 64}, BUCKETS) == "dim<=4096,batch_size<=64"
    assert dispatch.bucket_of({"dim": 3000, "batch_size": 65}, BUCKETS) == "dim<=4096,batch_size>64"
    assert dispatch.bucket_of({"dim": 10**6, "batch_size": 10**6}, BUCKETS) == "dim>4096,batch_size>64"


def test_every_bucket_of_the_grid_is_reachable():
    reps = {"dim": [1, 1024, 2000, 4096, 4097, 99999], "batch_size": [1, 64, 65, 5000]}
    reached = {dispatch.bucket_of({"dim": d, "batch_size": b}, BUCKETS)
               for d in reps["dim"] for b in reps["batch_size"]}
    assert reached == set(dispatch.all_buckets(BUCKETS))
    assert len(reached) == 6


def test_untuned_buckets_copy_their_nearest_tuned_one():
    table = {"dim<=1024,batch_size<=64": {"BLOCK": 1}, "dim>4096,batch_size>64": {"BLOCK": 9}}
    full = dispatch.complete(table, BUCKETS)
    assert set(full) == set(dispatch.all_buckets(BUCKETS))
    assert full["dim<=1024,batch_size>64"] == {"BLOCK": 1}  # one step from the first
    assert full["dim>4096,batch_size<=64"] == {"BLOCK": 9}  # one step from the last
    assert full["dim<=4096,batch_size>64"] == {"BLOCK": 9}  # a tie: the larger sizes win it
    assert dispatch.complete({}, BUCKETS) == {}


def test_table_is_rewritten_in_the_source_and_read_back():
    source = 'TUNABLES = {"BLOCK": 4}\nBUCKETS = {"dim": [1024, 4096], "batch_size": [64]}\nDISPATCH = {}\nX = 1\n'
    table = {"dim<=1024,batch_size<=64": {"BLOCK": 1}}
    written = dispatch.write_table(source, table, "# a comment\n")
    assert dispatch.read_table(written) == table
    assert "X = 1" in written and "# a comment" in written
    assert dispatch.config_for(written, {"dim": 10, "batch_size": 3}) == ("dim<=1024,batch_size<=64", {"BLOCK": 1})
    assert dispatch.config_for(written, {"dim": 5000, "batch_size": 3})[1] == {"BLOCK": 4}


def test_a_written_table_keeps_to_the_line_length():
    """A long bucket name with many tunables goes on two lines, so the written file passes ruff."""
    source = 'TUNABLES = {}\nBUCKETS = {}\nDISPATCH = {}\n'
    bucket = "head_dim<=128,seq_len<=1024,num_heads>16"
    config = {"FLAT": False, "BLOCK_H": 1, "BLOCK_S": 16, "HEADS_FASTEST": True, "num_warps": 4, "EXTRA": 1}
    written = dispatch.write_table(source, {bucket: config, "a<=1": {"B": 2}}, "")
    assert dispatch.read_table(written) == {bucket: config, "a<=1": {"B": 2}}
    assert max(len(line) for line in written.splitlines()) <= dispatch.LINE_LENGTH
    assert "    'a<=1': {'B': 2},\n" in written  # a short entry stays on one line


def test_malformed_buckets_are_refused():
    with pytest.raises(dispatch.DispatchError):
        dispatch.read_buckets('BUCKETS = {"dim": [4096, 1024]}\n')
    with pytest.raises(dispatch.DispatchError):
        dispatch.read_buckets("TUNABLES = {}\n")
    with pytest.raises(dispatch.DispatchError):
        dispatch.bucket_of({"rows": 3}, BUCKETS)


@pytest.mark.parametrize("path", FAMILIES, ids=lambda p: p.parent.name)
def test_family_solutions_bucket_shapes_as_the_suite_does(path):
    assert FAMILIES, "no family solutions"
    spec = importlib.util.spec_from_file_location(f"ksuite_family_{path.parent.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    source = path.read_text()
    buckets = dispatch.read_buckets(source)
    meta = load_problem(PROBLEMS_DIR / f"{path.parent.name}.py", f"ksuite_family_p_{path.parent.name}").meta
    shapes = list(meta.workload().shapes) + list(meta.large_shapes) + list(meta.edge_shapes)
    for shape in shapes:
        sizes = {k: shape[k] for k in buckets}
        assert module.bucket_of(sizes) == dispatch.bucket_of(shape, buckets), shape


SPLIT_FAMILY = '''TUNABLES = {"BLOCK": 1}
BUCKETS = {"dim": [1024, 4096], "batch_size": [64]}
DISPATCH = {
    "dim<=1024,batch_size<=64": {"BLOCK": 2},
    "dim<=4096,batch_size<=64": {"BLOCK": 4},
    "dim>4096,batch_size<=64": {"BLOCK": 8},
    "dim<=1024,batch_size>64": {"BLOCK": 16},
}
'''


def test_a_split_adds_the_edge_and_every_shape_runs_what_it_ran():
    source, made = dispatch.split(SPLIT_FAMILY, "batch_size", 8)
    assert dispatch.read_buckets(source) == {"dim": [1024, 4096], "batch_size": [8, 64]}
    assert made == ["dim<=1024,batch_size<=8", "dim<=4096,batch_size<=8", "dim>4096,batch_size<=8"]
    for dim in (1, 1024, 1025, 4096, 4097, 10**5):
        for rows in (1, 8, 9, 64, 65, 10**5):
            shape = {"dim": dim, "batch_size": rows}
            assert dispatch.config_for(source, shape)[1] == dispatch.config_for(SPLIT_FAMILY, shape)[1]
    assert dispatch.read_table(source)["dim<=1024,batch_size<=8"] == {"BLOCK": 2}


def test_a_split_names_what_is_wrong():
    for name, edge, words in (("rows", 8, "no 'rows'"), ("dim", 1024, "already an edge"), ("dim", 0, "at least 1")):
        try:
            dispatch.split(SPLIT_FAMILY, name, edge)
        except dispatch.DispatchError as exc:
            assert words in str(exc)
        else:
            raise AssertionError(f"split {name}={edge} was accepted")


def test_a_config_longer_than_a_line_is_wrapped():
    """A searched bucket's entry holds every tunable (matmul's eleven); wrapped, it still reads back."""
    source = 'TUNABLES = {}\nBUCKETS = {}\nDISPATCH = {}\n'
    config = {f"TUNABLE_NUMBER_{i}": i * 1000 for i in range(11)}
    written = dispatch.write_table(source, {"M<=256,N<=4096,K<=8192": config}, "")
    assert dispatch.read_table(written) == {"M<=256,N<=4096,K<=8192": config}
    assert max(len(line) for line in written.splitlines()) <= dispatch.LINE_LENGTH


def test_a_written_entry_keeps_only_what_differs_from_tunables():
    """Defaults are left out (the solutions read an entry over TUNABLES), with their type: 1 is not True."""
    source = 'TUNABLES = {"BLOCK": 4, "num_warps": 4, "ONE_PASS": True}\nBUCKETS = {"dim": [1024]}\nDISPATCH = {}\n'
    table = {"dim<=1024": {"BLOCK": 8, "num_warps": 4, "ONE_PASS": 1}, "dim>1024": {"BLOCK": 4, "num_warps": 4}}
    written = dispatch.write_table(source, table)
    assert dispatch.read_table(written) == {"dim<=1024": {"BLOCK": 8, "ONE_PASS": 1}, "dim>1024": {}}
    assert dispatch.read_configs(written)["dim>1024"] == {"BLOCK": 4, "num_warps": 4, "ONE_PASS": True}
    assert dispatch.config_for(written, {"dim": 10}) == ("dim<=1024", {"BLOCK": 8, "num_warps": 4, "ONE_PASS": 1})
