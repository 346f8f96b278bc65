"""ksuite confirm (suite/confirm.py): which records are close calls, what is timed beside them, and how the
paired records replace the run's; the pairwise child takes baselines."""

import pytest
from conftest import SCALE_ROWS, candidate

from harness import Options, ProblemRef, SolutionRef
from harness.jobs.pairwise import PairResult, run_together
from harness.ran_hash import ran_hash
from harness.spec import file_hash
from suite.confirm import close_groups, compute_bound, confirm, hint, merged

SHAPE_A, SHAPE_B, SHAPE_C = {"rows": 7, "cols": 1600}, {"rows": 127, "cols": 768}, {"rows": 32768, "cols": 8192}


@pytest.fixture(autouse=True)
def liger_here(monkeypatch):
    """The fake pairwise children below stand for a GPU machine with liger-kernel installed, as the runs they
    re-time had; a test that lacks it says so."""
    monkeypatch.setattr("suite.confirm.liger_installed", lambda: True)


def rec(solution, shape, us, kind="baseline", **extra):
    return {"problem": "p", "solution": solution, "kind": kind, "shape": dict(shape), "dtype": "float16",
            "correct": True, "median_us": us, "shape_set": "heldout", **extra}


def run_records(family_hash="abc"):
    fam = dict(kind="solution", source_hash=family_hash)
    return [
        rec("compile", SHAPE_A, 4.0), rec("eager", SHAPE_A, 6.0), rec("liger", SHAPE_A, 4.8),
        rec("triton_family", SHAPE_A, 4.3, **fam),  # 0.93x, 4.3 us: a close call
        rec("compile", SHAPE_B, 4.0), rec("eager", SHAPE_B, 4.9),
        rec("triton_family", SHAPE_B, 2.0, **fam),  # 2x: not close
        rec("compile", SHAPE_C, 120.0), rec("triton_family", SHAPE_C, 121.0, **fam),  # close, but 121 us
    ]


def test_close_calls_are_fast_and_near_one_and_take_the_baselines_near_the_best():
    groups = close_groups(run_records())
    assert len(groups) == 1
    g = groups[0]
    assert (g.problem, g.solution, g.dtype, g.shapes) == ("p", "triton_family", "float16", [SHAPE_A])
    assert g.baselines == ["compile", "liger"]  # eager is 1.5x the best: it cannot become the best
    assert close_groups(run_records(), max_us=200.0)[0].shapes == [SHAPE_A, SHAPE_C]


def test_a_close_win_is_re_timed_too():
    records = [rec("compile", SHAPE_A, 4.0), rec("triton_family", SHAPE_A, 3.8, kind="solution")]
    assert close_groups(records)[0].shapes == [SHAPE_A]


def test_a_gap_inside_the_records_spread_is_a_close_call_beyond_the_ratio():
    # 0.75x, outside the 25 % window, but the family's samples spread over 1.6 us
    wide = [rec("compile", SHAPE_A, 4.10, iqr_us=0.58),
            rec("triton_family", SHAPE_A, 5.47, kind="solution", iqr_us=1.6)]
    assert close_groups(wide)[0].shapes == [SHAPE_A]
    # the same gap with tight samples on both sides is a verdict
    tight = [rec("compile", SHAPE_A, 4.10, iqr_us=0.2),
             rec("triton_family", SHAPE_A, 5.47, kind="solution", iqr_us=0.3)]
    assert close_groups(tight) == []
    # the spread that counts is the best baseline's, not a slower one's
    slow = [rec("compile", SHAPE_A, 4.10, iqr_us=0.2), rec("eager", SHAPE_A, 9.0, iqr_us=5.0),
            rec("triton_family", SHAPE_A, 5.47, kind="solution", iqr_us=0.3)]
    assert close_groups(slow) == []


def test_the_window_is_what_one_run_to_the_next_moves_a_small_call():
    # H100, 2026-12-07: swiglu_act 7x18944 bf16, the family 5.38 us (4.51 in the run before) against 4.35, 0.81x
    drawn = [rec("compile", SHAPE_A, 4.35, iqr_us=0.13), rec("triton_family", SHAPE_A, 5.38, kind="solution",
                                                              iqr_us=0.94)]
    assert close_groups(drawn)[0].shapes == [SHAPE_A]
    assert close_groups(drawn, within=0.10) == []  # the window before


