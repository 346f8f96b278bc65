"""The optimisation loop's pure parts: keep/discard, stopping rules, the TSV ledger."""

from harness.records import Measurement
from suite.optimize.decision import best_baselines, decide, summarize
from suite.optimize.ledger import COLUMNS, Ledger, Row
from suite.optimize.stopping import Limits, Progress, stop_reason

SHAPE = {"batch_size": 4096, "dim": 4096}


def m(name, median, iqr=0.0, correct=True, shape=SHAPE, kind="solution", pct=None):
    return Measurement("p", name, kind, shape, "float16", correct, median_us=median, iqr_us=iqr, pct_sol=pct)


def test_keeps_a_clear_win():
    v = decide([m("best", 100.0, 1.0)], [m("cand", 80.0, 1.0)])
    assert v.keep and abs(v.speedup - 1.25) < 1e-9


def test_discards_a_gain_under_one_percent_even_without_noise():
    assert not decide([m("best", 100.0)], [m("cand", 99.5)]).keep


def test_discards_a_gain_inside_the_iqr_noise_bound():
    # 5 % faster, but each median's IQR is 20 % of it: half of each, 10 % + 10 % / 2 = 10 % noise
    v = decide([m("best", 100.0, 20.0)], [m("cand", 95.2, 19.0)])
    assert not v.keep and "noise" in v.reason


def test_discards_incorrect_and_untimed():
    assert "incorrect" in decide([m("best", 100.0)], [m("cand", 50.0, correct=False)]).reason
    v = decide([m("best", None)], [m("cand", None)])
    assert not v.keep and v.reason.startswith("untimed")


def test_discards_when_one_shape_regresses():
    other = {"batch_size": 8192, "dim": 8192}
    best = [m("best", 100.0), m("best", 100.0, shape=other)]
    cand = [m("cand", 50.0), m("cand", 120.0, shape=other)]  # geomean faster, one shape 20 % slower
    assert "slower" in decide(best, cand).reason


def test_summary_and_baselines():
    base = best_baselines([m("eager", 200.0, kind="baseline"), m("compile", 150.0, kind="baseline"),
                           m("fused", 10.0, kind="baseline", correct=False)])
    s = summarize([m("cand", 100.0, pct=60.0)], base)
    assert abs(s.median_us - 100.0) < 1e-9 and abs(s.pct_sol - 60.0) < 1e-9
    assert abs(s.speedup_vs_baseline - 1.5) < 1e-9
    assert summarize([m("cand", None)]).median_us is None


def progress(**kw):
    return Progress(problem_started=100.0, total_started=0.0, **kw)


def test_stopping_rules_each_fire():
    assert stop_reason(progress(), Limits(), 101.0) is None
    assert "plateau" in stop_reason(progress(discards_in_a_row=3), Limits(plateau=3), 101.0)
    assert "target" in stop_reason(progress(best_pct_sol=91.0), Limits(target_pct_sol=90.0), 101.0)
    assert stop_reason(progress(best_pct_sol=89.0), Limits(target_pct_sol=90.0), 101.0) is None
    assert "per-problem" in stop_reason(progress(), Limits(problem_budget_s=60.0), 160.0)
    assert stop_reason(progress(), Limits(problem_budget_s=60.0), 159.0) is None
    assert "total" in stop_reason(progress(), Limits(total_budget_s=120.0), 121.0)
    assert "Ctrl-C" in stop_reason(progress(interrupted=True), Limits(), 101.0)
    assert "nothing more" in stop_reason(progress(exhausted=True), Limits(), 101.0)


def test_progress_counts_discards_in_a_row():
    p = progress()
    for kept in (False, False, True, False):
        p.record(kept)
    assert p.experiments == 4 and p.discards_in_a_row == 1


def test_ledger_round_trip_and_no_tabs_in_cells(tmp_path):
    ledger = Ledger(tmp_path / "optimize" / "p-run.tsv")
    ledger.append(Row(1, "search", "tab\there\nnewline \"quoted\"", True, 12.5, 61.0, 1.2, "kept", "abc"))
    ledger.append(Row(2, "llm", "no code", None, None, None, None, "crashed", "-"))
    lines = ledger.path.read_text().splitlines()
    assert lines[0].split("\t") == COLUMNS and all(len(line.split("\t")) == len(COLUMNS) for line in lines)
    rows = ledger.rows()
    assert [r.status for r in rows] == ["kept", "crashed"]
    assert rows[0].median_us == 12.5 and rows[0].correct is True and rows[1].correct is None
    assert rows[0].description == 'tab here newline "quoted"'
