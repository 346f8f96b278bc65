"""GPU MODE folders matmul_v2, sort_v2, conv2d_v2 (set pmpp_v2): faithful cases, checks, and starters on CPU."""

import copy
import math
import re

import pytest
import torch

from submit.gpumode.local import run_local
from submit.gpumode.problem import import_reference, load

TIMEOUTS = {"test_timeout": 180, "benchmark_timeout": 180, "ranked_timeout": 300}
# gpu-mode/reference-kernels problems/pmpp_v2/{matmul_py,sort_py,conv2d_py}/task.yml
CASES = {
    "matmul_v2": (
        [{"m": 64, "n": 64, "k": 64, "seed": 53124}, {"m": 128, "n": 128, "k": 128, "seed": 3321},
         {"m": 256, "n": 256, "k": 256, "seed": 1200}, {"m": 32, "n": 512, "k": 32, "seed": 32523},
         {"m": 64, "n": 1024, "k": 64, "seed": 4327}],
        [{"m": 128, "n": 128, "k": 128, "seed": 43214}, {"m": 256, "n": 256, "k": 256, "seed": 423011},
         {"m": 512, "n": 512, "k": 512, "seed": 123456}, {"m": 1024, "n": 1024, "k": 1024, "seed": 1029},
         {"m": 2048, "n": 2048, "k": 2048, "seed": 75342}, {"m": 1024, "n": 1536, "k": 1024, "seed": 321},
         {"m": 2048, "n": 3072, "k": 2048, "seed": 32412}, {"m": 4096, "n": 5120, "k": 4096, "seed": 123456}]),
    "sort_v2": (
        [{"size": 1023, "seed": 4242}, {"size": 1024, "seed": 5236}, {"size": 1025, "seed": 1001},
         {"size": 2048, "seed": 5531}, {"size": 4096, "seed": 9173}],
        [{"size": 100000, "seed": 54352}, {"size": 500000, "seed": 93246}, {"size": 1000000, "seed": 6256},
         {"size": 10000000, "seed": 8841}, {"size": 100000000, "seed": 6252}]),
    "conv2d_v2": (
        [{"size": 32, "kernelsize": 4, "channels": 16, "batch": 1, "seed": 4242},
         {"size": 32, "kernelsize": 4, "channels": 16, "batch": 2, "seed": 5236},
         {"size": 64, "kernelsize": 4, "channels": 32, "batch": 1, "seed": 1001},
         {"size": 64, "kernelsize": 8, "channels": 32, "batch": 2, "seed": 5531},
         {"size": 128, "kernelsize": 8, "channels": 64, "batch": 1, "seed": 9173}],
        [{"size": 128, "kernelsize": 8, "channels": 64, "batch": 4, "seed": 54352},
         {"size": 128, "kernelsize": 16, "channels": 64, "batch": 4, "seed": 93246},
         {"size": 256, "kernelsize": 16, "channels": 128, "batch": 2, "seed": 6256},
         {"size": 256, "kernelsize": 16, "channels": 128, "batch": 2, "seed": 8841},
         {"size": 256, "kernelsize": 32, "channels": 128, "batch": 1, "seed": 6252}]),
}
NAMES = list(CASES)
# One small leaderboard case per folder for the reference-vs-itself and wrong-output checks.
SMALL = {"matmul_v2": CASES["matmul_v2"][0][3], "sort_v2": CASES["sort_v2"][0][2],
         "conv2d_v2": CASES["conv2d_v2"][0][1]}


def _ref(name):
    return import_reference(load(name))


def _data(name, ref, case=None):
    return ref.generate_input(**(case or SMALL[name]), device="cpu")


@pytest.mark.parametrize("name", NAMES)
def test_task_yml_lists_the_leaderboard_cases(name):
    problem = load(name)
    tests, benchmarks = CASES[name]
    assert problem.tests == tests and problem.benchmarks == benchmarks
    assert problem.ranking_by == "last" and problem.lang == "py" and problem.timeouts == TIMEOUTS
    assert problem.gpus == ("B200", "H100", "A100", "L4")
    text = (problem.path / "submission.py").read_text()
    assert text.startswith(f"#!POPCORN leaderboard {name}\n") and "stream" not in text.lower()


@pytest.mark.parametrize("name", NAMES)
def test_reference_passes_its_own_check(name):
    ref = _ref(name)
    data = _data(name, ref)
    expected = ref.ref_kernel(copy.deepcopy(data))
    assert ref.check_implementation(copy.deepcopy(data), expected) == (True, "")


def _wrong_outputs(name, expected, data):
    """Outputs each of which must fail the check: a wrong shape, a NaN, and a value just past tolerance."""
    nan = expected.clone()
    nan.view(-1)[0] = float("nan")
    if name == "matmul_v2":  # one float16 ulp off (the leaderboard's default rtol 1e-5 allows none)
        off = expected.clone()
        off.view(-1)[5] = torch.nextafter(off.view(-1)[5], torch.tensor(float("inf"), dtype=off.dtype))
    elif name == "sort_v2":  # the values unsorted
        off = data[0].clone()
    else:  # beyond rtol 1e-3 / atol 1e-3
        off = expected.clone()
        off.view(-1)[5] += 3e-3 * (1 + off.view(-1)[5].abs())
    return {"shape": expected.reshape(1, -1), "nan": nan, "value": off}