def test_a_compute_bound_call_of_any_length_is_close_within_its_own_window():
    # H200, 2026-12-07: matmul 8192x3072x8192 bf16, ours 534 us against cuBLAS's 596 in the bench (1.12x), 545
    # against 538 paired; at the card's power limit a 0.5 ms call moves from run to run as a 5 us one does
    big = [rec("eager", SHAPE_C, 596.0), rec("triton_family", SHAPE_C, 534.0, kind="solution")]
    assert close_groups(big, compute=set()) == []  # memory-bound: over MAX_US, a verdict
    assert close_groups(big, compute={"p"})[0].shapes == [SHAPE_C]
    clear = [rec("eager", SHAPE_C, 700.0), rec("triton_family", SHAPE_C, 534.0, kind="solution")]  # 1.31x
    assert close_groups(clear, compute={"p"}) == []
    # under MAX_US the small-call rule (the 25 % window) still applies to a compute-bound problem
    small = [rec("eager", SHAPE_A, 4.0), rec("triton_family", SHAPE_A, 4.9, kind="solution")]  # 0.82x
    assert close_groups(small, compute={"p"})[0].shapes == [SHAPE_A]


def test_which_problems_are_compute_bound_comes_from_their_meta():
    assert compute_bound({"matmul", "rmsnorm", "no_such_problem"}) == {"matmul"}


def test_the_bench_names_its_close_calls_and_the_command():
    line = hint(run_records(), "20261206-194222")
    assert line.startswith("1 close call ") and "`ksuite confirm 20261206-194222`" in line
    assert hint([rec("compile", SHAPE_B, 4.0), rec("triton_family", SHAPE_B, 2.0, kind="solution")], "r") is None


def test_merged_replaces_by_key_and_keeps_the_rest():
    old = run_records()
    new = [rec("compile", SHAPE_A, 3.7), rec("triton_family", SHAPE_A, 3.6, kind="solution", paired={"run": "r"})]
    out = merged(old, new, "new")
    assert len(out) == len(old) and all(r["run_id"] == "new" for r in out)
    by = {(r["solution"], r["shape"]["rows"]): r["median_us"] for r in out}
    assert by[("compile", 7)] == 3.7 and by[("triton_family", 7)] == 3.6 and by[("liger", 7)] == 4.8
    assert by[("triton_family", 127)] == 2.0


class FakeTogether:
    """Stands in for the pairwise child: the solution 3 % faster than each baseline it is timed with."""

    def __init__(self):
        self.calls = []

    def __call__(self, problem, impls, options):
        self.calls.append(([i.name for i in impls], options.custom_shapes, options.dtypes))
        out = PairResult()
        for spec in options.custom_shapes:
            shape = {k: int(v) for k, v in (kv.split("=") for kv in spec.split(","))}
            for i in impls:
                us = 3.88 if i.kind == "solution" else 4.0
                out.records.append({"event": "measurement", "problem": "p", "solution": i.name, "kind": i.kind,
                                    "shape": shape, "dtype": options.dtypes[0], "correct": True, "median_us": us})
        return out


def test_confirm_replaces_the_close_calls_with_paired_records_and_goals_judge_them():
    path = candidate("honest_triton")
    refs = lambda p, s: (ProblemRef("p", SCALE_ROWS), SolutionRef(s, path))  # noqa: E731
    together = FakeTogether()
    result = confirm(run_records(file_hash(path)), "old", "new", refs, Options(), {"gpu": "fake"}, together)
    assert together.calls == [(["compile", "liger", "triton_family"], ("rows=7,cols=1600",), ("float16",))]
    assert not result.notes
    fam = next(r for r in result.records if r["solution"] == "triton_family" and r["shape"] == SHAPE_A)
    assert fam["paired"] == {"run": "old", "with": ["compile", "liger"]} and fam["shape_set"] == "heldout"
    assert abs(fam["speedup_vs_best_baseline"] - 4.0 / 3.88) < 1e-9 and fam["run_id"] == "new"
    speedups = {r["shape"]["rows"]: round(r["speedup_vs_best_baseline"], 3)
                for r in result.records if r["kind"] == "solution"}
    assert speedups == {7: 1.031, 127: 2.0, 32768: 0.992}  # the close call re-timed; the others as they were


class WithoutLiger(FakeTogether):
    """The pairwise child of a machine whose python lacks liger-kernel: that baseline's records fail."""

    def __call__(self, problem, impls, options):
        out = super().__call__(problem, impls, options)
        for r in out.records:
            if r["solution"] == "liger":
                r.update(correct=False, median_us=None,
                         error="raised ModuleNotFoundError: No module named 'liger_kernel'")
        return out


