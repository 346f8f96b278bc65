"""The search strategy: TUNABLES parsing and rewriting, the proposal sequence, the configuration table,
and one end-to-end CPU run of the loop through the real harness (checks every proposal, keeps nothing)."""

from pathlib import Path

import pytest
from conftest import FIXTURES, PROBLEMS_DIR, SCALE_ROWS, SOLUTIONS_DIR

from harness.loader import import_file
from harness.spec import file_hash
from suite.optimize import tunables
from suite.optimize.search import SearchProposer
from suite.optimize.table_plan import first_steps

TUNABLE = FIXTURES / "optimize" / "scale_rows_tunable.py"
NESTED = '''"""doc"""
import triton
TUNABLES = {
    "gate": {"BLOCK_M": 64, "num_warps": 8},
    "EVEN": True,
}
TUNABLE_CHOICES = {"gate": {"BLOCK_M": [64, 128]}}
def f():
    return TUNABLES["gate"]["BLOCK_M"]
'''


def rejected_all(p: SearchProposer) -> list:
    """Every proposal left, each fed back as not kept."""
    out = []
    while (x := p.propose(None)) is not None:
        out.append(x)
        p.feedback(x, kept=False)
    return out


def test_read_flatten_and_space():
    flat = tunables.flatten(tunables.read(NESTED))
    assert flat == {"gate.BLOCK_M": 64, "gate.num_warps": 8, "EVEN": True}
    assert tunables.unflatten(flat) == tunables.read(NESTED)
    space = tunables.space(NESTED)
    assert space["gate.BLOCK_M"] == [64, 128]  # declared choices win
    assert space["gate.num_warps"] == [1, 2, 4, 8, 16] and space["EVEN"] == [True, False]
    assert tunables.choices("BLOCK_N", 1024) == [256, 512, 1024, 2048, 4096]
    assert tunables.choices("ROWS_PER_PROGRAM", 2) == [1, 2, 4, 8]


def test_replace_keeps_the_rest_of_the_file(tmp_path):
    new = tunables.replace(NESTED, {"gate": {"BLOCK_M": 128, "num_warps": 4}, "EVEN": False},
                           tunables.config_table([("4096x4096 float16", {"gate.BLOCK_M": 128}, 12.5)]))
    assert tunables.read(new) == {"gate": {"BLOCK_M": 128, "num_warps": 4}, "EVEN": False}
    assert "# ksuite optimize: fastest configuration measured per shape class" in new
    assert "#   4096x4096 float16: {'gate.BLOCK_M': 128}  (12.50 us)" in new
    assert new.startswith('"""doc"""\nimport triton\n') and new.endswith('return TUNABLES["gate"]["BLOCK_M"]\n')
    compile(new, "x.py", "exec")
    with pytest.raises(tunables.TunablesError):
        tunables.read("X = 1\n")


def test_a_step_on_a_tunable_a_switch_decides_turns_the_switch_off():
    """TUNABLE_OVERRIDES: while WAVE_PICK is on it picks the tile, so BLOCK_N steps (and seeds) turn it off;
    steps on other tunables, and on the switch itself, leave it as it is."""
    source = ('TUNABLES = {"BLOCK_N": 128, "SPLIT_K": 1, "WAVE_PICK": True}\n'
              'TUNABLE_CHOICES = {"BLOCK_N": [64, 128], "SPLIT_K": [1, 2], "WAVE_PICK": [False, True]}\n'
              'TUNABLE_SEEDS = [{"BLOCK_N": 64, "SPLIT_K": 2}]\n'
              'TUNABLE_OVERRIDES = {"WAVE_PICK": ["BLOCK_N"]}\n')
    assert tunables.overrides(source) == {"WAVE_PICK": ["BLOCK_N"]}
    p = SearchProposer(source, seed=0, restarts=0)
    configs = [x.config for x in rejected_all(p)]
    assert configs == [{"BLOCK_N": 64, "SPLIT_K": 2, "WAVE_PICK": False},  # the seed
                       {"BLOCK_N": 128, "SPLIT_K": 1, "WAVE_PICK": False},  # the switch: first in its ring
                       {"BLOCK_N": 64, "SPLIT_K": 1, "WAVE_PICK": False},
                       {"BLOCK_N": 128, "SPLIT_K": 2, "WAVE_PICK": True}]
    named = SearchProposer(source.replace('"SPLIT_K": 2}]', '"SPLIT_K": 2, "WAVE_PICK": True}]'), restarts=0)
    assert named.propose(None).config == {"BLOCK_N": 64, "SPLIT_K": 2, "WAVE_PICK": True}  # the seed says so
    with pytest.raises(tunables.TunablesError):
        tunables.overrides('TUNABLE_OVERRIDES = {"WAVE_PICK": "BLOCK_N"}\n')


