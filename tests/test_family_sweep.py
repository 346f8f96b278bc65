"""scripts/family_sweep.py: each CONFIG names the launch a family file runs at every shape, or its own table."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import family_sweep  # noqa: E402

RMSNORM = ROOT / "solutions" / "rmsnorm" / "triton_family.py"


def launch(config_text: str, index: int, rows: int, cols: int) -> dict:
    cls = family_sweep.forced(RMSNORM, *family_sweep.parse_config(config_text), index)
    return sys.modules[cls.__module__].launch_config(rows, cols)


def test_a_config_runs_that_launch_at_every_shape_and_table_keeps_the_file():
    forced = launch("num_warps=16,ONE_PASS=False,BLOCK_N=4096,STATIC_N=True", 0, 16384, 768)
    assert forced == {**forced, "num_warps": 16, "ONE_PASS": False, "N_STATIC": 768}
    table = launch("table", 1, 16384, 768)
    assert table["N_STATIC"] == 0 and table["ONE_PASS"]  # no entry of the file's tables sets STATIC_N


def test_table_plus_sets_what_the_entries_leave_out():
    with_static = launch("table+STATIC_N=True", 2, 2048, 12288)
    plain = launch("table", 3, 2048, 12288)
    assert with_static == {**plain, "N_STATIC": 12288}


def test_a_tunable_the_file_does_not_declare_is_refused():
    with pytest.raises(SystemExit, match="no tunable"):
        launch("NUM_STAGES=3", 4, 16, 768)
    with pytest.raises(SystemExit, match="want k=v"):
        family_sweep.parse_config("num_warps")
