"""ksuite bench-plan: per extracted problem, the solutions worth a bench (META recommended, else the fastest
measured, else the starters; CUDA ones only when asked), cheapest problem first."""

import json
import shutil

import pytest
from click.testing import CliRunner
from conftest import PROBLEMS_DIR, SOLUTIONS_DIR
from test_profile_h200_trace import PROFILE

from harness.loader import DTYPES, load_problem
from suite.cli import cli
from suite.profile.bench_plan import plan, resolve, worth_trying
from suite.profile.extract import extract
from suite.registry import Registry

MODEL = "extracted/llama3-8b-4-layers"
ATTN = {"batch_size": 4, "num_heads": 32, "seq_len": 2048, "head_dim": 128}


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    """The top 5 ops of the recorded H200 llama profile, extracted into a copy of problems/."""
    problems = tmp_path_factory.mktemp("problems")
    for src in PROBLEMS_DIR.glob("*.py"):
        shutil.copy(src, problems / src.name)
    extract(PROFILE, 5, problems_dir=problems)
    return Registry(problems_dir=problems, solutions_dir=SOLUTIONS_DIR)


def record(problem, solution, shape, median, correct=True):
    return json.dumps({"problem": problem, "solution": solution, "kind": "solution", "shape": shape,
                       "dtype": "bfloat16", "correct": correct, "median_us": median, "run_id": "r1"})


def results(tmp_path, *lines):
    folder = tmp_path / "nvidia-h200"
    folder.mkdir()
    (folder / "r1.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def attention(registry):
    (ref,) = [r for r in resolve(registry, (MODEL,)) if "attention_causal" in r.name]
    return ref


def test_recommended_solution_first_and_cheapest_problem_first(registry, tmp_path):
    planned = plan(registry, resolve(registry, (MODEL,)), None)
    assert len(planned) == 5
    by_op = {p.problem.split("/")[-1].split("__")[0]: p for p in planned}
    for op in ("rmsnorm", "rotary", "swiglu_act", "cross_entropy"):
        recommended = load_problem(PROBLEMS_DIR / f"{op}.py", f"plan_test_{op}").meta.recommended
        assert by_op[op].solutions == (recommended,) and "recommended" in by_op[op].why
    costs = [p.cost_bytes for p in planned]
    assert costs == sorted(costs)
    for p in planned:  # the order key is META's bytes at the shape the bench times
        meta = load_problem(next(r.path for r in resolve(registry, (MODEL,)) if r.name == p.problem),
                            "plan_test_cost").meta
        assert p.cost_bytes == meta.bytes_fn(meta.large_shapes[0], DTYPES[meta.dtypes[0]].itemsize)
    assert planned[-1].problem.split("/")[-1].startswith("cross_entropy")  # the biggest, last


def test_without_a_recommendation_the_fastest_measured_at_the_shape(registry, tmp_path):
    folder = results(tmp_path,
                     record(f"{MODEL}/attention_causal__4x32x2048x128_bf16", "cuda_flash_mma", ATTN, 300.0),
                     record("attention_causal", "triton_starter_opt", ATTN, 600.0),
                     record("attention_causal", "triton_starter", ATTN, 500.0),
                     record("attention_causal", "triton_starter", {**ATTN, "seq_len": 512}, 5.0),
                     record("attention_causal", "cheat", ATTN, 1.0, correct=False))
    names, why = worth_trying(registry, attention(registry), folder)
    assert names == ["triton_starter", "triton_starter_opt"] and "fastest measured at 4x32x2048x128" in why
    names, why = worth_trying(registry, attention(registry), folder, cuda=True)
    cuda_solutions = sorted(p.stem for p in (registry.solutions_dir / "attention_causal").glob("cuda_*.py"))
    assert "cuda_flash_mma" in cuda_solutions  # every CUDA solution of the folder, after the measured ones
    assert names == ["triton_starter", "triton_starter_opt", *cuda_solutions] and "CUDA" in why


def test_else_the_fastest_at_other_shapes_else_the_starters(registry, tmp_path):
    other = {**ATTN, "seq_len": 1024}
    folder = results(tmp_path, record("attention_causal", "triton_starter_opt", other, 90.0),
                     record("attention_causal", "triton_starter", other, 100.0),
                     record("attention_causal", "cuda_flash_mma", other, 50.0))
    names, why = worth_trying(registry, attention(registry), folder)
    assert names == ["triton_starter_opt"] and "most attention_causal shapes" in why
    names, why = worth_trying(registry, attention(registry), None)
    assert names == ["triton_starter", "triton_starter_opt"] and "starter" in why


def test_cli_lines_and_a_missing_model():
    runner = CliRunner()
    missing = runner.invoke(cli, ["bench-plan", "extracted/no-such-model"])
    assert missing.exit_code != 0 and "ksuite extract" in missing.output
    out = runner.invoke(cli, ["bench-plan", "rmsnorm", "--gpu", "no-such-gpu"])
    assert out.exit_code == 0, out.output
    name, solutions, why = out.output.strip().split("\t")
    assert (name, solutions) == ("rmsnorm", "triton_family") and "recommended" in why
