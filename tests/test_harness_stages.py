"""Known-right and known-wrong candidates through the harness: every wrong one is rejected at the stage
that should catch it, with the reason in the record; the honest one passes all five stages.

One evaluate_problem call runs every fixture candidate (each in its own child process), so the slow
part, starting children, is paid once per candidate.
"""

import time

import pytest
import torch
from conftest import (
    SCALE_ROWS,
    SCALE_ROWS_DTYPES,
    SCALE_ROWS_SHAPES,
    candidate,
    syntax_error_candidate,
)

from harness import Options, ProblemRef, SolutionRef, evaluate_problem
from harness.correctness import STAGES, Checker, run_stages
from harness.inputs import build_models
from harness.jobs import runner
from harness.jobs.runner import run_job
from harness.loader import DTYPES, load_problem
from harness.spec import file_hash

PROBLEM = ProblemRef("scale_rows", SCALE_ROWS)
CPU = Options(interpret=True, time=False)
ENV = {"gpu": "cpu"}

# name -> (stage that must reject it, words its error must contain)
KNOWN_WRONG = {
    "wrong_math": ("smoke", "outside atol=1e-05"),
    # CPU: the harness does not poison the allocator (only on CUDA), so the unwritten rows hold stale
    # values and fail as "outside" the tolerance rather than as NaN.
    "unwritten_tail": ("smoke", "128 of 256 elements outside"),
    "shape_hardcoded": ("sweep", "at 5x48 float32"),
    "clamps_range": ("stability", "outside atol"),
    "nondeterministic": ("determinism", "differ bitwise"),
    "ignores_strides": ("edge", "outside atol"),
    "raises": ("smoke", "raised RuntimeError: deliberate failure"),
    "aliasing": ("smoke", "aliases input 0"),
    "mutates_input": ("smoke", "input 0 was modified"),
    "fp16_compute": ("smoke", "outside atol=1e-05 rtol=1e-05"),
}
LOAD_FAILURES = {"no_modelnew": "candidate file has no ModelNew", "syntax_error": "syntax error at line 11"}
# segfault first: the honest candidate after it must still run and pass
ORDER = ["segfault", "honest_triton", *KNOWN_WRONG, *LOAD_FAILURES]


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    folder = tmp_path_factory.mktemp("candidates")
    paths = {name: candidate(name) for name in ORDER if name != "syntax_error"}
    paths["syntax_error"] = syntax_error_candidate(folder)
    events = []
    records = evaluate_problem(PROBLEM, [SolutionRef(n, paths[n]) for n in ORDER], CPU, env=ENV,
                               with_baselines=True, on_event=events.append)
    return {"records": records, "events": events, "paths": paths}


def records_of(batch, name):
    return [r for r in batch["records"] if r.solution == name]


def stage_events(batch, name):
    return [e for e in batch["events"] if e["event"] == "stage" and e["impl"] == name]


def plan_keys():
    return sorted((tuple(sorted(s.items())), d) for s in SCALE_ROWS_SHAPES for d in SCALE_ROWS_DTYPES)


def test_honest_candidate_passes_all_five_stages_in_order(batch):
    stages = stage_events(batch, "honest_triton")
    assert [e["stage"] for e in stages] == list(STAGES)
    assert all(e["passed"] and not e["skipped"] for e in stages), stages
    assert stages[3]["detail"] == "bitwise equal over 3 calls"


def test_honest_candidate_records(batch):
    records = records_of(batch, "honest_triton")
    assert sorted((tuple(sorted(r.shape.items())), r.dtype) for r in records) == plan_keys()
    meta = load_problem(SCALE_ROWS, "ksuite_test_stages_meta").meta
    for r in records:
        assert r.correct is True and r.error is None, r.error
        assert r.problem == "scale_rows" and r.kind == "solution" and r.gpu == "cpu" and r.env == ENV
        assert r.source_hash == file_hash(candidate("honest_triton"))
        assert r.bytes == meta.bytes_fn(r.shape, DTYPES[r.dtype].itemsize)
        atol, rtol = meta.tolerance(r.dtype)
        assert r.max_abs_err is not None and r.max_abs_err <= atol + rtol * 20
        # nothing is timed on CPU
        assert r.median_us is None and r.pct_sol is None and r.speedup_vs_best_baseline is None
        assert r.timestamp


