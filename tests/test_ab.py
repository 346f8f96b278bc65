"""ksuite ab (suite/ab.py, suite/ab_cli.py): B against A in paired rounds, its verdicts from synthetic rounds, the
home-table copy, and the command on the CPU (both checked, a wrong side named, nothing timed)."""

import importlib.util
import random
import textwrap

from click.testing import CliRunner
from conftest import SCALE_ROWS, candidate

from suite.ab import (
    NoTablesError,
    compare_all,
    compare_shape,
    fresh_copy,
    home_table_copy,
    own_table_gpus,
    with_second_draw,
)
from suite.cli import cli

SHAPE = {"rows": 7, "cols": 1600}


def rounds(us: float, noise: float, n: int = 15, seed: int = 1) -> list[float]:
    rng = random.Random(seed)
    return [us * (1 + rng.uniform(-noise, noise)) for _ in range(n)]


def test_a_clear_win_of_b_a_clear_loss_and_a_noisy_tie():
    a = rounds(10.0, 0.01)
    win = compare_shape(SHAPE, "float16", a, rounds(9.5, 0.01, seed=2))
    assert win.verdict == "B faster" and 1.03 < win.speedup < 1.08 and win.low > 1 and win.rounds == 15
    loss = compare_shape(SHAPE, "float16", a, rounds(10.6, 0.01, seed=3))
    assert loss.verdict == "A faster" and loss.high < 1
    noisy = rounds(10.0, 0.05, seed=4)
    tie = compare_shape(SHAPE, "float16", noisy, noisy[::-1])  # the same times in another order: a mean of 1
    assert tie.verdict == "tie" and tie.low < 1 < tie.high


def test_a_wrong_side_and_an_untimed_shape_have_no_interval():
    wrong = compare_shape(SHAPE, "float16", [], [], error="B wrong: output 0: 3 of 9 elements outside")
    assert wrong.verdict == "failed" and wrong.speedup is None
    untimed = compare_shape(SHAPE, "float16", [], [])
    assert untimed.verdict == "untimed" and untimed.speedup is None
    assert compare_shape(SHAPE, "float16", [1.0, 1.0], [1.0, 1.0]).verdict == "untimed"  # two rounds: no interval


def test_the_whole_set_takes_each_rounds_mean_over_the_shapes():
    a1, b1 = rounds(10.0, 0.005), rounds(9.0, 0.005, seed=2)  # B 1.11x
    a2, b2 = rounds(4.0, 0.005, seed=3), rounds(4.0, 0.005, seed=4)  # a tie
    overall = compare_all([(a1, b1), (a2, b2)])
    assert 1.04 < overall.speedup < 1.07  # the geometric mean of about 1.11 and 1.0
    assert overall.verdict == "B faster" and overall.rounds == 15
    assert compare_all([]).verdict == "untimed"


def test_a_verdict_needs_the_second_draw_on_the_same_side():
    """Two copies of one file differed by 2-6 % at shapes of a few microseconds (H100), a draw every round of one
    comparison shares: asked again of fresh copies of both, a win stands only if the second answer is a win too."""
    a = rounds(6.0, 0.01)
    win = compare_shape(SHAPE, "float32", a, rounds(6.0 / 1.03, 0.01, seed=2))
    assert win.verdict == "B faster"
    confirmed = with_second_draw(win, compare_shape(SHAPE, "float32", a, rounds(6.0 / 1.025, 0.01, seed=3)))
    assert confirmed.verdict == "B faster" and confirmed.again_low > 1
    undone = with_second_draw(win, compare_shape(SHAPE, "float32", a, a[::-1]))  # the second draw: a tie
    assert undone.verdict == "tie" and undone.again_low < 1 < undone.again_high
    flipped = with_second_draw(win, compare_shape(SHAPE, "float32", a, rounds(6.3, 0.01, seed=4)))
    assert flipped.verdict == "tie"  # one draw each way is no verdict
    loss = compare_shape(SHAPE, "float32", a, rounds(6.6, 0.01, seed=5))
    assert with_second_draw(loss, compare_shape(SHAPE, "float32", a, rounds(6.5, 0.01, seed=6))).verdict \
        == "A faster"
    untimed = with_second_draw(win, compare_shape(SHAPE, "float32", [], []))
    assert untimed.verdict == "B faster" and untimed.again_low is None
    failed = with_second_draw(win, compare_shape(SHAPE, "float32", [], [], error="B wrong: output 0: 3 elements"))
    assert failed.verdict == "failed" and failed.error == "fresh copies: B wrong: output 0: 3 elements"


def test_a_fresh_copy_is_the_same_source_under_another_name(tmp_path):
    source = tmp_path / "family.py"
    source.write_text(FAMILY)
    folder = tmp_path / "out"
    folder.mkdir()
    a, b = fresh_copy(source, folder, "a"), fresh_copy(source, folder, "b")
    assert a.read_text() == b.read_text() == FAMILY and len({a.stem, b.stem, source.stem}) == 3
    assert a.parent == folder


FAMILY = textwrap.dedent("""\
    import functools

    DISPATCH = {"rows<=8": {"BLOCK": 64}}
    DISPATCH_GPU = "nvidia-h200"
    DISPATCH_BY_GPU = {"this-gpu": {"rows<=8": {"BLOCK": 128}}}


    @functools.cache
    def this_gpu():
        return "this-gpu"


    def dispatch_table():
        return DISPATCH_BY_GPU.get(this_gpu(), DISPATCH)
    """)


