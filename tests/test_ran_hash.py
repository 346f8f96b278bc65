"""harness/ran_hash.py: a search on one GPU rewrites a family file for every GPU; what another GPU runs from it,
its code and its own table, must hash the same before and after, and differently where either changed."""

from pathlib import Path

from harness.ran_hash import ran_hash, same_run

FAMILY = '''import torch

TUNABLES = {"BLOCK_N": 4096, "num_warps": 8}
# ksuite optimize table: run 1 on NVIDIA H200,
DISPATCH = {
    'rows<=64': {'num_warps': 4},
    'rows>64': {},
}
DISPATCH_GPU = "nvidia-h200"
DISPATCH_BY_GPU = {
    'nvidia-h100-80gb-hbm3': {
        # ksuite optimize table: run 2 on NVIDIA H100 80GB HBM3,
        'rows<=64': {},
        'rows>64': {'num_warps': 16},
    },
}


def dispatch_table():
    return DISPATCH_BY_GPU.get(this_gpu(), DISPATCH)
'''
H100, H200, OTHER = "nvidia-h100-80gb-hbm3", "nvidia-h200", "nvidia-b200"


def family(tmp_path: Path, text: str, name: str = "family.py") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_search_on_the_home_gpu_leaves_what_another_gpu_with_its_own_table_runs(tmp_path):
    before = family(tmp_path, FAMILY, "before.py")
    searched = FAMILY.replace("run 1 on", "run 3 on").replace("'rows>64': {},", "'rows>64': {'HINTS': False},")
    after = family(tmp_path, searched, "after.py")
    assert ran_hash(before, H100) == ran_hash(after, H100)
    assert ran_hash(before, H200) != ran_hash(after, H200)
    assert ran_hash(before, OTHER) != ran_hash(after, OTHER)  # it runs the home table, which changed


def test_a_search_on_another_gpu_leaves_the_home_gpu_s_hash(tmp_path):
    before = family(tmp_path, FAMILY, "before.py")
    after = family(tmp_path, FAMILY.replace("'rows>64': {'num_warps': 16},", "'rows>64': {'num_warps': 8},")
                   .replace("run 2 on", "run 4 on"), "after.py")
    assert ran_hash(before, H200) == ran_hash(after, H200)
    assert ran_hash(before, OTHER) == ran_hash(after, OTHER)
    assert ran_hash(before, H100) != ran_hash(after, H100)


def test_a_gpu_given_its_own_table_by_a_search_runs_something_new(tmp_path):
    # the B200 ran the home table; a search there writes its own entry, equal or not, and its hash follows it
    before = family(tmp_path, FAMILY, "before.py")
    own = FAMILY.replace("DISPATCH_BY_GPU = {\n", "DISPATCH_BY_GPU = {\n    'nvidia-b200': {'rows<=64': {}},\n")
    after = family(tmp_path, own, "after.py")
    assert ran_hash(before, OTHER) != ran_hash(after, OTHER)
    assert ran_hash(before, H100) == ran_hash(after, H100)


def test_code_changes_change_every_gpu_s_hash(tmp_path):
    before = family(tmp_path, FAMILY, "before.py")
    after = family(tmp_path, FAMILY.replace('"num_warps": 8}', '"num_warps": 4}'), "after.py")
    for gpu in (H100, H200, OTHER):
        assert ran_hash(before, gpu) != ran_hash(after, gpu)


def test_a_file_without_per_gpu_tables_has_none_and_never_counts_as_the_same_run(tmp_path):
    plain = family(tmp_path, "import torch\n\nTUNABLES = {'num_warps': 4}\n")
    assert ran_hash(plain, H100) is None
    assert not same_run(None, plain, H100)
    assert ran_hash(family(tmp_path, "def broken(:\n", "broken.py"), H100) is None
    assert ran_hash(tmp_path / "missing.py", H100) is None


def test_same_run_compares_a_record_with_the_file_now(tmp_path):
    path = family(tmp_path, FAMILY)
    recorded = ran_hash(path, H100)
    assert same_run(recorded, path, H100)
    assert not same_run(recorded, path, None)
    assert not same_run(recorded, path, H200)


def test_every_family_file_with_tables_has_a_hash():
    # the shapes the table writer leaves must stay literal, or records of every family would carry None
    root = Path(__file__).resolve().parent.parent / "solutions"
    with_tables = [p for p in root.glob("*/*.py") if "DISPATCH_BY_GPU = {" in p.read_text()]
    assert len(with_tables) >= 10
    assert [p.name for p in with_tables if ran_hash(p, H100) is None] == []
