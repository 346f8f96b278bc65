"""The per-bucket table search on a fake session: wins are kept per bucket, a noisy bucket blocks nothing
else, untuned buckets are filled, every experiment is a ledger row with its bucket and rate."""

import random
from pathlib import Path

from harness.jobs.tuning_session import PairedShape, SessionAnswer
from suite.optimize import dispatch
from suite.optimize.ledger import Ledger
from suite.optimize.table import TableSearch, TableSetup

FAMILY = '''"""A stand-in family: only its literals matter to the search."""
TUNABLES = {"BLOCK": 1, "num_warps": 4}
TUNABLE_CHOICES = {"BLOCK": [1, 2, 4, 8], "num_warps": [4, 8]}
BUCKETS = {"dim": [1024], "batch_size": [64]}
DISPATCH = {}
'''
CLEAR = {"dim": 512, "batch_size": 8}  # bucket dim<=1024,batch_size<=64: BLOCK 8 is 20 % faster
NOISY = {"dim": 4096, "batch_size": 8}  # bucket dim>1024,batch_size<=64: every config the same, 5 % noise


class FakeSession:
    def __init__(self, fail_path_word: str | None = None):
        self.rng = random.Random(0)
        self.requests = 0

    def true_us(self, path: Path, shape: dict) -> float:
        _, config = dispatch.config_for(Path(path).read_text(), shape)
        if shape == CLEAR:
            return 10.0 * (0.8 if config["BLOCK"] == 8 else 1.0)
        return 50.0

    def compare(self, best, candidate, shapes, dtypes, rounds, timeout_s):
        self.requests += 1
        out = []
        for shape in shapes:
            for dtype in dtypes:
                noise = 0.05 if shape == NOISY else 0.005
                b = [self.true_us(best, shape) * (1 + self.rng.gauss(0, noise)) for _ in range(rounds)]
                c = [self.true_us(candidate, shape) * (1 + self.rng.gauss(0, noise)) for _ in range(rounds)]
                out.append(PairedShape(shape, dtype, True, None, b, c))
        return SessionAnswer("ok", out)

    def close(self):
        pass


def setup_in(tmp_path: Path, **kw) -> TableSetup:
    start = tmp_path / "family.py"
    start.write_text(FAMILY)
    return TableSetup(tmp_path / "p.py", start, start, tmp_path / "work", Ledger(tmp_path / "ledger.tsv"),
                      [CLEAR, NOISY], ["float16"], rounds=15, per_bucket=8, run_id="r1", gpu="H200", **kw)


def test_a_clear_win_is_kept_and_a_noisy_bucket_blocks_nothing(tmp_path):
    setup = setup_in(tmp_path)
    result = TableSearch(setup, FakeSession(), echo=lambda line: None, full_check=lambda p: None).run()
    table = dispatch.read_configs(setup.kept.read_text())
    assert table["dim<=1024,batch_size<=64"]["BLOCK"] == 8
    assert table["dim>1024,batch_size<=64"] == {"BLOCK": 1, "num_warps": 4}  # nothing beat the start there
    assert set(table) == set(dispatch.all_buckets(dispatch.read_buckets(FAMILY)))  # every bucket filled
    assert table["dim<=1024,batch_size>64"]["BLOCK"] == 8  # copied from its nearest tuned bucket
    assert result.kept >= 1 and "dim<=1024,batch_size<=64" in result.gains
    rows = setup.ledger.rows()
    assert rows[0].description.startswith("start")
    assert {r.bucket for r in rows[1:]} == {"dim<=1024,batch_size<=64", "dim>1024,batch_size<=64"}
    assert all(r.per_min is not None and r.per_min > 0 for r in rows[1:])


def test_a_tuned_file_failing_the_full_check_puts_the_start_back(tmp_path):
    setup = setup_in(tmp_path)
    result = TableSearch(setup, FakeSession(), echo=lambda line: None,
                         full_check=lambda p: "edge: wrong at 1x1").run()
    assert setup.kept.read_text() == FAMILY
    assert result.kept == 0 and "fails the full check" in result.reason


def test_the_budget_stops_the_search(tmp_path):
    clock = iter(range(0, 10_000, 100)).__next__  # 100 s per call of the clock
    setup = setup_in(tmp_path, budget_s=250)
    result = TableSearch(setup, FakeSession(), clock=clock, echo=lambda line: None, full_check=lambda p: None).run()
    assert result.experiments <= 2 and "budget" in result.reason