@pytest.mark.parametrize("name", sorted(KNOWN_WRONG))
def test_known_wrong_candidate_rejected_at_its_stage(batch, name):
    stage, words = KNOWN_WRONG[name]
    stages = stage_events(batch, name)
    expected = list(STAGES[: STAGES.index(stage) + 1])
    assert [e["stage"] for e in stages] == expected, "stages must run in order and stop at the first failure"
    assert all(e["passed"] for e in stages[:-1])
    assert not stages[-1]["passed"]
    records = records_of(batch, name)
    assert sorted((tuple(sorted(r.shape.items())), r.dtype) for r in records) == plan_keys()
    for r in records:
        assert r.correct is False
        assert r.error.startswith(f"{stage}: "), r.error
        assert words in r.error, r.error


@pytest.mark.parametrize("name", sorted(LOAD_FAILURES))
def test_unloadable_candidate_recorded_with_file_and_cause(batch, name):
    assert stage_events(batch, name) == []
    errors = [e for e in batch["events"] if e["event"] == "error" and e["impl"] == name]
    assert len(errors) == 1 and LOAD_FAILURES[name] in errors[0]["message"]
    records = records_of(batch, name)
    assert sorted((tuple(sorted(r.shape.items())), r.dtype) for r in records) == plan_keys()
    for r in records:
        assert r.correct is False
        assert str(batch["paths"][name]) in r.error and LOAD_FAILURES[name] in r.error


def test_segfault_is_recorded_and_the_next_candidate_still_runs(batch):
    records = records_of(batch, "segfault")
    assert sorted((tuple(sorted(r.shape.items())), r.dtype) for r in records) == plan_keys()
    assert all(r.correct is False and "SIGSEGV" in r.error and "crashed" in r.error for r in records)
    crashes = [e for e in batch["events"] if e["event"] == "crash"]
    assert [e["impl"] for e in crashes] == ["segfault"]
    starts = [e["impl"] for e in batch["events"] if e["event"] == "start"]
    assert starts.index("segfault") < starts.index("honest_triton")
    assert all(r.correct for r in records_of(batch, "honest_triton"))


def test_baselines_pass_the_fixture_tolerances(batch):
    """The eager reference and the fused op, in each dtype, meet the problem's own tolerances."""
    baselines = [r for r in batch["records"] if r.kind == "baseline"]
    assert sorted({r.solution for r in baselines}) == ["eager", "fused"]  # no torch.compile on CPU
    for name in ("eager", "fused"):
        records = [r for r in baselines if r.solution == name]
        assert sorted((tuple(sorted(r.shape.items())), r.dtype) for r in records) == plan_keys()
        assert all(r.correct for r in records), [r.error for r in records]
        assert all(r.source_hash == file_hash(SCALE_ROWS) for r in records)


def test_every_record_names_problem_and_known_candidate(batch):
    names = set(ORDER) | {"eager", "fused"}
    assert {r.solution for r in batch["records"]} == names
    assert all(r.problem == "scale_rows" for r in batch["records"])
    assert all(r.correct is not None for r in batch["records"])


def test_one_child_per_job(batch):
    plans = [e for e in batch["events"] if e["event"] == "plan"]
    assert len(plans) == 1 + len(ORDER)  # one baseline job, then one job per candidate


# ---- hangs, crashes inside one job, problems that do not load ----------------------------------------

