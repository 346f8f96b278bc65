"""`ksuite optimize --from FAMILY --shape AxB`: a user's own shapes join the table search's tuning shapes, so the
bucket they fall in is searched there, buckets no workload shape reaches included; held-out shapes are refused."""

from pathlib import Path

from click.testing import CliRunner

from harness.loader import load_problem
from suite.cli import cli
from suite.optimize.table_command import with_users_shapes

ROOT = Path(__file__).resolve().parent.parent
RMSNORM = ROOT / "problems" / "rmsnorm.py"
WIDE = "dim>8192,batch_size<=8192"  # no model of the workload has a hidden size above 8192


def plan(*args):
    return CliRunner().invoke(cli, ["optimize", "rmsnorm", "--from", "triton_family", "--plan", "--per-bucket", "2",
                                    *args])


def test_a_users_shape_makes_its_bucket_searched_there():
    without = plan("--bucket", WIDE)
    assert without.exit_code == 0, without.output
    assert without.output.startswith("rmsnorm: 0 of 24 buckets searched")  # nothing to time it at
    mine = plan("--bucket", WIDE, "--shape", "2048x12288")
    assert mine.exit_code == 0, mine.output
    lines = mine.output.splitlines()
    assert lines[0].startswith("rmsnorm: 1 of 24 buckets searched")
    assert lines[1].startswith(f"[{WIDE}] entry")
    assert lines[2].startswith("  shapes: batch_size=2048,dim=12288 (yours)")


def test_a_held_out_shape_is_refused_in_one_line_naming_the_file():
    meta = load_problem(RMSNORM).meta
    held = meta.sweep("heldout")[0]
    result = plan("--shape", f"{held['batch_size']}x{held['dim']}")
    assert result.exit_code == 2
    assert "problems/rmsnorm.py: --shape" in result.output and "held-out shape" in result.output
    assert "Traceback" not in result.output


def test_a_shape_that_does_not_fit_the_problem_or_a_start_without_buckets_is_a_usage_error():
    wrong = plan("--shape", "7x35x84")
    assert wrong.exit_code == 2 and "3 numbers for 2 size constants" in wrong.output
    starter = CliRunner().invoke(cli, ["optimize", "rmsnorm", "--plan", "--shape", "2048x12288"])
    assert starter.exit_code == 2 and "not a family file with BUCKETS" in starter.output


def test_a_users_shape_already_in_the_tuning_set_is_timed_once():
    tuning = load_problem(RMSNORM).meta.sweep("tuning")
    mine = [dict(tuning[0]), {"batch_size": 2048, "dim": 12288}]
    joined = with_users_shapes(tuning, mine)
    assert joined[:len(tuning)] == tuning and joined[len(tuning):] == [mine[1]]