@pytest.mark.parametrize("name", NAMES)
def test_wrong_output_fails_the_check(name):
    ref = _ref(name)
    data = _data(name, ref)
    expected = ref.ref_kernel(copy.deepcopy(data)).clone()
    for kind, wrong in _wrong_outputs(name, expected, data).items():
        ok, message = ref.check_implementation(copy.deepcopy(data), wrong)
        assert not ok and message, kind
        if kind == "shape":
            assert "shape" in message


def test_generated_inputs_follow_the_leaderboard():
    mm, srt = _ref("matmul_v2"), _ref("sort_v2")
    a, b, c = mm.generate_input(m=32, n=48, k=16, seed=3, device="cpu")
    a2, b2, _ = mm.generate_input(m=32, n=48, k=16, seed=3, device="cpu")
    assert a.shape == (32, 16) and b.shape == (16, 48) and c.shape == (32, 48)
    assert {a.dtype, b.dtype, c.dtype} == {torch.float16} and torch.equal(a, a2) and torch.equal(b, b2)
    assert 0 <= a.min() and a.max() < 1 and 0 <= b.min() and b.max() < 1
    values, out = srt.generate_input(size=1025, seed=1001, device="cpu")
    assert values.shape == out.shape == (1025,) and values.dtype == out.dtype == torch.float32
    rows = int(1025**0.5)
    cols = -(-1025 // rows)
    gen = torch.Generator().manual_seed(1001 + 1)
    assert torch.equal(values[cols:2 * cols], torch.randn(cols, generator=gen) + 1002)  # row 1, mean seed + 1
    cv = _ref("conv2d_v2")
    x, w, y = cv.generate_input(size=10, kernelsize=4, channels=6, batch=2, seed=5, device="cpu")
    assert x.shape == (2, 6, 10, 10) and w.shape == (6, 6, 4, 4) and y.shape == (2, 6, 7, 7)
    gen = torch.Generator().manual_seed(5)
    assert torch.equal(x, torch.randn(2, 6, 10, 10, generator=gen))
    assert torch.equal(w, torch.randn(6, 6, 4, 4, generator=gen))  # one generator: input first, then kernel


def test_matmul_starter_is_within_one_float16_ulp_on_every_leaderboard_test():
    """The strict default tolerance counts 1-ulp float16 rounding differences; the starter has no others."""
    import importlib.util

    problem = load("matmul_v2")
    ref = import_reference(problem)
    spec = importlib.util.spec_from_file_location("mm_starter", problem.path / "submission.py")
    starter = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(starter)
    for case in problem.tests:
        a, b, c = ref.generate_input(**case, device="cpu")
        got = starter.custom_kernel((a, b, c)).double()
        exact = a.double() @ b.double()
        assert got.shape == exact.shape
        assert ((got - exact).abs() <= exact.abs() * 2.0**-10).all(), case


# Starters through the local protocol's `test` mode, in a child process under the interpreter. Sort runs the
# leaderboard's whole test list; matmul its first case (the strict tolerance, see above); conv2d its first
# two cases plus a shrunk kernelsize-8 case (the interpreter needs minutes for the larger ones).
PROTOCOL = {
    "sort_v2": CASES["sort_v2"][0],
    "matmul_v2": CASES["matmul_v2"][0][:1],
    "conv2d_v2": CASES["conv2d_v2"][0][:2] + [{"size": 16, "kernelsize": 8, "channels": 8, "batch": 2,
                                                  "seed": 5531}],
}


def _one_float16_ulp_apart(error: str, elements: int) -> bool:
    """'1 mismatched elements (...); first at (16, 26): expected 14.1641, got 14.1562': under 1 % of the
    elements mismatched, and the first within one float16 ulp of the expected value."""
    found = re.search(r"expected (-?[\d.e+-]+), got (-?[\d.e+-]+)", error)
    count = re.search(r"(\d+) mismatched elements", error)
    if not found or not count or int(count.group(1)) > elements // 100:
        return False
    expected, got = map(float, found.groups())
    ulp = 2.0 ** (math.floor(math.log2(abs(expected))) - 10) if expected else 2.0**-24
    return abs(expected - got) <= 1.5 * ulp  # the message prints about 6 digits: half an ulp of slack


@pytest.mark.parametrize("name", NAMES)
def test_starter_passes_the_local_test_mode_on_cpu(name):
    problem = load(name)
    run = run_local(problem, problem.path / "submission.py", "test", cases=PROTOCOL[name], timeout_s=120)
    assert run.results["test-count"] == str(len(PROTOCOL[name]))
    if name == "matmul_v2" and not run.passed:
        # The strict tolerance allows no rounding difference, and on the CPU the reference is torch's
        # float16 GEMM, whose float32 accumulation order differs between CPUs: a 1-ulp difference there
        # is the CPU's, not the protocol's (the accuracy itself: the test above, against float64).
        case = PROTOCOL[name][0]
        assert run.results["test.0.status"] == "fail", (run.meaning, run.results, run.stderr[-2000:])
        assert _one_float16_ulp_apart(run.results["test.0.error"], case["m"] * case["n"]), run.results
        return
    assert run.passed, (run.meaning, run.results, run.stderr[-2000:])
