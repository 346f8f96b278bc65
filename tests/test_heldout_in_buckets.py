"""scripts/heldout_in_buckets.py: the held-out shapes a search of some buckets can have moved, as `--shape` options."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import heldout_in_buckets  # noqa: E402

from harness.loader import load_problem  # noqa: E402
from suite.optimize import dispatch  # noqa: E402

FAMILY = ROOT / "solutions" / "rmsnorm" / "triton_family.py"


def test_exactly_the_held_out_shapes_in_the_named_buckets(capsys):
    assert heldout_in_buckets.main(["rmsnorm", "--bucket", "dim<=8192,batch_size<=8192"]) == 0
    printed = capsys.readouterr().out.split()
    assert printed == ["--shape", "batch_size=3001,dim=8192", "--shape", "batch_size=4096,dim=8192"]
    buckets = dispatch.read_buckets(FAMILY.read_text())
    heldout = load_problem(ROOT / "problems" / "rmsnorm.py").meta.sweep("heldout")
    inside = [s for s in heldout if dispatch.bucket_of(s, buckets) == "dim<=8192,batch_size<=8192"]
    assert heldout_in_buckets.heldout_in("rmsnorm", FAMILY, ["dim<=8192,batch_size<=8192"]) == inside
    assert len(inside) < len(heldout)


def test_none_inside_prints_nothing_and_says_so_by_exit_code(capsys):
    assert heldout_in_buckets.main(["rmsnorm", "--bucket", "dim>8192,*"]) == 1  # no model of the workload has one
    assert capsys.readouterr().out.strip() == ""


def test_a_glob_that_matches_no_bucket_is_a_usage_error_naming_the_file(capsys):
    with pytest.raises(SystemExit) as exc:
        heldout_in_buckets.main(["rmsnorm", "--bucket", "dim<=9,*"])
    assert exc.value.code == 2
    assert "triton_family.py: --bucket 'dim<=9,*' matches none of its buckets" in capsys.readouterr().err
