"""GPU MODE problem folders grayscale_v2, histogram_v2 and prefixsum_v2 (set pmpp_v2).

Each folder loads, lists the leaderboard's exact cases, its reference passes its own check, a wrong
output fails it, and the Triton starter passes the local protocol's `test` mode on CPU (interpreter).
"""

import copy

import pytest
import torch
from conftest import PROBLEMS_DIR

from submit.gpumode.local import run_local
from submit.gpumode.problem import import_reference, import_submission, load

GPUMODE = PROBLEMS_DIR / "gpumode"
GPUS = ("B200", "H100", "A100", "L4")

CASES = {
    "grayscale_v2": (
        [{"size": 128, "seed": 1001}, {"size": 256, "seed": 5531}, {"size": 512, "seed": 9173}],
        [{"size": 512, "seed": 54352}, {"size": 1024, "seed": 93246}, {"size": 2048, "seed": 6256},
         {"size": 4096, "seed": 8841}, {"size": 8192, "seed": 6252}, {"size": 16384, "seed": 54352}],
    ),
    "histogram_v2": (
        [{"size": 5120, "seed": 9991, "contention": 10}, {"size": 7840, "seed": 2105, "contention": 10},
         {"size": 30080, "seed": 9999, "contention": 10}, {"size": 30080, "seed": 4254, "contention": 90},
         {"size": 100000, "seed": 1212, "contention": 10}],
        [{"size": 1310720, "seed": 6252, "contention": 10}, {"size": 2621440, "seed": 8841, "contention": 10},
         {"size": 2621440, "seed": 3411, "contention": 40}, {"size": 2621440, "seed": 8753, "contention": 90},
         {"size": 5242880, "seed": 6252, "contention": 10}, {"size": 10485760, "seed": 8841, "contention": 10}],
    ),
    "prefixsum_v2": (
        [{"size": 1023, "seed": 4242}, {"size": 1024, "seed": 5236}, {"size": 1025, "seed": 1001},
         {"size": 2048, "seed": 5531}, {"size": 4096, "seed": 9173}],
        [{"size": 2**k, "seed": s} for k, s in zip(range(18, 29), (12345, 67890, 13579, 24680, 35791, 46802,
                                                                    57913, 68024, 79135, 80246, 91357))],
    ),
}
NAMES = list(CASES)


@pytest.fixture(autouse=True)
def short_budget(monkeypatch):
    monkeypatch.setenv("KSUITE_GPUMODE_BUDGET_S", "0.05")
    monkeypatch.delenv("POPCORN_SEED", raising=False)


@pytest.mark.parametrize("name", NAMES)
def test_task_yml_lists_the_leaderboards_cases(name):
    problem = load(name)
    tests, benchmarks = CASES[name]
    assert problem.tests == tests and problem.benchmarks == benchmarks
    assert problem.ranking_by == "last" and problem.gpus == GPUS and problem.lang == "py"
    assert problem.timeouts == {"test_timeout": 180, "benchmark_timeout": 180, "ranked_timeout": 300}
    for file in ("task.yml", "reference.py", "task.py", "submission.py"):
        assert "stream" not in (GPUMODE / name / file).read_text().lower()
    head = (GPUMODE / name / "submission.py").read_text().splitlines()[:2]
    assert head == [f"#!POPCORN leaderboard {name}", "#!POPCORN gpu H100"]


def _small_case(name):
    return {"grayscale_v2": {"size": 64, "seed": 3}, "histogram_v2": {"size": 4096, "seed": 3, "contention": 90},
            "prefixsum_v2": {"size": 3000, "seed": 3}}[name]


def _wrong(name, output):
    wrong = output.clone()
    if name == "histogram_v2":
        wrong[7] += 1  # one count off: exactness is demanded
    elif name == "grayscale_v2":
        wrong[5, 9] += 1e-3  # one pixel just past rtol 1e-4 + atol 1e-4
    else:
        wrong[-1] += 1.0  # the last prefix off by 1 (tolerance here about 5.5e-4 + 5.5e-4 * |value|)
    return wrong


@pytest.mark.parametrize("name", NAMES)
def test_reference_passes_its_check_and_wrong_outputs_fail(name):
    ref = import_reference(load(name))
    data = ref.generate_input(**_small_case(name), device="cpu")
    again = ref.generate_input(**_small_case(name), device="cpu")
    assert torch.equal(data[0], again[0])
    right = ref.ref_kernel(copy.deepcopy(data))
    assert ref.check_implementation(data, right) == (True, "")
    # the check stays right when handed the very data whose buffer holds the answer
    assert ref.check_implementation(data, ref.ref_kernel(data))[0]
    ok, message = ref.check_implementation(data, _wrong(name, right))
    assert not ok and "mismatch" in message
    ok, message = ref.check_implementation(data, right.reshape(1, -1))
    assert not ok and "shape" in message
    if right.is_floating_point():
        nan = right.clone()
        nan[0] = float("nan")
        assert not ref.check_implementation(data, nan)[0]


def test_inputs_follow_the_leaderboards_generators():
    gray = import_reference(load("grayscale_v2"))
    image, out = gray.generate_input(size=128, seed=1001, device="cpu")
    assert image.shape == (128, 128, 3) and image.dtype == torch.float32 and 0 <= image.min() < image.max() < 1
    assert out.shape == (128, 128) and out.dtype == torch.float32
    hist = import_reference(load("histogram_v2"))
    values, counts = hist.generate_input(size=30080, seed=4254, contention=90, device="cpu")
    assert values.dtype == torch.uint8 and counts.shape == (256,) and counts.dtype == torch.int64
    assert torch.bincount(values, minlength=256).max().item() > 0.85 * 30080  # 90 % contention on one value
    scan = import_reference(load("prefixsum_v2"))
    x, y = scan.generate_input(size=1025, seed=1001, device="cpu")
    assert x.dtype == y.dtype == torch.float32 and x.shape == y.shape == (1025,)
    result = scan.ref_kernel((x, y))
    assert result.dtype == torch.float64 and result[-1].item() == pytest.approx(x.double().sum().item())
    assert scan.tolerance(4096) == pytest.approx(1e-5 * 64)


@pytest.mark.parametrize("name", NAMES)
def test_starter_passes_the_local_test_mode(name):
    problem = load(name)
    run = run_local(problem, GPUMODE / name / "submission.py", "test")
    assert run.passed, run.stderr
    assert run.results["test-count"] == str(len(problem.tests))
    assert all(run.results[f"test.{i}.status"] == "pass" for i in range(len(problem.tests)))


def test_starters_handle_many_blocks_and_ignore_the_buffers_contents():
    scan_problem = load("prefixsum_v2")
    scan = import_reference(scan_problem)
    starter = import_submission(scan_problem.path / "submission.py")
    starter.BLOCK_SIZE = 16  # 1250 blocks: the scan of block totals runs over two chunks, with a carry
    data = scan.generate_input(size=20000, seed=5, device="cpu")
    data[1].fill_(float("nan"))
    assert scan.check_implementation(copy.deepcopy(data), starter.custom_kernel(data)) == (True, "")
    hist_problem = load("histogram_v2")
    hist = import_reference(hist_problem)
    starter = import_submission(hist_problem.path / "submission.py")
    data = hist.generate_input(size=4097, seed=5, contention=50, device="cpu")  # a last, partial block
    data[1].fill_(-5)
    assert hist.check_implementation(copy.deepcopy(data), starter.custom_kernel(data)) == (True, "")