def test_an_incorrect_or_crashed_candidate_is_a_row_not_a_keep(tmp_path):
    class Broken(FakeSession):
        def compare(self, best, candidate, shapes, dtypes, rounds, timeout_s):
            if Path(best) == Path(candidate):
                return super().compare(best, candidate, shapes, dtypes, rounds, timeout_s)
            self.requests += 1
            if self.requests % 2:
                return SessionAnswer("crashed", message="crashed: killed by SIGSEGV")
            return SessionAnswer("ok", [PairedShape(s, d, False, "output 0: 3 of 9 elements outside")
                                        for s in shapes for d in dtypes])
    setup = setup_in(tmp_path)
    result = TableSearch(setup, Broken(), echo=lambda line: None, full_check=lambda p: None).run()
    statuses = {r.status for r in setup.ledger.rows()[1:]}
    assert statuses == {"crashed", "discarded"} and result.kept == 0
    assert setup.kept.read_text() == FAMILY


def test_a_candidate_running_the_best_s_own_kernels_is_a_row_not_an_experiment(tmp_path):
    """num_warps is a no-op in this stand-in (the session says the candidate launches what the best does): its
    steps are ledger rows saying why they were not timed, they do not count against the bucket's experiments,
    and the clear win is still found."""
    class NoOpWarps(FakeSession):
        def __init__(self):
            super().__init__()
            self.timed = []

        def same_launches(self, best, candidate, shapes, dtypes, timeout_s):
            configs = [[dispatch.config_for(Path(p).read_text(), s)[1] for s in shapes] for p in (best, candidate)]
            drop = [[{k: v for k, v in c.items() if k != "num_warps"} for c in cs] for cs in configs]
            return "the same 1 launch" if drop[0] == drop[1] else None

        def compare(self, best, candidate, shapes, dtypes, rounds, timeout_s):
            self.timed.append(Path(candidate).read_text())
            return super().compare(best, candidate, shapes, dtypes, rounds, timeout_s)
    setup = setup_in(tmp_path)
    session = NoOpWarps()
    result = TableSearch(setup, session, echo=lambda line: None, full_check=lambda p: None).run()
    assert dispatch.read_configs(setup.kept.read_text())["dim<=1024,batch_size<=64"]["BLOCK"] == 8
    skipped = [r for r in setup.ledger.rows()[1:] if "not timed" in r.description]
    assert skipped and result.same == len(skipped)
    assert all(r.status == "discarded" and r.median_us is None and "num_warps" in r.description for r in skipped)
    timed = [r for r in setup.ledger.rows()[1:] if "not timed" not in r.description]
    # the start's self-comparison is not an experiment, and each kept change is timed once more as fresh copies
    assert result.experiments == len(timed) == len(session.timed) - 1 - result.kept


def test_a_short_budget_still_reaches_every_bucket(tmp_path):
    """Buckets take turns (a few experiments each), so the budget cannot be spent on the first ones only."""
    third = {"dim": 512, "batch_size": 100}  # a third bucket: dim<=1024,batch_size>64
    session = FakeSession()
    setup = setup_in(tmp_path, budget_s=95)
    setup.shapes = [CLEAR, NOISY, third]
    TableSearch(setup, session, clock=lambda: session.requests * 10.0, echo=lambda line: None,
                full_check=lambda p: None).run()
    searched = {r.bucket for r in setup.ledger.rows()[1:]}
    assert searched == {"dim<=1024,batch_size<=64", "dim>1024,batch_size<=64", "dim<=1024,batch_size>64"}
    assert len(setup.ledger.rows()) - 1 <= 9


class BlockSession(FakeSession):
    """BLOCK 8 is 20 % faster at every shape."""

    def true_us(self, path: Path, shape: dict) -> float:
        return 10.0 * (0.8 if dispatch.config_for(Path(path).read_text(), shape)[1]["BLOCK"] == 8 else 1.0)