def test_hanging_candidate_is_killed_at_the_timeout():
    events = []
    started = time.monotonic()
    records = evaluate_problem(PROBLEM, [SolutionRef("hangs", candidate("hangs")),
                                         SolutionRef("honest_triton", candidate("honest_triton"))],
                               Options(interpret=True, time=False, timeout_s=15), env=ENV, with_baselines=False,
                               on_event=events.append)
    elapsed = time.monotonic() - started
    hung = [r for r in records if r.solution == "hangs"]
    assert sorted((tuple(sorted(r.shape.items())), r.dtype) for r in hung) == plan_keys()
    assert all(r.correct is False and "timed out after 15 s" in r.error for r in hung), [r.error for r in hung]
    assert [e["impl"] for e in events if e["event"] == "crash"] == ["hangs"]
    assert all(r.correct for r in records if r.solution == "honest_triton")
    assert len([r for r in records if r.solution == "honest_triton"]) == 4
    assert elapsed < 90, "the hang was not cut off near its 15 s timeout"


def test_one_child_crashing_does_not_lose_the_rest_of_its_job():
    """Baselines share one child: a crash must cost only the implementation that was running."""
    impls = [SolutionRef("segfault", candidate("segfault")), SolutionRef("honest_triton", candidate("honest_triton"))]
    events = []
    records = list(run_job(PROBLEM, impls, CPU, events.append))
    crashed = [r for r in records if r["solution"] == "segfault"]
    assert len(crashed) == 4 and all("SIGSEGV" in r["error"] and r["correct"] is False for r in crashed)
    honest = [r for r in records if r["solution"] == "honest_triton"]
    assert len(honest) == 4 and all(r["correct"] for r in honest), [r.get("error") for r in honest]
    assert len([e for e in events if e["event"] == "plan"]) == 2  # a fresh child for what was left


@pytest.mark.parametrize("restarts", [3, 0])
def test_a_child_dying_at_one_shape_costs_that_shape_only(tmp_path, monkeypatch, restarts):
    """The H200 round of 2026-12-01: one shape's death (the host's out-of-memory killer) was charged to
    every shape of every implementation still to come in that child. Baselines have no stages, so the
    fused one dies while measuring: that measurement fails, its other shapes and eager are measured.
    With no restarts left, the death costs the rest of that implementation, each key recorded once."""
    monkeypatch.setattr(runner, "MAX_RESTARTS", restarts)
    dies = tmp_path / "scale_rows_dies.py"
    dies.write_text(SCALE_ROWS.read_text() + (
        "\n\nclass ModelFused(Model):\n"
        "    def forward(self, x):\n"
        "        if x.shape[0] == 5:\n"
        "            import os, signal\n"
        "            os.kill(os.getpid(), signal.SIGSEGV)\n"
        "        return torch.mul(x, self.weight)\n"))
    events = []
    records = evaluate_problem(ProblemRef("scale_rows", dies), [], Options(interpret=True, time=False),
                               env=ENV, with_baselines=True, on_event=events.append)
    fused = {(tuple(sorted(r.shape.items())), r.dtype): r for r in records if r.solution == "fused"}
    assert sorted(fused) == plan_keys()  # one record per key, none lost, none twice
    dead = [k for k, r in fused.items() if not r.correct]
    if restarts:
        assert sorted(dead) == [(SWEEP_KEY, "float16"), (SWEEP_KEY, "float32")]
    else:  # the first death ends the fused baseline: that key and every one after it
        assert (SWEEP_KEY, "float32") in dead or (SWEEP_KEY, "float16") in dead
    assert all("SIGSEGV" in fused[k].error for k in dead)
    assert all(r.correct for r in records if r.solution == "eager")
    assert len([r for r in records if r.solution == "eager"]) == 4


SMOKE_KEY = (("batch_size", 8), ("dim", 32))
SWEEP_KEY = (("batch_size", 5), ("dim", 48))


