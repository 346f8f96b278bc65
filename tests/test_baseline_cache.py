"""Baseline timings kept per environment: the key, age and fingerprint invalidation, opt-in reuse that
marks its records, goals that judge nothing against them. No device, no timing: a stand-in child."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness import baseline_cache, evaluate
from harness.baseline_cache import BaselineKey, BaselineStore, key_for
from harness.loader import load_problem
from harness.records import Measurement
from harness.spec import Options, ProblemRef, file_hash
from suite import exit_codes, goals
from suite import report as report_mod
from suite.cli import cli

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = ProblemRef("rmsnorm", ROOT / "problems" / "rmsnorm.py")
ENV = {"gpu": "NVIDIA H200", "sm_count": 132, "capability": "9.0", "driver": "570.1", "cuda": "12.8",
       "torch": "2.13.0", "triton": "3.6.0", "python": "3.11.9", "commit": "abc"}
SHAPE = {"batch_size": 4096, "dim": 4096}
DAY = 86400.0


def options(**changes) -> Options:
    base = Options(time=True, interpret=False, shapes="large", dtypes=("float16",), baselines=("eager", "compile"),
                   baseline_cache="use")
    return dataclasses.replace(base, **changes)


def timed(solution: str, shape: dict = SHAPE, median_us: float = 10.0, kind: str = "baseline", **more) -> dict:
    return {"event": "measurement", "problem": "rmsnorm", "solution": solution, "kind": kind, "shape": dict(shape),
            "dtype": "float16", "correct": True, "median_us": median_us, "iqr_us": 0.1, "runs": 50, "rse": 0.001,
            "bytes": 3.4e7, "flops": None, "gbps": 3400.0, "flush": "clean", **more}


@pytest.fixture
def store(tmp_path, monkeypatch) -> BaselineStore:
    monkeypatch.setenv("KSUITE_CACHE_DIR", str(tmp_path / "cache"))
    return BaselineStore()


def a_key(**changes) -> BaselineKey:
    return dataclasses.replace(key_for(ENV, "f00d", SHAPE, "float16", "compile", options()), **changes)


OTHER = {"gpu": "NVIDIA B200", "torch": "2.14.0", "triton": "3.7.0", "problem_hash": "beef",
         "shape": (("batch_size", 8192), ("dim", 4096)), "dtype": "bfloat16", "baseline": "compile-max-autotune",
         "flush": "write", "timer": (25.0, 10, 500, 0.005, 2.0, 100.0), "harness": "0123", "library": "0.8.5"}


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(BaselineKey)])
def test_every_field_changes_the_key(name):
    assert set(OTHER) == {f.name for f in dataclasses.fields(BaselineKey)}
    assert a_key(**{name: OTHER[name]}).digest() != a_key().digest()


def test_the_key_follows_the_source_the_timer_and_the_environment(tmp_path):
    problem = tmp_path / "p.py"
    problem.write_text("x = 1\n")
    before = file_hash(problem)
    problem.write_text("x = 2\n")  # an edited problem file is another key: its kept timings are not reused
    assert key_for(ENV, before, SHAPE, "float16", "eager", options()) != \
        key_for(ENV, file_hash(problem), SHAPE, "float16", "eager", options())
    base = key_for(ENV, "f00d", SHAPE, "float16", "eager", options())
    for changed in (dict(budget_s=2.0), dict(target_rse=0.01), dict(warmup_ms=50.0), dict(min_runs=3),
                    dict(max_runs=100), dict(flush="write")):
        assert key_for(ENV, "f00d", SHAPE, "float16", "eager", options(**changed)) != base, changed
    assert key_for({**ENV, "torch": "2.14.0"}, "f00d", SHAPE, "float16", "eager", options()) != base
    assert key_for({**ENV, "commit": "def"}, "f00d", SHAPE, "float16", "eager", options()) == base


def test_a_kept_timing_is_reused_until_too_old_or_the_fingerprint_changes(store):
    key = a_key()
    store.save(key, timed("compile", timestamp="2026-12-01T08:00:00+00:00"), ENV, "20261201-080000", now=1000.0)
    hit = store.load(key, ENV, 7 * DAY, now=1000.0 + DAY)
    assert hit.reason == "hit" and hit.record["median_us"] == 10.0
    assert hit.record["cached_from"] == {"run_id": "20261201-080000", "timestamp": "2026-12-01T08:00:00+00:00",
                                         "age_days": 1.0}
    assert store.load(key, ENV, 7 * DAY, now=1000.0 + 8 * DAY).reason == "stale: 8.0 days old"
    assert store.load(key, {**ENV, "driver": "575.0"}, 7 * DAY, now=1000.0).reason == "stale: driver changed"
    assert store.load(key, {**ENV, "commit": "other"}, 7 * DAY, now=1000.0).reason == "hit"
    assert store.load(a_key(dtype="bfloat16"), ENV, 7 * DAY).reason == "missing"
    assert store.path(key).parent.name == "nvidia-h200"


def test_off_and_cpu_runs_neither_read_nor_write(store):
    assert baseline_cache.plan(PROBLEM, options(baseline_cache="off"), ENV, "r") is None
    assert baseline_cache.plan(PROBLEM, options(interpret=True, time=False), ENV, "r") is None
    assert baseline_cache.plan(PROBLEM, options(), {**ENV, "gpu": "cpu"}, "r") is None


def keep_eager(store: BaselineStore, opts: Options) -> list[dict]:
    """Kept eager timings at every large shape of rmsnorm, as an earlier run left them."""
    shapes = load_problem(PROBLEM.path, "ksuite_test_baseline_cache").meta.sweep("large")
    for shape in shapes:
        key = key_for(ENV, file_hash(PROBLEM.path), shape, "float16", "eager", opts)
        store.save(key, timed("eager", shape, median_us=20.0, timestamp="2026-12-01T08:00:00+00:00"), ENV, "earlier")
    return shapes


def test_opt_in_reuse_gives_marked_records_and_the_child_times_only_the_rest(store, monkeypatch):
    opts = options()
    shapes = keep_eager(store, opts)
    seen: list = []

    def child(problem, impls, opts, on_event):  # stand-in for the baseline and solution children
        seen.append(([i.name for i in impls], opts.done))
        for impl in impls:
            for shape in shapes:
                yield timed(impl.name, shape, median_us=8.0, kind=impl.kind)

    monkeypatch.setattr(evaluate, "run_job", child)
    events: list = []
    out = evaluate.evaluate_problem(PROBLEM, [], opts, ENV, run_id="now", on_event=events.append)
    reused = [m for m in out if m.cached_from]
    assert len(reused) == len(shapes) and {m.solution for m in reused} == {"eager"}
    assert all(m.cached_from["run_id"] == "earlier" and m.median_us == 20.0 and m.correct for m in reused)
    assert all(m.shape_set == "large" and m.source_hash == file_hash(PROBLEM.path) for m in reused)
    assert seen[0][0] == ["compile"]  # eager is all kept: its child never runs it
    assert {d[0] for d in seen[0][1]} == {"eager"} and len(seen[0][1]) == len(shapes)
    fresh = [m for m in out if m.solution == "compile"]
    assert fresh and not any(m.cached_from for m in fresh)
    assert events[0]["event"] == "baseline-cache" and events[0]["message"].startswith(f"{len(shapes)} reused")
    key = key_for(ENV, file_hash(PROBLEM.path), shapes[0], "float16", "compile", opts)
    assert store.load(key, ENV, DAY).reason == "hit"  # what this run timed is kept for the next


def test_default_runs_time_everything_and_keep_nothing(store, monkeypatch):
    opts = options(baseline_cache="off")
    keep_eager(store, opts)
    seen: list = []

    def child(problem, impls, opts, on_event):
        seen.append([i.name for i in impls])
        yield timed("compile")

    monkeypatch.setattr(evaluate, "run_job", child)
    out = evaluate.evaluate_problem(PROBLEM, [], opts, ENV, run_id="now")
    assert seen == [["eager", "compile"]] and not any(m.cached_from for m in out)
    key = key_for(ENV, file_hash(PROBLEM.path), SHAPE, "float16", "compile", opts)
    assert store.load(key, ENV, DAY).reason == "missing"


def test_fresh_baselines_time_everything_and_refresh_the_cache(store, monkeypatch):
    opts = options(baseline_cache="refresh")
    keep_eager(store, opts)
    monkeypatch.setattr(evaluate, "run_job", lambda problem, impls, o, on_event: iter([timed("eager", median_us=5.0)]))
    out = evaluate.evaluate_problem(PROBLEM, [], opts, ENV, run_id="now")
    assert not any(m.cached_from for m in out)
    key = key_for(ENV, file_hash(PROBLEM.path), SHAPE, "float16", "eager", opts)
    assert store.load(key, ENV, DAY).record["median_us"] == 5.0


def run_with_cached_compile() -> list[dict]:
    """One shape: the solution, a same-run eager baseline, and a compile timing reused from the cache."""
    origin = {"run_id": "earlier", "timestamp": "2026-12-01T08:00:00+00:00", "age_days": 1.0}
    return [Measurement.from_dict(r).to_dict() for r in (
        timed("eager", median_us=20.0), timed("compile", median_us=5.0, cached_from=origin),
        timed("triton_starter", median_us=10.0, kind="solution", shape_set="large"))]


def test_goals_leave_cached_baselines_out_and_say_so():
    rows = goals.evaluate(run_with_cached_compile())
    row = next(g for g in rows if g.solution == "triton_starter")
    assert row.cached_baselines == 1
    assert row.worst[0] == pytest.approx(2.0)  # judged against eager only, never the cached compile
    assert "reused from the cache" in row.verdict and row.verdict != "met"
    assert goals.unmet_pairs(rows) == [("rmsnorm", "float16")]
    assert "reused from the cache were not judged" in goals.summary_line(rows)


def test_reports_mark_cached_rows_and_old_records_read_back():
    records = [Measurement.from_dict(r) for r in run_with_cached_compile()]
    table = report_mod.render(records)
    assert "compile [cached]" in table and "timed in run(s) earlier" in table
    assert "eager [cached]" not in table
    assert "compile [cached]" in report_mod.render_summary(records)  # the fastest baseline of the row
    assert report_mod.render(records, "json").count('"cached_from": {') == 1
    old = {k: v for k, v in records[0].to_dict().items() if k != "cached_from"}
    assert Measurement.from_dict(old).cached_from is None


def test_the_two_flags_contradict():
    result = CliRunner().invoke(cli, ["bench", "rmsnorm", "--cached-baselines", "--fresh-baselines"])
    assert result.exit_code == exit_codes.USAGE and "contradict" in result.output


def test_a_round_script_can_opt_in_through_the_environment(monkeypatch):
    from suite import commands

    seen: dict = {}
    monkeypatch.setattr(commands, "bench", lambda *a, **k: seen.update(k) or True)
    monkeypatch.setenv("KSUITE_CACHED_BASELINES", "1")
    assert CliRunner().invoke(cli, ["bench", "rmsnorm", "--baseline-max-age", "2"]).exit_code == exit_codes.OK
    assert seen["baseline_cache"] == "use" and seen["baseline_max_age_days"] == 2.0
    assert CliRunner().invoke(cli, ["bench", "rmsnorm", "--no-baselines"]).exit_code == exit_codes.OK
    assert seen["baseline_cache"] == "off"  # nothing to cache: the environment's flag is left unused
