"""scripts/table_variant.py: the copy `ksuite ab` times against its file differs in the one entry asked for, in the
one GPU's table, and a mistyped request is a one-line error instead of a copy that quietly runs the file."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import table_variant  # noqa: E402

from suite.optimize import dispatch  # noqa: E402

FAMILY = ROOT / "solutions" / "rmsnorm" / "triton_family.py"
BUCKET = "dim<=3072,batch_size<=8192"
H100, H200 = "nvidia-h100-80gb-hbm3", "nvidia-h200"
SHAPE = {"batch_size": 8192, "dim": 3072}


def test_changes_only_that_gpus_entry():
    source = FAMILY.read_text()
    copy = table_variant.variant_source(source, BUCKET, {"num_warps": 4, "HINTS": False}, H100)
    bucket, config = dispatch.config_for(copy, SHAPE, H100)
    assert bucket == BUCKET and config["num_warps"] == 4 and config["HINTS"] is False
    assert dispatch.read_table(copy, H200) == dispatch.read_table(source, H200)
    before, after = dispatch.read_configs(source, H100), dispatch.read_configs(copy, H100)
    assert {b for b in before if before[b] != after[b]} == {BUCKET}


def test_home_table_changes_in_dispatch():
    source = FAMILY.read_text()
    copy = table_variant.variant_source(source, BUCKET, {"BLOCK_M": 2}, H200)
    assert dispatch.config_for(copy, SHAPE, H200)[1]["BLOCK_M"] == 2
    assert dispatch.read_table(copy, H100) == dispatch.read_table(source, H100)


@pytest.mark.parametrize("args, message", [
    ([BUCKET, "WARPS=4"], "not in TUNABLES: WARPS"),
    (["dim<=30,batch_size<=8192", "num_warps=4"], "no bucket 'dim<=30,batch_size<=8192'"),
    ([BUCKET, "num_warps"], "expected KEY=VALUE"),
])
def test_bad_request_is_one_line(tmp_path, args, message):
    out = tmp_path / "copy.py"
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "table_variant.py"), "rmsnorm", *args,
                          "--gpu", H200, "--out", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 2 and not out.exists()
    assert message in run.stderr and len(run.stderr.strip().splitlines()) == 1