def test_resumed_evaluation_records_only_what_is_not_done():
    done = (("honest_triton", SMOKE_KEY, "float32"),)
    records = evaluate_problem(PROBLEM, [SolutionRef("honest_triton", candidate("honest_triton"))],
                               Options(interpret=True, time=False, dtypes=("float32",), done=done), env=ENV,
                               with_baselines=False)
    assert [(tuple(sorted(r.shape.items())), r.dtype, r.correct) for r in records] == [(SWEEP_KEY, "float32", True)]


def test_crash_on_resume_does_not_duplicate_records_already_done():
    done = (("segfault", SMOKE_KEY, "float32"),)
    records = evaluate_problem(PROBLEM, [SolutionRef("segfault", candidate("segfault"))],
                               Options(interpret=True, time=False, dtypes=("float32",), done=done), env=ENV,
                               with_baselines=False)
    assert [(tuple(sorted(r.shape.items())), r.dtype) for r in records] == [(SWEEP_KEY, "float32")]
    assert "SIGSEGV" in records[0].error


def test_problem_that_does_not_load_becomes_failure_records(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text(SCALE_ROWS.read_text() + "\nMETA['small_shapes'] = [{'rows': 4}]\n")
    records = evaluate_problem(ProblemRef("broken", broken),
                               [SolutionRef("honest_triton", candidate("honest_triton"))],
                               CPU, env=ENV, with_baselines=False)
    assert len(records) == 1
    assert records[0].correct is False
    assert str(broken) in records[0].error and "rows" in records[0].error


# ---- the stage runner in-process (no child): bounds, skipped stages, dtypes ---------------------------

class TorchScaleRows(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(dim))

    def forward(self, x):
        return x * self.weight


class Noisy(TorchScaleRows):
    def forward(self, x):
        y = x * self.weight
        return y + (torch.rand_like(y) - 0.5) * 2e-6 * y


class AlwaysFloat32(TorchScaleRows):
    def forward(self, x):
        return x.float() * self.weight.float()


def stages_in_process(problem_path, cls, dtypes=None):
    problem = load_problem(problem_path, f"ksuite_test_inproc_{problem_path.stem}")
    checker = Checker(problem, lambda s, d: build_models(problem, cls, s, d, 0, "cpu")[2], "cpu", 0)
    lines = []
    ok = run_stages(checker, problem.meta.sweep("small"), dtypes or list(problem.meta.dtypes), 2, lines.append)
    return ok, lines


def with_meta(tmp_path, **changes):
    path = tmp_path / "scale_rows_variant.py"
    extra = "".join(f"\nMETA[{k!r}] = {v!r}" for k, v in changes.items())
    path.write_text(SCALE_ROWS.read_text() + extra + "\n")
    return path


def test_determinism_bound_accepts_differences_below_it(tmp_path):
    ok, lines = stages_in_process(with_meta(tmp_path, deterministic=1e-4), Noisy)
    assert ok, [(r.stage, r.detail) for r in lines]
    assert "within 1e-04" in lines[3].detail


def test_determinism_bound_rejects_differences_above_it(tmp_path):
    ok, lines = stages_in_process(with_meta(tmp_path, deterministic=1e-12), Noisy)
    assert not ok
    assert lines[-1].stage == "determinism" and "> bound" in lines[-1].detail


def test_stages_with_nothing_declared_are_skipped_not_failed(tmp_path):
    path = with_meta(tmp_path, stability=[], edge_shapes=[], strided_inputs=False)
    ok, lines = stages_in_process(path, TorchScaleRows)
    assert ok
    assert [(r.stage, r.status) for r in lines] == [("smoke", "pass"), ("sweep", "pass"), ("stability", "skip"),
                                                    ("determinism", "pass"), ("edge", "skip")]


def test_wrong_output_dtype_is_caught_in_the_sweep():
    ok, lines = stages_in_process(SCALE_ROWS, AlwaysFloat32)
    assert not ok
    assert lines[-1].stage == "sweep" and lines[-1].dtype == "float16"
    assert "dtype torch.float32, expected torch.float16" in lines[-1].detail