WITH_OVERRIDES = sorted(p for p in SOLUTIONS_DIR.glob("*/*.py") if "TUNABLE_OVERRIDES" in p.read_text())


@pytest.mark.parametrize("path", WITH_OVERRIDES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_solution_overrides_name_searchable_tunables(path):
    """A switch or a tunable misspelled in a solution's TUNABLE_OVERRIDES would leave its steps no-ops again."""
    source = path.read_text()
    space = tunables.space(source)
    for switch, decided in tunables.overrides(source).items():
        assert switch in space and False in space[switch], switch
        assert set(decided) <= set(space), decided


def test_coordinate_descent_sequence_moves_with_each_keep():
    source = 'TUNABLES = {"BLOCK_N": 64, "num_warps": 4}\n'
    p = SearchProposer(source, seed=1, restarts=1)
    first = [p.propose(None) for _ in range(2)]
    # nearest first, larger first on a tie
    assert [x.config for x in first] == [{"BLOCK_N": 128, "num_warps": 4}, {"BLOCK_N": 32, "num_warps": 4}]
    p.feedback(first[1], kept=True)  # BLOCK_N 32 is the new best: the rest of the pass builds on it
    rest = [x.config for x in rejected_all(p)]
    # a new pass around the new best, nearest first: BLOCK_N 16 (64 was the start), then num_warps either side
    assert rest[:3] == [{"BLOCK_N": 16, "num_warps": 4}, {"BLOCK_N": 32, "num_warps": 8},
                        {"BLOCK_N": 32, "num_warps": 2}]
    assert {"BLOCK_N": 256, "num_warps": 4} in rest
    frozen = [tuple(sorted(c.items())) for c in rest + [x.config for x in first]]
    assert len(frozen) == len(set(frozen))  # nothing twice
    assert "BLOCK_N 64->128" in first[0].description
    assert tunables.read(first[0].source) == {"BLOCK_N": 128, "num_warps": 4}


def test_random_restart_after_a_pass_without_keeps():
    source = 'TUNABLES = {"BLOCK_N": 64, "num_warps": 4}\n'
    p = SearchProposer(source, seed=0, restarts=1)
    seen = [x.config for x in rejected_all(p)]
    single_changes = 4 + 4  # BLOCK_N: 16, 32, 128, 256; num_warps: 1, 2, 8, 16
    paired_changes = 4  # BLOCK_N with num_warps scaled alike: 16/1, 32/2, 128/8, 256/16
    assert len(seen) == single_changes + paired_changes + 1
    restart = seen[-1]
    assert restart["BLOCK_N"] != 64 and restart["num_warps"] != 4  # a point no single change reaches


def test_loop_end_to_end_on_cpu_checks_every_proposal_and_keeps_nothing(tmp_path, results_root):
    from suite.optimize.command import Settings, run_problems
    from suite.optimize.ledger import Ledger
    from suite.optimize.stopping import Limits
    from suite.registry import Registry

    registry = Registry(solutions_dir=tmp_path / "solutions")
    lines = []
    (result,) = run_problems((str(SCALE_ROWS),), Settings(start=str(TUNABLE), limits=Limits(plateau=2)), registry,
                             echo=lines.append)
    assert result.untimed and result.kept == 0 and "plateau" in result.reason
    assert any("nothing can be timed" in line for line in lines)
    ledgers = list((results_root / "cpu-interpreter" / "optimize").glob("scale_rows-*.tsv"))
    rows = Ledger(ledgers[0]).rows()
    assert [r.status for r in rows] == ["kept", "discarded", "discarded"]
    assert rows[0].description.startswith("start") and all(r.correct for r in rows)
    assert all("untimed" in r.description and r.median_us is None for r in rows[1:])
    assert not (tmp_path / "solutions").exists()  # nothing kept on untimed data
    assert not list(results_root.rglob("*.py"))  # results/ holds data only: the candidates are in the cache
    candidates = sorted((tmp_path / "cache" / "optimize" / "cpu-interpreter" / ledgers[0].stem).glob("candidate_*.py"))
    assert len(candidates) == 2 and all(tunables.read(c.read_text()) for c in candidates)
    assert [r.source_hash for r in rows[1:]] == [file_hash(c) for c in candidates]  # the ledger names each one


class TunedEvaluator:
    """Times a candidate by its TUNABLES: BLOCK_N 64 with 8 warps is the optimum (a GPU in a formula)."""

    timed = True

    def check(self, sol):
        from suite.optimize.evaluator import CheckOutcome

        return CheckOutcome("ok")

    def us(self, path):
        t = tunables.read(Path(path).read_text())
        return 10.0 * (1 + abs(t["BLOCK_N"] - 64) / 64) * (1 + abs(t["num_warps"] - 8) / 8)

    def time_pair(self, best, cand):
        from harness.records import Measurement
        from suite.optimize.evaluator import PairOutcome

        def m(sol):
            return Measurement("p", sol.name, "solution", {"batch_size": 32, "dim": 128}, "float32", True,
                               median_us=self.us(sol.path), iqr_us=0.01)
        return PairOutcome("ok", [m(best)], [m(cand)])

    def baselines(self):
        return []


def test_search_finds_the_optimum_and_writes_the_configuration_table(tmp_path):
    from harness import ProblemRef, SolutionRef
    from suite.optimize.ledger import Ledger
    from suite.optimize.loop import Loop, LoopSetup
    from suite.optimize.stopping import Limits

    setup = LoopSetup(ProblemRef("scale_rows", SCALE_ROWS), SolutionRef("tunable", TUNABLE),
                      tmp_path / "solutions" / "scale_rows" / "tunable_opt.py", tmp_path / "work",
                      Ledger(tmp_path / "l.tsv"), "search", Limits(plateau=None), "run1", "NVIDIA H200")
    result = Loop(setup, SearchProposer(TUNABLE.read_text(), seed=0), TunedEvaluator(), echo=lambda s: None).run()
    kept = setup.kept_path.read_text()
    assert result.kept >= 2 and tunables.read(kept) == {"BLOCK_N": 64, "num_warps": 8}
    assert "#   32x128 float32: {'BLOCK_N': 64, 'num_warps': 8}  (10.00 us)" in kept
    assert "def scale_rows(" in kept and kept.startswith("# ksuite optimize: kept")
    compile(kept, "kept.py", "exec")


def test_a_tile_change_is_also_tried_with_warps_scaled_alike():
    source = ('TUNABLES = {"BLOCK_M": 128, "BLOCK_K": 32, "num_warps": 4}\n'
              'TUNABLE_CHOICES = {"BLOCK_M": [64, 128, 256], "BLOCK_K": [32, 64], "num_warps": [2, 4, 8]}\n')
    p = SearchProposer(source, restarts=0)
    configs = [x.config for x in rejected_all(p)]
    # first ring: each tunable's nearest changes (BLOCK_K is a reduction depth, not a tile: no paired change)
    assert configs[:5] == [{"BLOCK_M": 256, "BLOCK_K": 32, "num_warps": 4},
                           {"BLOCK_M": 64, "BLOCK_K": 32, "num_warps": 4},
                           {"BLOCK_M": 128, "BLOCK_K": 64, "num_warps": 4},
                           {"BLOCK_M": 128, "BLOCK_K": 32, "num_warps": 8},
                           {"BLOCK_M": 128, "BLOCK_K": 32, "num_warps": 2}]
    # second ring: BLOCK_M's changes again with warps scaled alike (256 at 8 warps, 64 at 2)
    assert configs[5:] == [{"BLOCK_M": 256, "BLOCK_K": 32, "num_warps": 8},
                           {"BLOCK_M": 64, "BLOCK_K": 32, "num_warps": 2}]
    assert len(configs) == len({tuple(sorted(c.items())) for c in configs})  # each configuration once


def test_a_capped_search_reaches_every_tunable_s_nearest_steps_first():
    """rmsnorm's search of 2026-12-04 ran 12 experiments a bucket and spent them all on num_warps and BLOCK_M
    (their far values 0.44-0.83x); a pass in rings tries every tunable's nearest values within that cap."""
    source = ('TUNABLES = {"num_warps": 8, "BLOCK_M": 1, "ONE_PASS": True, "HINTS": True, "BLOCK_N": 4096}\n'
              'TUNABLE_CHOICES = {"num_warps": [1, 2, 4, 8, 16, 32], "BLOCK_M": [1, 2, 4, 8, 16], '
              '"ONE_PASS": [True, False], "HINTS": [True, False], "BLOCK_N": [512, 1024, 2048, 4096]}\n'
              'TUNABLE_OVERRIDES = {"ONE_PASS": ["BLOCK_N"]}\n')
    first = first_steps(source, {}, 8)
    assert first == ["ONE_PASS True->False", "num_warps 8->16", "num_warps 8->4", "BLOCK_M 1->2",
                     "HINTS True->False", "ONE_PASS True->False, BLOCK_N 4096->2048",
                     "num_warps 8->32", "num_warps 8->2"]


def test_a_family_s_forms_come_first_in_a_capped_search():
    """Rotary's CHUNKS (the form for head_dim 96's 48-column halves) was never reached in four searches of
    6-12 steps a bucket: the forms (TUNABLE_OVERRIDES' switches) now open every pass, right after the seeds."""
    path = SOLUTIONS_DIR / "rotary" / "triton_family.py"
    seeds = len(import_file(path, "ksuite_test_capped_rotary").TUNABLE_SEEDS)
    first = first_steps(path.read_text(), {}, seeds + 2)
    assert set(first[seeds:]) == {"FLAT False->True", "CHUNKS False->True"}, first


def test_a_keep_starts_the_pass_again_around_the_new_best_and_seeds_stay_first():
    source = ('TUNABLES = {"BLOCK_N": 64, "num_warps": 4, "EVEN": True}\n'
              'TUNABLE_SEEDS = [{"BLOCK_N": 256, "num_warps": 8}, {"EVEN": False, "num_warps": 2}]\n')
    p = SearchProposer(source, restarts=0)
    seed = p.propose(None)
    assert seed.config == {"BLOCK_N": 256, "num_warps": 8, "EVEN": True}
    p.feedback(seed, kept=True)
    # the other seed next, over the kept one: what it does not name (BLOCK_N) stays as kept, not as it started
    assert p.propose(None).config == {"BLOCK_N": 256, "num_warps": 2, "EVEN": False}
    after = p.propose(None)
    assert after.description == "search: BLOCK_N 256->128"  # the pass around the kept seed, nearest first


def test_a_seed_left_after_a_keep_does_not_undo_it():
    """rmsnorm's H100 search, 2026-12-06: HINTS off was kept, and each later seed (none names HINTS) came back with
    HINTS on. A seed made again over the new best keeps the kept change."""
    source = ('TUNABLES = {"HINTS": True, "num_warps": 8, "BLOCK_M": 1}\n'
              'TUNABLE_CHOICES = {"HINTS": [True, False], "num_warps": [8, 16], "BLOCK_M": [1, 2]}\n'
              'TUNABLE_SEEDS = [{"HINTS": False}, {"HINTS": False, "num_warps": 16},'
              ' {"num_warps": 16, "BLOCK_M": 2}]\n')
    p = SearchProposer(source, restarts=0)
    first = p.propose(None)
    p.feedback(first, kept=True)
    left = [p.propose(None).config for _ in range(2)]
    assert left == [{"HINTS": False, "num_warps": 16, "BLOCK_M": 1}, {"HINTS": False, "num_warps": 16, "BLOCK_M": 2}]


def test_nested_tunables_pair_with_their_own_warps():
    source = ('TUNABLES = {"gate": {"BLOCK_N": 128, "num_warps": 4}, "down": {"BLOCK_N": 128, "num_warps": 4}}\n'
              'TUNABLE_CHOICES = {"gate": {"BLOCK_N": [128, 256], "num_warps": [4, 8]}, '
              '"down": {"BLOCK_N": [128], "num_warps": [4]}}\n')
    p = SearchProposer(source, restarts=0)
    configs = [x.config for x in rejected_all(p)]
    assert configs == [{"gate.BLOCK_N": 256, "gate.num_warps": 4, "down.BLOCK_N": 128, "down.num_warps": 4},
                       {"gate.BLOCK_N": 128, "gate.num_warps": 8, "down.BLOCK_N": 128, "down.num_warps": 4},
                       {"gate.BLOCK_N": 256, "gate.num_warps": 8, "down.BLOCK_N": 128, "down.num_warps": 4}]


def test_seeds_are_proposed_first_as_whole_configurations():
    seeded = NESTED + 'TUNABLE_SEEDS = [{"gate": {"BLOCK_M": 128, "num_warps": 16}, "EVEN": False}, {"EVEN": True}]\n'
    proposer = SearchProposer(seeded, seed=0)
    first = proposer.propose(None)
    assert first.config == {"gate.BLOCK_M": 128, "gate.num_warps": 16, "EVEN": False}  # three changes at once
    second = proposer.propose(None)  # the second seed is the start itself: not proposed; coordinates follow
    assert sum(second.config[k] != v for k, v in tunables.flatten(tunables.read(NESTED)).items()) == 1


def test_malformed_seeds_are_refused():
    with pytest.raises(tunables.TunablesError, match="TUNABLE_SEEDS is not a list of dicts"):
        tunables.seeds(NESTED + "TUNABLE_SEEDS = {'EVEN': True}\n")


def test_a_value_that_is_no_size_is_one_step_from_any_other():
    """matmul's SPLIT_K 0 lets its rule pick the split: as near as SPLIT_K 2 to SPLIT_K 1, not before it or last."""
    source = ('TUNABLES = {"SPLIT_K": 1, "FLAG": True}\n'
              'TUNABLE_CHOICES = {"SPLIT_K": [0, 1, 2, 4, 8], "FLAG": [True, False]}\n')
    p = SearchProposer(source, restarts=0)
    order = [x.description.removeprefix("search: ") for x in rejected_all(p)]
    assert order == ["SPLIT_K 1->2", "SPLIT_K 1->0", "FLAG True->False", "SPLIT_K 1->4", "SPLIT_K 1->8"]


def test_plan_shows_a_table_search_s_shapes_and_first_steps_without_a_gpu():
    """`ksuite optimize rotary --from triton_family --plan`: the head_dim 96 bucket of 1025-8192 positions is timed
    at its tuning shape and its edge probe, from its committed entry, and the family's first seed that changes
    that entry is its first step; nothing is timed. The entry is read from the file, since searches rewrite it."""
    from click.testing import CliRunner

    from suite.cli import cli

    bucket = "head_dim<=96,seq_len<=8192,num_heads>16"
    family = import_file(SOLUTIONS_DIR / "rotary" / "triton_family.py", "ksuite_test_plan_rotary")
    entry = family.DISPATCH.get(bucket, {})
    current = {**family.TUNABLES, **entry}
    seed = next(seed for seed in family.TUNABLE_SEEDS if any(current[k] != v for k, v in seed.items()))
    first_step = ", ".join(f"{k} {current[k]}->{seed[k]}" for k in family.TUNABLES
                           if k in seed and current[k] != seed[k])
    result = CliRunner().invoke(cli, ["optimize", "rotary", "--from", "triton_family", "--plan", "--per-bucket", "3",
                                      "--bucket", bucket])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("rotary: 1 of 32 buckets searched") and "nothing timed" in lines[0]
    assert lines[1] == f"[{bucket}] entry {entry or 'TUNABLES'}"
    assert lines[2] == ("  shapes: batch_size=1,head_dim=96,num_heads=32,seq_len=3001 (tuning), "
                        "batch_size=1,head_dim=96,num_heads=32,seq_len=6144 (edge probe)")
    assert lines[3].startswith(f"  steps: {first_step}; ") and lines[3].count(";") == 2
    starter = CliRunner().invoke(cli, ["optimize", "rotary", "--plan"])
    assert starter.exit_code == 2 and "is not a family file with BUCKETS" in starter.output
    typo = CliRunner().invoke(cli, ["optimize", "rotary", "--from", "triton_family", "--plan", "--bucket", bucket,
                                    "--bucket", "headdim<=96*"])  # a typo plans nothing: an error, not a count of 0
    assert typo.exit_code == 2
    assert "triton_family.py: --bucket 'headdim<=96*' matches none of its buckets" in typo.output


def test_the_plan_starts_from_the_table_the_named_gpu_runs():
    """`--plan --plan-gpu SLUG` shows each entry as a search on that GPU would start from it: its own table where
    the file has one (here an H100 table with one changed bucket), DISPATCH for a GPU without one."""
    from suite.optimize import dispatch
    from suite.optimize.table_plan import plan_lines

    source = (SOLUTIONS_DIR / "rmsnorm" / "triton_family.py").read_text()
    bucket = "dim<=4096,batch_size>8192"
    h100 = {**dispatch.read_table(source), bucket: {"num_warps": 2}}
    written = dispatch.write_table(source, h100, "# an H100 table\n", gpu="nvidia-h100-80gb-hbm3")
    problem = PROBLEMS_DIR / "rmsnorm.py"
    own = plan_lines(problem, written, 1, (bucket,), gpu="nvidia-h100-80gb-hbm3")
    assert own[0].endswith("entries from DISPATCH_BY_GPU['nvidia-h100-80gb-hbm3']")
    assert own[1] == f"[{bucket}] entry {{'num_warps': 2}}"
    home = plan_lines(problem, written, 1, (bucket,), gpu="nvidia-a100")
    assert home[0].endswith("entries from DISPATCH") and home[1] != own[1]
