"""Dispatch tables: every shape falls in one bucket, untuned buckets copy their nearest, and each family
solution computes the same bucket at run time as the suite does."""

import importlib.util
import re

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


HOMED_FAMILY = '''TUNABLES = {"BLOCK": 1}
BUCKETS = {"dim": [1024], "batch_size": [64]}
# ksuite optimize table: run A on the home GPU
DISPATCH = {
    "dim<=1024,batch_size<=64": {"BLOCK": 2},
    "dim>1024,batch_size<=64": {"BLOCK": 4},
}
DISPATCH_GPU = "nvidia-h200"
DISPATCH_BY_GPU = {}
'''


def test_a_search_on_another_gpu_writes_its_own_table_and_keeps_the_home_one():
    """A table timed on the H100 must not replace the H200's: it goes into DISPATCH_BY_GPU, which only that GPU
    reads; a second GPU's table keeps the first's, comments and all."""
    h100 = {"dim<=1024,batch_size<=64": {"BLOCK": 8}}
    once = dispatch.write_table(HOMED_FAMILY, h100, "# ksuite optimize table: run B on an H100\n",
                                gpu="nvidia-h100-80gb-hbm3")
    assert dispatch.read_table(once, "nvidia-h100-80gb-hbm3") == h100
    assert dispatch.read_table(once, "nvidia-h200") == dispatch.read_table(HOMED_FAMILY)
    assert dispatch.read_table(once, "nvidia-a100") == dispatch.read_table(HOMED_FAMILY)  # no table: DISPATCH
    assert dispatch.read_table(once) == dispatch.read_table(HOMED_FAMILY)
    twice = dispatch.write_table(once, {"dim>1024,batch_size<=64": {"BLOCK": 16}}, "# run C\n", gpu="nvidia-a100")
    assert dispatch.tables_by_gpu(twice) == {"nvidia-h100-80gb-hbm3": h100,
                                             "nvidia-a100": {"dim>1024,batch_size<=64": {"BLOCK": 16}}}
    assert "# ksuite optimize table: run A on the home GPU" in twice and "run B on an H100" in twice
    home = dispatch.write_table(twice, {"dim<=1024,batch_size<=64": {"BLOCK": 32}}, gpu="nvidia-h200")
    assert dispatch.read_table(home) == {"dim<=1024,batch_size<=64": {"BLOCK": 32}}
    assert dispatch.tables_by_gpu(home) == dispatch.tables_by_gpu(twice)
    assert dispatch.config_for(home, {"dim": 10, "batch_size": 1}, "nvidia-h100-80gb-hbm3")[1] == {"BLOCK": 8}


def test_a_file_with_one_table_for_every_gpu_keeps_it():
    """Without DISPATCH_GPU every GPU's search writes DISPATCH, as before."""
    written = dispatch.write_table(SPLIT_FAMILY, {"dim<=1024,batch_size<=64": {"BLOCK": 3}}, gpu="nvidia-h100")
    assert dispatch.read_table(written) == {"dim<=1024,batch_size<=64": {"BLOCK": 3}}
    assert dispatch.tables_by_gpu(written) is None


def test_a_homed_file_that_cannot_hold_another_gpus_table_says_so():
    source = HOMED_FAMILY.replace("DISPATCH_BY_GPU = {}\n", "")
    with pytest.raises(dispatch.DispatchError, match="DISPATCH_BY_GPU"):
        dispatch.write_table(source, {"dim<=1024,batch_size<=64": {"BLOCK": 8}}, gpu="nvidia-h100")


def test_a_split_cuts_every_gpus_table():
    source = dispatch.write_table(HOMED_FAMILY, {"dim<=1024,batch_size<=64": {"BLOCK": 8}}, "# run B\n",
                                  gpu="nvidia-h100")
    cut, made = dispatch.split(source, "batch_size", 8)
    assert made == ["dim<=1024,batch_size<=8", "dim>1024,batch_size<=8"]
    assert dispatch.read_table(cut, "nvidia-h100") == {"dim<=1024,batch_size<=8": {"BLOCK": 8},
                                                        "dim<=1024,batch_size<=64": {"BLOCK": 8}}
    assert dispatch.read_table(cut)["dim>1024,batch_size<=8"] == {"BLOCK": 4}
    assert "# run B" in cut and "# ksuite optimize table: run A" in cut


TABLED = sorted(p for p in SOLUTIONS_DIR.glob("*/*.py") if "\nDISPATCH = " in p.read_text())


@pytest.mark.parametrize("path", TABLED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_family_solutions_run_their_gpus_own_table(path, monkeypatch):
    """Each tabled solution names its table's GPU and, on a GPU with a table of its own, runs that table: the
    GPU named as the suite names its results folder, so the table `ksuite optimize` wrote is the one run."""
    from harness.environment import gpu_slug
    source = path.read_text()
    assert dispatch.home_gpu(source) == "nvidia-h200" and dispatch.tables_by_gpu(source) is not None
    spec = importlib.util.spec_from_file_location(f"ksuite_tabled_{path.parent.name}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.dispatch_table() is module.DISPATCH  # the interpreter has no table of its own here
    name = "NVIDIA H100 80GB HBM3"
    monkeypatch.setattr(module.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(module.torch.cuda, "get_device_name", lambda *a: name)
    module.this_gpu.cache_clear()
    own = {"any": {"BLOCK": 1}}
    monkeypatch.setattr(module, "DISPATCH_BY_GPU", {gpu_slug(name): own})
    assert module.dispatch_table() is own
    monkeypatch.setattr(module.torch.cuda, "get_device_name", lambda *a: "NVIDIA H200")
    module.this_gpu.cache_clear()
    assert module.dispatch_table() is module.DISPATCH
    module.this_gpu.cache_clear()


PROVENANCE = re.compile(r"# ksuite optimize table: run \S+ on ([^,;]+)")


@pytest.mark.parametrize("path", TABLED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_each_table_was_searched_on_the_gpu_it_serves(path):
    """A table's provenance comment names the GPU it was timed on: DISPATCH's must be DISPATCH_GPU, and each
    DISPATCH_BY_GPU entry's its own key. A search's file copied back from another GPU with its table in DISPATCH
    (or a hand edit) fails here instead of serving that GPU's timings to the H200."""
    from harness.environment import gpu_slug

    source = path.read_text()
    lines = source.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("DISPATCH = "))
    above = []
    for line in reversed(lines[:start]):  # the comment block right above DISPATCH
        if not line.startswith("#"):
            break
        above.append(line)
    named = [gpu_slug(m.group(1).strip()) for line in above if (m := PROVENANCE.search(line))]
    assert set(named) <= {dispatch.home_gpu(source)}, named
    for gpu in dispatch.tables_by_gpu(source) or {}:
        block = source[source.index(f"{gpu!r}: {{"):]
        block = block[:block.index("\n    },")]
        named = [gpu_slug(m.group(1).strip()) for m in PROVENANCE.finditer(block)]
        assert named == [gpu], (gpu, named)