def family_in_registry(tmp_path: Path):
    """(registry, problem, family file): the stand-in family as scale_rows' triton_family in a tmp solutions folder."""
    from conftest import SCALE_ROWS

    from suite.registry import Registry

    registry = Registry(solutions_dir=tmp_path / "solutions")
    problem = registry.problem(str(SCALE_ROWS))
    family = tmp_path / "solutions" / problem.name / "triton_family.py"
    family.parent.mkdir(parents=True)
    family.write_text(FAMILY)
    return registry, problem, family


def test_the_command_keeps_its_ledger_in_results_and_its_candidates_in_the_cache(tmp_path, results_root):
    from harness import SolutionRef
    from harness.spec import file_hash
    from suite.optimize.command import Settings, ledger_path, work_dir
    from suite.optimize.table_command import run_table

    registry, problem, family = family_in_registry(tmp_path)
    ledger, work = ledger_path("h200", problem.name, "r1"), work_dir("h200", problem.name, "r1")
    lines = []
    result = run_table(problem, SolutionRef("triton_family", family), Settings(per_bucket=8), registry, ledger, work,
                       "r1", {"gpu": "H200"}, echo=lines.append, session_factory=lambda p, o: BlockSession(),
                       full_check=lambda p: None)
    assert result.kept >= 1 and result.best.path == family  # the kept file is the solution file itself
    assert "this GPU's table: DISPATCH;" in lines[0] and lines[-1].endswith("(DISPATCH)")  # said before and after
    assert dispatch.read_configs(family.read_text())["dim<=1024,batch_size<=64"]["BLOCK"] == 8
    assert ledger.is_relative_to(results_root) and work.is_relative_to(tmp_path / "cache")
    assert not list(results_root.rglob("*.py"))  # results/ holds data only
    rows = Ledger(ledger).rows()
    kept = sorted(work.glob("candidate_*.py"))  # the discarded candidates are gone, their rows stay
    assert len(kept) == result.kept and len(rows) > len(kept) + 1
    assert {file_hash(p) for p in kept} == {r.source_hash for r in rows[1:] if r.status == "kept"}


def test_a_table_tuned_after_the_write_flush_is_timed_so_and_says_so(tmp_path, results_root):
    """`--flush write` (GPU MODE's and do_bench's protocol): the session's timer gets that flush, and the
    table's comment names it, so nobody reads it as tuned by the suite's own clean-flush timer."""
    from harness import SolutionRef
    from suite.optimize.command import Settings, ledger_path, work_dir
    from suite.optimize.table_command import run_table

    registry, problem, family = family_in_registry(tmp_path)
    seen = []

    def session(p, options):
        seen.append(options.flush)
        return BlockSession()

    run_table(problem, SolutionRef("triton_family", family), Settings(per_bucket=8, flush="write"), registry,
              ledger_path("h200", problem.name, "r2"), work_dir("h200", problem.name, "r2"), "r2", {"gpu": "H200"},
              echo=lambda line: None, session_factory=session, full_check=lambda p: None)
    assert seen == ["write"]
    assert "from the tuning shapes only, timed after the write flush;" in family.read_text()


PROBE = {"dim": 512, "batch_size": 128}  # bucket dim<=1024,batch_size>64, which no tuning shape is in


class ProbeSession(FakeSession):
    """At the probe shape BLOCK 2 is 20 % faster (BLOCK 8, the nearest bucket's win, is not); a shape
    of 9999 columns is wrong for every file."""

    def true_us(self, path: Path, shape: dict) -> float:
        if shape == PROBE:
            return 10.0 * (0.8 if dispatch.config_for(Path(path).read_text(), shape)[1]["BLOCK"] == 2 else 1.0)
        return super().true_us(path, shape)

    def compare(self, best, candidate, shapes, dtypes, rounds, timeout_s):
        answer = super().compare(best, candidate, shapes, dtypes, rounds, timeout_s)
        if any(s["dim"] == 9999 for s in shapes):
            return SessionAnswer("ok", [PairedShape(s, d, False, "output 0: 1 of 4 elements outside")
                                        for s in shapes for d in dtypes])
        return answer


