"""scripts/single_draw_wins.py: which kept table changes rest on one draw at calls of a few microseconds."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import single_draw_wins  # noqa: E402

HEADER = "\t".join(["time", "experiment", "strategy", "description", "correct", "median_us", "pct_sol",
                    "speedup_vs_baseline", "status", "source_hash", "bucket", "per_min"])


def row(description: str, median: str, status: str, bucket: str = "dim<=1024,batch_size<=64") -> str:
    return f"2026-12-05T12:52:03+00:00\t3\ttable\t{description}\tTrue\t{median}\t-\t-\t{status}\tabc\t{bucket}\t30"


def test_only_kept_small_wins_on_one_draw_are_listed(tmp_path):
    ledger = tmp_path / "rmsnorm-20261205-000000.tsv"
    ledger.write_text("\n".join([
        HEADER,
        row("start: triton_family.py", "12.0", "kept", bucket=""),
        row("search: BLOCK_M 1->2; 1.028x [1.019, 1.036] over 15 rounds x 2 shape(s): faster", "4.05", "kept"),
        row("search: BLOCK_M 2->4; 1.300x [1.200, 1.400] over 15 rounds x 2 shape(s): faster", "4.05", "kept"),
        row("search: num_warps 4->8; 1.030x [1.020, 1.040] over 15 rounds x 2 shape(s): faster", "40.0", "kept"),
        row("search: HINTS; 1.030x [1.020, 1.040] over 15 rounds x 2 shape(s): faster; again as fresh copies of "
            "both: 1.025x [1.015, 1.035] over 15 rounds x 2 shape(s): faster", "4.0", "kept"),
        row("search: FLAT; 1.004x [0.990, 1.020] over 15 rounds x 2 shape(s): not above 1.01x", "4.0", "discarded"),
    ]) + "\n")
    found = single_draw_wins.single_draw_wins(ledger, max_us=10.0, below=1.05)
    assert [(r["change"], r["low"], r["median_us"]) for r in found] == [("search: BLOCK_M 1->2", 1.019, 4.05)]


FAMILY = '''"""A stand-in family: only its literals matter."""
TUNABLES = {"BLOCK": 1, "num_warps": 4, "FLAT": False}
TUNABLE_CHOICES = {"BLOCK": [1, 2, 4, 8], "num_warps": [4, 8], "FLAT": [False, True]}
BUCKETS = {"dim": [1024], "batch_size": [64]}
DISPATCH = {
    'dim<=1024,batch_size<=64': {'BLOCK': 8, 'FLAT': True},
}
'''


def test_a_standing_change_is_put_back_and_a_moved_one_is_left_alone():
    bucket = "dim<=1024,batch_size<=64"
    assert single_draw_wins.steps("search: BLOCK 2->8, FLAT False->True") == [("BLOCK", "2", "8"),
                                                                                ("FLAT", "False", "True")]
    reverted = single_draw_wins.without_change(FAMILY, "nvidia-h200", bucket, "search: BLOCK 2->8, FLAT False->True")
    assert "'dim<=1024,batch_size<=64': {'BLOCK': 2}," in reverted  # FLAT back to TUNABLES' False: not written
    assert reverted.replace("{'BLOCK': 2}", "{'BLOCK': 8, 'FLAT': True}") == FAMILY
    assert single_draw_wins.without_change(FAMILY, "nvidia-h200", bucket, "search: BLOCK 1->4") is None  # moved on
    assert single_draw_wins.without_change(FAMILY, "nvidia-h200", "dim>1024,batch_size<=64", "search: BLOCK 1->2") \
        is None  # no entry of its own


GPU_FAMILY = FAMILY + """DISPATCH_GPU = "nvidia-h200"
DISPATCH_BY_GPU = {
    'nvidia-h100-80gb-hbm3': {
        # ksuite optimize table: run 20261206-110429 on NVIDIA H100 80GB HBM3,
        # ksuite optimize table: from the tuning shapes only;
        'dim<=1024,batch_size<=64': {'BLOCK': 4, 'num_warps': 8},
    },
}
"""


def test_a_revert_in_a_gpus_own_table_keeps_its_comments_and_the_home_table():
    bucket = "dim<=1024,batch_size<=64"
    reverted = single_draw_wins.without_change(GPU_FAMILY, "nvidia-h100-80gb-hbm3", bucket,
                                               "search: num_warps 4->8")
    assert "'dim<=1024,batch_size<=64': {'BLOCK': 4}," in reverted
    assert reverted.replace("{'BLOCK': 4},", "{'BLOCK': 4, 'num_warps': 8},") == GPU_FAMILY
