"""The GPU MODE evaluation protocol, run as its own process, as the leaderboard runs eval.py.

    python -m submit.gpumode.evaluate MODE CASEFILE PROBLEM_DIR SUBMISSION

Results are `key: value` lines on the file descriptor named by env POPCORN_FD; the exit code says how it
ended (ExitCode). With env POPCORN_SEED set (the secret run), every case seed becomes
cantor(seed, secret). Without CUDA the timed loop falls back to time.perf_counter and says so
(`timer: perf_counter`): those are CPU times of the Triton interpreter, not GPU times.
"""

from __future__ import annotations

import copy
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from harness.timing import FLUSH_BYTES
from submit.gpumode.problem import GpuModeError, GpuModeProblem, import_reference, import_submission

MODES = ("test", "benchmark", "leaderboard", "profile")


class ExitCode:
    OK, CUDA_FAIL, PIPE_FAIL, VALIDATION_FAIL, BAD_SPEC, TIMEOUT = 0, 110, 111, 112, 113, 114


class SpecError(ValueError):
    pass


def _value(text: str):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_specs(text: str) -> list[dict]:
    """Case lines like `size: 1023; seed: 4242`; blank lines are skipped, anything else malformed fails."""
    cases = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        case = {}
        for part in line.split(";"):
            key, sep, value = part.partition(":")
            if not sep or not key.strip() or not value.strip():
                raise SpecError(f"line {number}: bad case spec {line.strip()!r} (want `key: value; ...`)")
            case[key.strip()] = _value(value.strip())
        cases.append(case)
    return cases


def format_spec(case: dict) -> str:
    return "; ".join(f"{k}: {v}" for k, v in case.items())


def cantor(a: int, b: int) -> int:
    """Cantor pairing: one seed from the case seed and the secret seed, unguessable without the secret."""
    return (a + b) * (a + b + 1) // 2 + b


def apply_secret(cases: list[dict], secret: int | None) -> list[dict]:
    if secret is None:
        return cases
    return [{**c, "seed": cantor(c["seed"], secret)} if "seed" in c else dict(c) for c in cases]


@dataclass(frozen=True)
class Limits:
    """Stopping rule: >= min_runs, then stop at RSE < target, total timed > budget, or wall > wall_s.

    max_runs (100) is our cap: FORMATS.md fixes no maximum, so it is an assumption to verify.
    """

    min_runs: int = 3
    max_runs: int = 100
    target_rse: float = 0.001
    budget_s: float = 10.0
    wall_s: float = 120.0

    @classmethod
    def for_mode(cls, mode: str) -> Limits:
        budget = 30.0 if mode == "leaderboard" else 10.0
        # Tests and CPU pre-checks shrink the budget; the leaderboard's numbers are the defaults.
        budget = float(os.environ.get("KSUITE_GPUMODE_BUDGET_S", budget))
        wall = float(os.environ.get("KSUITE_GPUMODE_WALL_S", 120.0))
        return cls(budget_s=budget, wall_s=wall)


def stats(times_ns: list[float]) -> dict:
    n = len(times_ns)
    mean = statistics.fmean(times_ns)
    std = statistics.stdev(times_ns) if n > 1 else 0.0
    return {"runs": n, "mean": mean, "std": std, "err": std / math.sqrt(n), "best": min(times_ns),
            "worst": max(times_ns)}


class Timer:
    """One call timed: CUDA events around it after an L2 flush, or perf_counter on a CPU-only machine."""

    def __init__(self):
        self.cuda = torch.cuda.is_available()
        self.name = "cuda-events" if self.cuda else "perf_counter"
        self.flush = torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda") if self.cuda else None

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def time_ns(self, fn, data):
        if not self.cuda:
            begin = time.perf_counter()
            output = fn(data)
            return output, (time.perf_counter() - begin) * 1e9
        torch.cuda.synchronize()
        self.flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        output = fn(data)
        end.record()
        torch.cuda.synchronize()
        return output, start.elapsed_time(end) * 1e6


class Writer:
    """key: value lines on the POPCORN_FD descriptor, flushed per line so a crash loses nothing."""

    def __init__(self, stream):
        self.stream = stream

    def __call__(self, key: str, value) -> None:
        self.stream.write(f"{key}: {value}\n")
        self.stream.flush()


def run_tests(ref, kernel, cases: list[dict], log: Writer) -> bool:
    log("test-count", len(cases))
    ok = True
    for i, case in enumerate(cases):
        log(f"test.{i}.spec", format_spec(case))
        data = ref.generate_input(**case)
        good, message = ref.check_implementation(copy.deepcopy(data), kernel(data))
        log(f"test.{i}.status", "pass" if good else "fail")
        if not good:
            log(f"test.{i}.error", message)
            ok = False
    return ok