def test_a_bucket_without_tuning_shapes_is_searched_at_its_probe_shape(tmp_path):
    bad = {"dim": 9999, "batch_size": 128}  # bucket dim>1024,batch_size>64: the start fails there
    setup = setup_in(tmp_path, probes={"dim<=1024,batch_size>64": PROBE, "dim>1024,batch_size>64": bad})
    result = TableSearch(setup, ProbeSession(), echo=lambda line: None, full_check=lambda p: None).run()
    table = dispatch.read_configs(setup.kept.read_text())
    assert table["dim<=1024,batch_size>64"]["BLOCK"] == 2  # its own win, not the copy of its neighbour's 8
    assert table["dim<=1024,batch_size<=64"]["BLOCK"] == 8
    rows = setup.ledger.rows()
    left_out = [r for r in rows if r.bucket == "dim>1024,batch_size>64"]
    assert len(left_out) == 1 and "left out" in left_out[0].description  # a row; the search went on
    assert table["dim>1024,batch_size>64"] == table["dim>1024,batch_size<=64"]  # copies its nearest
    assert result.probed == 1
    kept = setup.kept.read_text()
    assert "3 of 4 buckets tuned at their own shapes," in kept and "this run: 3 searched, 1 at probe shapes\n" in kept
    assert all(len(line) <= 120 for line in setup.kept.read_text().splitlines() if line.startswith("# ksuite"))


def test_probes_only_searches_the_probes_buckets_and_keeps_the_other_entries(tmp_path):
    setup = setup_in(tmp_path, probes={"dim<=1024,batch_size>64": PROBE}, probes_only=True)
    result = TableSearch(setup, ProbeSession(), echo=lambda line: None, full_check=lambda p: None).run()
    table = dispatch.read_configs(setup.kept.read_text())
    assert {r.bucket for r in setup.ledger.rows()[1:]} == {"dim<=1024,batch_size>64"}
    assert table["dim<=1024,batch_size>64"]["BLOCK"] == 2 and result.kept >= 1
    assert table["dim<=1024,batch_size<=64"] == {"BLOCK": 1, "num_warps": 4}  # not searched: as it was


def test_probes_only_without_probes_says_so_and_changes_nothing(tmp_path):
    setup = setup_in(tmp_path, probes_only=True)
    result = TableSearch(setup, ProbeSession(), echo=lambda line: None, full_check=lambda p: None).run()
    assert "no bucket without tuning shapes" in result.reason and result.experiments == 0
    assert setup.kept.read_text() == FAMILY


def split_setup(tmp_path: Path, **kw) -> TableSetup:
    """`--split batch_size=16` on the stand-in family: the search starts from a split copy in the work folder
    and writes the family file itself."""
    from harness import SolutionRef
    from suite.optimize.table_command import split_start

    family = tmp_path / "family.py"
    family.write_text(FAMILY)
    start, fresh = split_start(SolutionRef("family", family), (("batch_size", 16),), tmp_path / "work")
    return TableSetup(tmp_path / "p.py", Path(start.path), family, tmp_path / "work", Ledger(tmp_path / "ledger.tsv"),
                      [CLEAR, NOISY], ["float16"], rounds=15, per_bucket=8, run_id="r1", gpu="H200", fresh=fresh,
                      **kw)


def test_a_split_bucket_is_searched_with_probes_only_and_the_family_gets_the_finer_grid(tmp_path):
    setup = split_setup(tmp_path, probes_only=True)
    assert setup.fresh == {"dim<=1024,batch_size<=16", "dim>1024,batch_size<=16"}
    result = TableSearch(setup, FakeSession(), echo=lambda line: None, full_check=lambda p: None).run()
    written = setup.kept.read_text()
    assert dispatch.read_buckets(written) == {"dim": [1024], "batch_size": [16, 64]}
    table = dispatch.read_configs(written)
    assert table["dim<=1024,batch_size<=16"]["BLOCK"] == 8 and result.kept >= 1  # CLEAR (8 rows) is in it
    assert {r.bucket for r in setup.ledger.rows()[1:]} <= setup.fresh


def test_a_split_search_failing_the_full_check_puts_the_family_back_as_it_was(tmp_path):
    setup = split_setup(tmp_path)
    result = TableSearch(setup, FakeSession(), echo=lambda line: None,
                         full_check=lambda p: "edge: wrong at 1x1").run()
    assert setup.kept.read_text() == FAMILY and result.kept == 0  # the file the user had, not deleted