def test_a_baseline_the_run_timed_that_fails_when_paired_keeps_the_run_s_records_with_a_note():
    # the run's best at SHAPE_A is compile (4.0 us), liger 4.8 within CONTENDER: timed beside the family; with
    # liger failing, the paired records would judge the family against compile alone, a comparison the run
    # never made, so the shape keeps the run's records and the command fails
    path = candidate("honest_triton")
    refs = lambda p, s: (ProblemRef("p", SCALE_ROWS), SolutionRef(s, path))  # noqa: E731
    old = run_records(file_hash(path))
    result = confirm(old, "old", "new", refs, Options(), {"gpu": "fake"}, WithoutLiger())
    assert result.paired == [] and len(result.notes) == 1
    assert result.notes[0] == ("p triton_family float16 rows=7,cols=1600: a baseline run old timed failed here "
                               "(liger: raised ModuleNotFoundError: No module named 'liger_kernel'): the run's "
                               "records kept, not re-timed")
    assert [(r["solution"], r["median_us"]) for r in result.records] == [(r["solution"], r["median_us"]) for r in old]
    assert not any(r.get("paired") for r in result.records)


def test_without_liger_installed_the_shapes_where_the_run_timed_it_are_not_timed_at_all(monkeypatch):
    # the H100's queue of 2026-12-07 ran two confirms without Liger on the path: found before any timing, the
    # shapes where the run timed Liger keep its records at no device time, and the others are paired without it
    monkeypatch.setattr("suite.confirm.liger_installed", lambda: False)
    path = candidate("honest_triton")
    refs = lambda p, s: (ProblemRef("p", SCALE_ROWS), SolutionRef(s, path))  # noqa: E731
    shape_d = {"rows": 16, "cols": 768}
    old = [*run_records(file_hash(path)), rec("compile", shape_d, 4.0),  # no Liger record at shape_d
           rec("triton_family", shape_d, 4.2, kind="solution", source_hash=file_hash(path))]
    together = FakeTogether()
    result = confirm(old, "old", "new", refs, Options(), {"gpu": "fake"}, together)
    assert together.calls == [(["compile", "triton_family"], ("rows=16,cols=768",), ("float16",))]
    assert result.notes == ["p triton_family float16: liger-kernel is not installed here and run old timed Liger at 1 "
                            "of its 2 close shapes: those keep the run's records (pip install liger-kernel)"]
    by = {(r["solution"], r["shape"]["rows"]): r for r in result.records}
    assert not by[("triton_family", 7)].get("paired") and by[("liger", 7)]["median_us"] == 4.8
    assert by[("triton_family", 16)]["paired"] == {"run": "old", "with": ["compile"]}


def test_a_solution_changed_since_the_run_is_left_out_with_a_note():
    path = candidate("honest_triton")
    refs = lambda p, s: (ProblemRef("p", SCALE_ROWS), SolutionRef(s, path))  # noqa: E731
    together = FakeTogether()
    result = confirm(run_records("0123456789ab"), "old", "new", refs, Options(), {}, together)
    assert together.calls == [] and "changed since run old" in result.notes[0]
    assert [r["median_us"] for r in result.records] == [r["median_us"] for r in run_records()]


def test_a_file_changed_only_in_another_gpu_s_table_is_still_paired(tmp_path):
    # the H200's rmsnorm search of 2026-12-07 changed the file the H100's queued confirm was for, not the H100's
    # own table: the H100's close calls are still the file's, and are paired
    home = ("DISPATCH = {'a': {}}\nDISPATCH_GPU = 'nvidia-h200'\n"
            "DISPATCH_BY_GPU = {'nvidia-h100-80gb-hbm3': {'a': {}}}\n")
    path = tmp_path / "triton_family.py"
    path.write_text("import torch\n" + home)
    recorded = dict(ran_hash=ran_hash(path, "nvidia-h100-80gb-hbm3"), gpu="NVIDIA H100 80GB HBM3")
    records = [{**r, **recorded} if r["kind"] == "solution" else r for r in run_records(file_hash(path))]
    path.write_text("import torch\n" + home.replace("{'a': {}}\nDISPATCH_GPU", "{'a': {'HINTS': False}}\nDISPATCH_GPU"))
    refs = lambda p, s: (ProblemRef("p", SCALE_ROWS), SolutionRef(s, path))  # noqa: E731
    together = FakeTogether()
    result = confirm(records, "old", "new", refs, Options(), {}, together)
    assert not result.notes and len(together.calls) == 1
    # the same change seen from the H200, whose table it is: not re-timed
    on_h200 = [{**r, "ran_hash": ran_hash(path, "nvidia-h200"), "gpu": "NVIDIA H200"} if r["kind"] == "solution"
               else r for r in run_records("0123456789ab")]
    path.write_text("import torch\n" + home)
    result = confirm(on_h200, "old", "new", refs, Options(), {}, FakeTogether())
    assert "changed since run old" in result.notes[0]