def _import(path):
    spec = importlib.util.spec_from_file_location(f"ab_test_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_home_table_copy_runs_the_home_table_and_leaves_the_file_alone(tmp_path):
    family = tmp_path / "triton_family.py"
    family.write_text(FAMILY)
    copy = home_table_copy(family, tmp_path / "..")
    assert copy.name == "triton_family_home_table.py" and family.read_text() == FAMILY
    assert _import(family).dispatch_table() == {"rows<=8": {"BLOCK": 128}}  # this GPU's own
    assert _import(copy).dispatch_table() == {"rows<=8": {"BLOCK": 64}}  # the home table
    assert own_table_gpus(family) == {"this-gpu"}
    plain = tmp_path / "plain.py"
    plain.write_text("x = 1\n")
    try:
        home_table_copy(plain, tmp_path)
        raise AssertionError("a file without per-GPU tables has no home table")
    except NoTablesError as exc:
        assert "plain.py: --home-table: the file keeps no per-GPU dispatch tables" in str(exc)
    assert own_table_gpus(plain) == set()


def test_home_table_is_refused_on_a_gpu_the_family_has_no_table_of_its_own_for(monkeypatch):
    from suite import commands

    monkeypatch.setattr(commands, "cuda_available", lambda: True)
    monkeypatch.setattr(commands, "ensure_calibration", lambda: {"copy_bandwidth_Bps": 1.0, "matmul_flops": 1.0})
    monkeypatch.setattr(commands, "device_slug", lambda: "nvidia-h200")  # the home GPU: no table of its own
    out = CliRunner().invoke(cli, ["ab", "swiglu_act", "triton_family", "--home-table"])
    assert out.exit_code == 2
    assert "no table of its own for nvidia-h200, so it already runs its home table here" in out.output


def test_the_command_checks_both_sides_on_cpu_and_names_a_wrong_one(tmp_path):
    twin = tmp_path / "twin.py"
    twin.write_text(candidate("honest_triton").read_text())
    ok = CliRunner().invoke(cli, ["ab", str(SCALE_ROWS), str(candidate("honest_triton")), str(twin),
                                  "--dtype", "float32", "--shape", "batch_size=8,dim=32"])
    assert ok.exit_code == 0, ok.output
    assert "8x32     float32" in ok.output and "untimed" in ok.output
    assert "no CUDA device: both checked, nothing timed" in ok.output
    twice = CliRunner().invoke(cli, ["ab", str(SCALE_ROWS), str(candidate("honest_triton")), str(twin),
                                     "--dtype", "float32", "--shape", "batch_size=8,dim=32", "--again"])
    assert twice.exit_code == 0, twice.output
    assert "fresh copies" in twice.output and "each asked again of fresh copies of both" in twice.output
    wrong = CliRunner().invoke(cli, ["ab", str(SCALE_ROWS), str(candidate("honest_triton")), str(candidate("raises")),
                                     "--dtype", "float32", "--shape", "batch_size=8,dim=32"])
    assert wrong.exit_code == 1, wrong.output
    assert "B wrong:" in wrong.output and "failed: 1" in wrong.output
    wrong_a = CliRunner().invoke(cli, ["ab", str(SCALE_ROWS), str(candidate("raises")), str(twin),
                                       "--dtype", "float32", "--shape", "batch_size=8,dim=32"])
    assert wrong_a.exit_code == 1 and "A wrong:" in wrong_a.output and "B wrong" not in wrong_a.output


def test_a_hang_is_a_failed_pair_and_the_next_pair_still_runs():
    out = CliRunner().invoke(cli, ["ab", str(SCALE_ROWS), str(candidate("hangs")), str(candidate("honest_triton")),
                                   "--dtype", "float32", "--shape", "batch_size=8,dim=32", "--shape",
                                   "batch_size=5,dim=48", "--timeout", "12"])
    assert out.exit_code == 1, out.output
    # each pair twice: its progress line as it ends and its row of the table
    assert out.output.count("timed-out: timed out after 12 s") == 4 and "failed: 2" in out.output


def test_the_command_refuses_what_it_cannot_compare():
    same = CliRunner().invoke(cli, ["ab", str(SCALE_ROWS), str(candidate("honest_triton")),
                                    str(candidate("honest_triton"))])
    assert same.exit_code == 2 and "A and B are the same file" in same.output
    alone = CliRunner().invoke(cli, ["ab", str(SCALE_ROWS), str(candidate("honest_triton"))])
    assert alone.exit_code == 2 and "name B, or pass --home-table" in alone.output
    no_tables = CliRunner().invoke(cli, ["ab", str(SCALE_ROWS), str(candidate("honest_triton")), "--home-table"])
    assert no_tables.exit_code == 2 and "keeps no per-GPU dispatch tables" in no_tables.output
    rounds_few = CliRunner().invoke(cli, ["ab", str(SCALE_ROWS), str(candidate("honest_triton")),
                                          str(candidate("raises")), "--rounds", "2"])
    assert rounds_few.exit_code == 2 and "at least 3 rounds" in rounds_few.output