def test_bucket_patterns_limit_the_search_to_the_buckets_they_match(tmp_path):
    setup = setup_in(tmp_path, only=("dim>1024,*",))
    TableSearch(setup, BlockSession(), echo=lambda line: None, full_check=lambda p: None).run()
    table = dispatch.read_configs(setup.kept.read_text())
    assert {r.bucket for r in setup.ledger.rows()[1:]} == {"dim>1024,batch_size<=64"}
    assert table["dim>1024,batch_size<=64"]["BLOCK"] == 8
    assert table["dim<=1024,batch_size<=64"] == {"BLOCK": 1, "num_warps": 4}  # faster too, but not asked for


def test_a_bucket_pattern_leaves_other_buckets_probe_shapes_untimed(tmp_path):
    class CountingSession(ProbeSession):
        timed: list = []

        def compare(self, best, candidate, shapes, dtypes, rounds, timeout_s):
            self.timed.extend(shapes)
            return super().compare(best, candidate, shapes, dtypes, rounds, timeout_s)

    session = CountingSession()
    setup = setup_in(tmp_path, probes={"dim<=1024,batch_size>64": PROBE}, only=("dim<=1024,batch_size<=64",))
    own = {"BLOCK": 2, "num_warps": 8}  # the probe bucket's entry from an earlier search
    setup.start.write_text(dispatch.write_table(FAMILY, {"dim<=1024,batch_size>64": own}))
    result = TableSearch(setup, session, echo=lambda line: None, full_check=lambda p: None).run()
    assert PROBE not in session.timed and result.probed == 0  # a probe costs a compile and a timing
    assert {r.bucket for r in setup.ledger.rows()[1:]} == {"dim<=1024,batch_size<=64"}
    table = dispatch.read_configs(setup.kept.read_text())
    assert table["dim<=1024,batch_size<=64"]["BLOCK"] == 8  # the bucket asked for: searched
    assert table["dim<=1024,batch_size>64"] == own  # left out: as it was, not a copy of its searched neighbour


def test_a_bucket_pattern_matching_no_searchable_bucket_says_so_and_changes_nothing(tmp_path):
    setup = setup_in(tmp_path, only=("dim<=1024,batch_size>64",))  # a bucket no tuning shape is in
    result = TableSearch(setup, BlockSession(), echo=lambda line: None, full_check=lambda p: None).run()
    assert "--bucket dim<=1024,batch_size>64: no bucket with a tuning or probe shape matches" in result.reason
    assert result.experiments == 0 and setup.kept.read_text() == FAMILY


def test_a_bucket_pattern_matching_none_of_the_family_s_buckets_stops_before_anything_runs(tmp_path, results_root):
    from harness import SolutionRef
    from suite.optimize.command import Settings, ledger_path, work_dir
    from suite.optimize.table_command import run_table

    registry, problem, family = family_in_registry(tmp_path)
    session = BlockSession()
    result = run_table(problem, SolutionRef("triton_family", family), Settings(buckets=("rows<=64",)), registry,
                       ledger_path("h200", problem.name, "r1"), work_dir("h200", problem.name, "r1"), "r1",
                       {"gpu": "H200"}, echo=lambda line: None, session_factory=lambda p, o: session,
                       full_check=lambda p: None)
    assert "--bucket 'rows<=64' matches none of its buckets (dim<=1024,batch_size<=64, ...)" in result.reason
    assert session.requests == 0 and family.read_text() == FAMILY


EDGE = {"dim": 1024, "batch_size": 64}  # bucket dim<=1024,batch_size<=64, at its far corner


class EdgeSession(FakeSession):
    """At CLEAR BLOCK 8 wins by 20 %; at the edge shape, a call five times as long, it loses by 30 %: chosen on
    CLEAR alone the bucket's entry would be BLOCK 8. 8 warps win 10 % at both."""

    def true_us(self, path: Path, shape: dict) -> float:
        config = dispatch.config_for(Path(path).read_text(), shape)[1]
        warps = 0.9 if config["num_warps"] == 8 and shape in (CLEAR, EDGE) else 1.0
        if shape == EDGE:
            return 50.0 * (1.3 if config["BLOCK"] == 8 else 1.0) * warps
        return super().true_us(path, shape) * warps