def time_case(ref, kernel, case: dict, timer: Timer, limits: Limits, recheck: bool) -> tuple[dict | None, str]:
    """The timed loop; with recheck every iteration uses a fresh input (seed + 13) and is checked."""
    case, times, wall = dict(case), [], time.perf_counter()
    data = None if recheck else ref.generate_input(**case)
    for _ in range(limits.max_runs):
        if recheck:
            case["seed"] = case.get("seed", 0) + 13
            data = ref.generate_input(**case)
        expected_input = copy.deepcopy(data) if recheck else None
        output, elapsed = timer.time_ns(kernel, data)
        if recheck:
            good, message = ref.check_implementation(expected_input, output)
            if not good:
                return None, message
        times.append(elapsed)
        if len(times) >= limits.min_runs:
            s = stats(times)
            if (s["err"] / s["mean"] < limits.target_rse or s["mean"] * s["runs"] > limits.budget_s * 1e9
                    or time.perf_counter() - wall > limits.wall_s):
                break
    return stats(times), ""


def run_benchmarks(ref, kernel, cases: list[dict], mode: str, log: Writer) -> bool:
    timer, limits = Timer(), Limits.for_mode(mode)
    log("timer", timer.name)
    if not timer.cuda:
        print("no CUDA: timing with time.perf_counter (CPU times, not GPU times)", file=sys.stderr)
    log("benchmark-count", len(cases))
    for i, case in enumerate(cases):
        log(f"benchmark.{i}.spec", format_spec(case))
        data = ref.generate_input(**case)
        kernel(data)  # warm-up: compilation and autotuning stay out of the timed loop
        timer.sync()
        data = ref.generate_input(**case)
        good, message = ref.check_implementation(copy.deepcopy(data), kernel(data))
        result = None
        if good:
            result, message = time_case(ref, kernel, case, timer, limits, recheck=mode == "leaderboard")
        if result is None:
            log(f"benchmark.{i}.status", "fail")
            log(f"benchmark.{i}.error", message)
            return False
        for key, value in result.items():
            log(f"benchmark.{i}.{key}", value)
    return True


def evaluate(mode: str, cases: list[dict], problem_dir: Path, submission: Path, log: Writer) -> int:
    problem = GpuModeProblem(name=Path(problem_dir).name, path=Path(problem_dir).resolve())
    ref = import_reference(problem)
    kernel = import_submission(submission).custom_kernel
    secret = os.environ.get("POPCORN_SEED")
    cases = apply_secret(cases, int(secret) if secret else None)
    if mode == "test":
        ok = run_tests(ref, kernel, cases, log)
    else:
        ok = run_benchmarks(ref, kernel, cases, mode, log)
    log("check", "pass" if ok else "fail")
    return ExitCode.OK if ok else ExitCode.VALIDATION_FAIL


def _open_pipe():
    try:
        return Writer(os.fdopen(int(os.environ["POPCORN_FD"]), "w"))
    except (KeyError, ValueError, OSError) as exc:
        print(f"cannot open the result pipe POPCORN_FD ({exc})", file=sys.stderr)
        return None


def main(argv: list[str]) -> int:
    if len(argv) != 4 or argv[0] not in MODES:
        print(f"usage: evaluate.py {{{'|'.join(MODES)}}} CASEFILE PROBLEM_DIR SUBMISSION", file=sys.stderr)
        return ExitCode.BAD_SPEC
    mode, casefile, problem_dir, submission = argv
    log = _open_pipe()
    if log is None:
        return ExitCode.PIPE_FAIL
    if mode == "profile":
        print("profile mode is not supported locally (it needs the leaderboard's profiler)", file=sys.stderr)
        log("check", "fail")
        return ExitCode.VALIDATION_FAIL
    try:
        cases = parse_specs(Path(casefile).read_text(encoding="utf-8"))
    except (SpecError, OSError, UnicodeDecodeError) as exc:
        print(f"{casefile}: {exc}", file=sys.stderr)
        return ExitCode.BAD_SPEC
    try:
        return evaluate(mode, cases, Path(problem_dir), Path(submission), log)
    except GpuModeError as exc:
        print(exc, file=sys.stderr)
        return ExitCode.VALIDATION_FAIL
    except BrokenPipeError:
        return ExitCode.PIPE_FAIL
    except torch.cuda.OutOfMemoryError as exc:  # a CUDA failure of the submission, not a wrong answer
        print(f"CUDA failure: {exc}", file=sys.stderr)
        return ExitCode.CUDA_FAIL
    except RuntimeError as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return ExitCode.CUDA_FAIL if "CUDA" in str(exc) else ExitCode.VALIDATION_FAIL
    except Exception as exc:  # noqa: BLE001 - the submission's own bug fails validation, with its cause
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return ExitCode.VALIDATION_FAIL


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