def test_the_pairwise_child_checks_a_baseline_beside_a_solution_on_cpu():
    problem = ProblemRef("scale_rows", SCALE_ROWS)
    impls = [SolutionRef("eager"), SolutionRef("cand", candidate("honest_triton"))]
    options = Options(interpret=True, time=False, trials=1, timeout_s=120, dtypes=("float32",),
                      custom_shapes=("batch_size=8,dim=32",))
    result = run_together(problem, impls, options)
    assert result.status == "ok", result.message
    assert [(r["solution"], r["kind"], r["correct"]) for r in result.records] == \
        [("eager", "baseline", True), ("cand", "solution", True)]
    assert result.records[0]["source_hash"] is None


def test_the_command_lists_the_close_calls_and_on_cpu_times_nothing(results_root):
    import json

    from click.testing import CliRunner

    from suite.cli import cli

    folder = results_root / "nvidia-h200"
    folder.mkdir(parents=True)
    (folder / "20261202-000000.jsonl").write_text("".join(json.dumps({**r, "gpu": "NVIDIA H200"}) + "\n"
                                                          for r in run_records()))
    out = CliRunner().invoke(cli, ["confirm", "20261202-000000"])
    assert out.exit_code == 0, out.output
    assert "p triton_family float16: 1 close shape(s) (7x1600), beside compile, liger" in out.output
    assert "no CUDA device: nothing re-timed" in out.output
    assert sorted(p.name for p in folder.iterdir()) == ["20261202-000000.jsonl"]  # no new run written
    assert CliRunner().invoke(cli, ["confirm", "20990101-000000"]).exit_code == 2


class CutShort(FakeTogether):
    """The pairwise child of the second group never returns: the round's time limit ends the confirm there."""

    def __call__(self, problem, impls, options):
        if self.calls:
            raise KeyboardInterrupt
        return super().__call__(problem, impls, options)


def two_groups(family_hash):
    """run_records' close call at SHAPE_A in float16, and the same call in bfloat16: two groups."""
    return run_records(family_hash) + [{**r, "dtype": "bfloat16"} for r in run_records(family_hash)
                                       if r["shape"] == SHAPE_A]


def test_a_confirm_cut_short_keeps_the_groups_it_finished_and_a_finished_one_writes_each_record_once(tmp_path):
    import pytest

    from suite.confirm import confirm_into
    from suite.results_store import RunFile

    path = candidate("honest_triton")
    refs = lambda p, s: (ProblemRef("p", SCALE_ROWS), SolutionRef(s, path))  # noqa: E731
    records = two_groups(file_hash(path))
    cut = RunFile(tmp_path / "cut.jsonl")
    with pytest.raises(KeyboardInterrupt):
        confirm_into(cut, records, "old", "cut", refs, Options(), {"gpu": "fake"}, CutShort())
    kept = [r.to_dict() for r in cut.read()]
    assert len(kept) == len(records)  # every record of the old run, under the new id
    fam = {r["dtype"]: r for r in kept if r["solution"] == "triton_family" and r["shape"] == SHAPE_A}
    assert fam["float16"]["paired"]["run"] == "old" and fam["float16"]["median_us"] == 3.88  # the first group, paired
    assert not fam["bfloat16"].get("paired") and fam["bfloat16"]["median_us"] == 4.3  # the second, as it was

    done = RunFile(tmp_path / "done.jsonl")
    result = confirm_into(done, records, "old", "done", refs, Options(), {"gpu": "fake"}, FakeTogether())
    lines = done.path.read_text().splitlines()
    assert len(lines) == len(result.records) == len(records)  # rewritten at the end: each record once, in order
    assert [r.to_dict()["median_us"] for r in done.read()] == [r["median_us"] for r in result.records]