def test_an_edge_probe_joins_its_bucket_s_tuning_shapes(tmp_path):
    setup = setup_in(tmp_path, edges={"dim<=1024,batch_size<=64": EDGE})
    result = TableSearch(setup, EdgeSession(), echo=lambda line: None, full_check=lambda p: None).run()
    table = dispatch.read_configs(setup.kept.read_text())
    assert table["dim<=1024,batch_size<=64"] == {"BLOCK": 1, "num_warps": 8}  # chosen on both shapes
    assert result.edged == 1 and ", 1 edge probe\n" in setup.kept.read_text()
    (tmp_path / "plain").mkdir()
    plain = setup_in(tmp_path / "plain")
    TableSearch(plain, EdgeSession(), echo=lambda line: None, full_check=lambda p: None).run()
    assert dispatch.read_configs(plain.kept.read_text())["dim<=1024,batch_size<=64"]["BLOCK"] == 8


class GpuTableSession(FakeSession):
    """Times the table the H100 runs: BLOCK 8 is 20 % faster there at every shape."""

    def true_us(self, path: Path, shape: dict) -> float:
        config = dispatch.config_for(Path(path).read_text(), shape, "nvidia-h100-80gb-hbm3")[1]
        return 10.0 * (0.8 if config["BLOCK"] == 8 else 1.0)


def test_a_search_on_another_gpu_leaves_the_home_table_as_it_was(tmp_path):
    """The family's DISPATCH is the H200's; searched on an H100, the kept file holds the H100's own table in
    DISPATCH_BY_GPU (the candidates too: what is timed is what that GPU runs), and DISPATCH is untouched."""
    homed = FAMILY.replace("DISPATCH = {}\n", "# ksuite optimize table: the H200's\n"
                           "DISPATCH = {'dim>1024,batch_size>64': {'BLOCK': 2}}\n"
                           "DISPATCH_GPU = 'nvidia-h200'\nDISPATCH_BY_GPU = {}\n")
    setup = setup_in(tmp_path)
    setup.start.write_text(homed)
    setup.gpu = "NVIDIA H100 80GB HBM3"
    result = TableSearch(setup, GpuTableSession(), echo=lambda line: None, full_check=lambda p: None).run()
    kept = setup.kept.read_text()
    assert result.kept >= 1
    assert dispatch.read_table(kept) == dispatch.read_table(homed)
    assert "# ksuite optimize table: the H200's" in kept
    own = dispatch.read_configs(kept, "nvidia-h100-80gb-hbm3")
    assert own["dim<=1024,batch_size<=64"]["BLOCK"] == 8
    assert set(own) == set(dispatch.all_buckets(dispatch.read_buckets(kept)))  # every bucket of its own table


def test_a_table_started_from_another_gpu_s_says_so_in_every_later_run(tmp_path):
    """The H100's first table is the H200's DISPATCH with the buckets searched there changed: its comment says
    the rest are the H200's timings, and keeps saying so after a second search on the H100 (a table filled
    from DISPATCH_BY_GPU of its own from the start would not)."""
    homed = FAMILY.replace("DISPATCH = {}\n", "# ksuite optimize table: run r0 on NVIDIA H200\n"
                           "DISPATCH = {'dim>1024,batch_size>64': {'BLOCK': 2}}\n"
                           "DISPATCH_GPU = 'nvidia-h200'\nDISPATCH_BY_GPU = {}\n")
    inherited = "the entries no search on this GPU has timed are DISPATCH's, from nvidia-h200"
    for run in ("r1", "r2"):  # the second search starts from the first's kept file
        (tmp_path / run).mkdir()
        setup = setup_in(tmp_path / run)
        setup.start.write_text(homed)
        setup.gpu, setup.run_id = "NVIDIA H100 80GB HBM3", run
        TableSearch(setup, GpuTableSession(), echo=lambda line: None, full_check=lambda p: None).run()
        homed = setup.kept.read_text()
        remarks = dispatch.gpu_remarks(homed, "nvidia-h100-80gb-hbm3")
        assert remarks[0].endswith(f"run {run} on NVIDIA H100 80GB HBM3,") and inherited in remarks[-1], remarks
        assert all(len(line) <= 120 for line in homed.splitlines())
        # the next search has its win to find again
        homed = homed.replace("'dim<=1024,batch_size<=64': {'BLOCK': 8}", "'dim<=1024,batch_size<=64': {}", 1)
    own = "\n".join(line for line in homed.splitlines() if inherited not in line) + "\n"
    (tmp_path / "own").mkdir()
    setup = setup_in(tmp_path / "own")
    setup.start.write_text(own)
    setup.gpu, setup.run_id = "NVIDIA H100 80GB HBM3", "r3"
    TableSearch(setup, GpuTableSession(), echo=lambda line: None, full_check=lambda p: None).run()
    remarks = dispatch.gpu_remarks(setup.kept.read_text(), "nvidia-h100-80gb-hbm3")
    assert remarks[0].endswith("run r3 on NVIDIA H100 80GB HBM3,") and not any(inherited in r for r in remarks)
    home_remarks = [line for line in homed.splitlines() if line.startswith("# ksuite")]  # DISPATCH's, unindented
    assert home_remarks == ["# ksuite optimize table: run r0 on NVIDIA H200"]


