"""Every shipped problem with a Triton starter: the starter passes all five stages in Triton's interpreter
(in its first dtype), and the eager reference (and fused op) meet the problem's own tolerances at the small
shapes in every dtype."""

import pytest
from conftest import SOLUTIONS_DIR, problem_files

from harness import Options, ProblemRef, SolutionRef, evaluate_problem
from harness.correctness import STAGES
from harness.loader import load_problem

WITH_STARTER = [p for p in problem_files() if (SOLUTIONS_DIR / p.stem / "triton_starter.py").is_file()]


def test_most_problems_have_a_starter():
    assert len(WITH_STARTER) >= len(problem_files()) // 2


@pytest.mark.parametrize("path", WITH_STARTER, ids=[p.stem for p in WITH_STARTER])
def test_starter_passes_every_stage_and_baselines_meet_tolerances(path):
    """The starter through every stage in the problem's first dtype (the GPU runs check every dtype), the
    baselines in every dtype: one sweep trial per shape, so CI keeps under its 20 minutes."""
    starter = SOLUTIONS_DIR / path.stem / "triton_starter.py"
    problem, events = ProblemRef(path.stem, path), []
    meta = load_problem(path, f"ksuite_test_problems_{path.stem}").meta
    records = evaluate_problem(problem, [SolutionRef("triton_starter", starter)],
                               Options(interpret=True, time=False, trials=1, dtypes=("primary",)),
                               env={"gpu": "cpu"}, with_baselines=False, on_event=events.append)
    records += evaluate_problem(problem, [], Options(interpret=True, time=False, trials=1), env={"gpu": "cpu"},
                                with_baselines=True)
    failures = [f"{r.solution} {r.shape} {r.dtype}: {r.error}" for r in records if not r.correct]
    assert not failures, "\n".join(failures)

    shapes = [tuple(sorted(s.items())) for s in meta.sweep("small")]
    expected = {"triton_starter": {(s, meta.dtypes[0]) for s in shapes}}
    for impl in ["eager"] + (["fused"] if any(r.solution == "fused" for r in records) else []):
        expected[impl] = {(s, d) for s in shapes for d in meta.dtypes}
    for impl, keys in expected.items():
        got = {(tuple(sorted(r.shape.items())), r.dtype) for r in records if r.solution == impl}
        assert got == keys, f"{impl}: records for {sorted(got)}, expected {sorted(keys)}"

    stages = [(e["stage"], e["passed"]) for e in events if e["event"] == "stage" and e["impl"] == "triton_starter"]
    assert [s for s, _ in stages] == list(STAGES)
    assert all(passed for _, passed in stages)
