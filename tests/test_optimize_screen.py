"""The optimisation loop's static screen: a candidate whose machine code spills is discarded from its
compile (seconds) and never checked or timed (half a minute or more on the GPU)."""

from pathlib import Path

from conftest import SCALE_ROWS, candidate
from test_optimize_loop import NO_PLATEAU, FakeEvaluator, Scripted, make_setup

from harness.machine_code.kernel_inspect import Target
from suite.optimize.loop import Loop
from suite.optimize.screen import StaticScreen

SPILLS = Path(__file__).parent / "fixtures" / "compile" / "spills.py"
H200 = Target(90, 132, 4.25e12)


def test_the_loop_discards_what_the_screen_rejects_without_checking_or_timing_it(tmp_path):
    evaluator = FakeEvaluator()
    screened = []

    def screen(path):
        screened.append(path.name)
        return "static: k spills 512 B per thread at 8x32 (sm_90, not timed)" if "SPILL" in path.read_text() else None

    sources = ["TUNABLES = {'BLOCK_N': 64}\n# SPILL\n# fake: us=10\n", "TUNABLES = {'BLOCK_N': 32}\n# fake: us=90\n"]
    setup = make_setup(tmp_path, NO_PLATEAU)
    result = Loop(setup, Scripted(sources), evaluator, echo=lambda s: None, screen=screen).run()
    assert screened == ["candidate_001.py", "candidate_002.py"]
    assert evaluator.checked == ["start", "candidate_002"]  # the spilling one was never checked
    first, second = result.rows[1], result.rows[2]
    assert first.status == "discarded" and first.description.endswith("; static: k spills 512 B per thread at 8x32 "
                                                                       "(sm_90, not timed)")
    assert first.median_us is None and second.status == "kept"


def test_static_screen_names_a_spilling_kernel_and_passes_an_honest_one():
    screen = StaticScreen(SCALE_ROWS, H200, [{"batch_size": 8, "dim": 32}, {"batch_size": 64, "dim": 1024}], "float32")
    assert screen(candidate("honest_triton")) is None
    reason = screen(SPILLS)
    assert reason.startswith("static: spill_kernel spills ") and "per thread" in reason
    assert reason.endswith("at 8x32 (sm_90, not timed)")


def test_what_cannot_be_compiled_offline_is_left_to_the_check():
    screen = StaticScreen(SCALE_ROWS, H200, [{"batch_size": 8, "dim": 32}], "float32")
    assert screen(candidate("raises")) is None  # the check reports it, with its cause