def test_the_command_names_the_table_a_gpu_writes():
    from suite.optimize.table_command import table_name

    homed = FAMILY.replace("DISPATCH = {}\n", "DISPATCH = {}\nDISPATCH_GPU = 'nvidia-h200'\nDISPATCH_BY_GPU = {}\n")
    assert table_name(homed, "nvidia-h200") == "DISPATCH"
    assert table_name(homed, "nvidia-h100-80gb-hbm3") == "DISPATCH_BY_GPU['nvidia-h100-80gb-hbm3']"
    assert table_name(FAMILY, "nvidia-h100-80gb-hbm3") == "DISPATCH"  # one table for every GPU
    assert table_name(homed.replace("DISPATCH_BY_GPU = {}\n", ""), "nvidia-h100-80gb-hbm3") is None


class PlacementSession(FakeSession):
    """No configuration is faster anywhere, but a file first loaded as a candidate draws a 5 % faster placement
    (its buffers and code somewhere luckier): what two copies of one file did at calls of a few microseconds on
    the H100. Copies loaded again under new names draw the ordinary one."""

    def true_us(self, path: Path, shape: dict) -> float:
        return 10.0 * (0.95 if Path(path).name.startswith("candidate") else 1.0)


def test_a_win_that_does_not_survive_fresh_copies_of_both_files_is_not_kept(tmp_path):
    (tmp_path / "plain").mkdir()
    unconfirmed = setup_in(tmp_path / "plain", confirm=False)
    lucky = TableSearch(unconfirmed, PlacementSession(), echo=lambda line: None, full_check=lambda p: None).run()
    assert lucky.kept >= 1  # one comparison alone keeps the placement's 5 %
    (tmp_path / "confirmed").mkdir()
    setup = setup_in(tmp_path / "confirmed")
    result = TableSearch(setup, PlacementSession(), echo=lambda line: None, full_check=lambda p: None).run()
    assert result.kept == 0 and setup.kept.read_text() == FAMILY
    again = [r for r in setup.ledger.rows()[1:] if "again as fresh copies of both" in r.description]
    assert again and all(r.status == "discarded" for r in again)
    assert not list((tmp_path / "confirmed" / "work").glob("again_*"))  # the copies are gone


def test_a_real_win_survives_fresh_copies(tmp_path):
    setup = setup_in(tmp_path)
    TableSearch(setup, FakeSession(), echo=lambda line: None, full_check=lambda p: None).run()
    kept = [r for r in setup.ledger.rows()[1:] if r.status == "kept"]
    assert kept and all("again as fresh copies of both" in r.description and "faster" in r.description
                        for r in kept)


def tuned_before_family(remark: str) -> str:
    """FAMILY after an earlier run: dim<=1024,batch_size>64 tuned at its probe shape (BLOCK 2), the bucket
    the tuning shape CLEAR is in not yet searched, dim>1024,batch_size>64 a copy; `remark` its comment."""
    table = {"dim<=1024,batch_size<=64": {}, "dim<=1024,batch_size>64": {"BLOCK": 2},
             "dim>1024,batch_size<=64": {}, "dim>1024,batch_size>64": {}}
    return FAMILY.replace("DISPATCH = {}\n", remark + f"DISPATCH = {table!r}\n")


def rerun_without_probes(tmp_path: Path, remark: str) -> dict:
    setup = setup_in(tmp_path)
    setup.start.write_text(tuned_before_family(remark))
    result = TableSearch(setup, ProbeSession(), echo=lambda line: None, full_check=lambda p: None).run()
    assert result.kept >= 1  # CLEAR's bucket found BLOCK 8: the file is written again
    return dispatch.read_configs(setup.kept.read_text())


