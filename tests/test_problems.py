"""Every shipped problem with a Triton starter: the starter passes all five stages in Triton's interpreter,
and the eager reference (and fused op) meet the problem's own tolerances at the small shapes."""

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
    starter = SOLUTIONS_DIR / path.stem / "triton_starter.py"
    events = []
    # one sweep trial per shape and dtype (the GPU runs take 3): every stage still runs at every shape,
    # and CI keeps under its 20 minutes
    records = evaluate_problem(ProblemRef(path.stem, path), [SolutionRef("triton_starter", starter)],
                               Options(interpret=True, time=False, trials=1), env={"gpu": "cpu"}, with_baselines=True,
                               on_event=events.append)
    failures = [f"{r.solution} {r.shape} {r.dtype}: {r.error}" for r in records if not r.correct]
    assert not failures, "\n".join(failures)

    meta = load_problem(path, f"ksuite_test_problems_{path.stem}").meta
    expected = {(tuple(sorted(s.items())), d) for s in meta.sweep("small") for d in meta.dtypes}
    for impl in ["triton_starter", "eager"] + (["fused"] if any(r.solution == "fused" for r in records) else []):
        got = {(tuple(sorted(r.shape.items())), r.dtype) for r in records if r.solution == impl}
        assert got == expected, f"{impl}: records for {sorted(got)}, expected {sorted(expected)}"

    stages = [(e["stage"], e["passed"]) for e in events if e["event"] == "stage" and e["impl"] == "triton_starter"]
    assert [s for s, _ in stages] == list(STAGES)
    assert all(passed for _, passed in stages)