def test_a_later_run_that_reaches_fewer_buckets_keeps_the_entries_an_earlier_run_tuned(tmp_path):
    remark = ("# ksuite optimize table: 3 of 4 buckets tuned at their own shapes,\n"
              "# ksuite optimize table: the rest copy the nearest tuned bucket's entry:\n"
              "# ksuite optimize table: dim>1024,batch_size>64;\n"
              "# ksuite optimize table: this run: 3 searched, 1 at probe shapes\n")
    table = rerun_without_probes(tmp_path, remark)
    assert table["dim<=1024,batch_size<=64"]["BLOCK"] == 8
    assert table["dim<=1024,batch_size>64"]["BLOCK"] == 2  # tuned before, not reached now: kept
    kept = (tmp_path / "family.py").read_text()
    assert "3 of 4 buckets tuned at their own shapes," in kept
    assert "the rest copy the nearest tuned bucket's entry:\n# ksuite optimize table: dim>1024,batch_size>64" in kept


def test_a_table_that_counted_every_bucket_as_tuned_keeps_them_all(tmp_path):
    remark = ("# ksuite optimize table: 4 of 4 buckets tuned at their own shapes,\n"
              "# ksuite optimize table: the rest copy the nearest tuned bucket's entry\n")
    assert rerun_without_probes(tmp_path, remark)["dim<=1024,batch_size>64"]["BLOCK"] == 2


def test_a_table_that_cannot_say_which_are_copies_has_its_unreached_buckets_copied(tmp_path):
    remark = ("# ksuite optimize table: 3 of 4 buckets tuned at their own shapes,\n"
              "# ksuite optimize table: the rest copy the nearest tuned bucket's entry\n")
    table = rerun_without_probes(tmp_path, remark)
    assert table["dim<=1024,batch_size>64"]["BLOCK"] == 8  # its nearest's: an earlier copy, as far as it can tell


class NearMissSession(FakeSession):
    """BLOCK 2 at CLEAR: 1.024x over 15 rounds with an interval straddling the keep line (alternating 1.06x and
    0.99x rounds); over 30 rounds `second` per round; fresh copies (files named again_*) a clear 1.03x. Every
    other candidate ties."""

    def __init__(self, second: list[float]):
        super().__init__()
        self.second = second
        self.asked = []

    def compare(self, best, candidate, shapes, dtypes, rounds, timeout_s):
        self.asked.append(rounds)
        block = dispatch.config_for(Path(candidate).read_text(), CLEAR)[1]["BLOCK"]
        if block != 2 or dispatch.config_for(Path(best).read_text(), CLEAR)[1]["BLOCK"] == 2:
            ratios = [1.001, 0.999] * rounds
        elif Path(candidate).name.startswith("again_"):
            ratios = [1.03, 1.029] * rounds
        elif rounds == 30:
            ratios = self.second * 30
        else:
            ratios = [1.06, 0.99] * rounds
        out = [PairedShape(s, d, True, None, [10.0] * rounds, [10.0 / r for r in ratios[:rounds]])
               for s in shapes for d in dtypes]
        return SessionAnswer("ok", out)


def test_a_near_miss_is_asked_again_over_twice_the_rounds_and_kept_only_if_it_clears_the_line(tmp_path):
    for second, kept_block in (([1.03, 1.028], 2), ([1.01, 0.99], 1)):
        folder = tmp_path / str(kept_block)
        folder.mkdir()
        setup = setup_in(folder)
        setup.shapes = [CLEAR]
        session = NearMissSession(second)
        result = TableSearch(setup, session, echo=lambda line: None, full_check=lambda p: None).run()
        assert dispatch.config_for(setup.kept.read_text(), CLEAR)[1]["BLOCK"] == kept_block
        looked = [r for r in setup.ledger.rows()[1:] if "a near miss, asked again over 30 rounds" in r.description]
        assert looked and result.second_looks == len(looked) == session.asked.count(30)
        first = looked[0]
        assert first.description.startswith("search: BLOCK 1->2;"), first.description
        assert first.status == ("kept" if kept_block == 2 else "discarded"), first.description
        # a tie, or a win under the line, is never asked twice: only BLOCK 2 against BLOCK 1 is a near miss
        assert all("BLOCK" in r.description for r in looked)
