"""`ksuite submit gpumode`: package -> lint -> local pre-check -> score -> send -> follow, as one function.

The local pre-check follows the server's order (test, then benchmark, then leaderboard with a second,
secret-seeded run), each only if the one before passed. Without CUDA it stops after the tests: the
interpreter cannot run the leaderboard's benchmark sizes and CPU times are not the leaderboard's
(KSUITE_GPUMODE_CPU_BENCH=1 forces them, for problems with small benchmarks).
"""

from __future__ import annotations

import json
import secrets
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from submit.gpumode import lint as lint_rules
from submit.gpumode.choose import fastest_recorded
from submit.gpumode.client import Client, ClientError, Exit, summarize
from submit.gpumode.local import LocalRun, can_time_here, run_local, score_ns
from submit.gpumode.package import package, write
from submit.gpumode.problem import ROOT, GpuModeError, GpuModeProblem, load

NEEDS_GPU = "timing needs a GPU and none is visible here"
MODES_BEFORE = {"test": ["test"], "benchmark": ["test", "benchmark"], "profile": ["test", "benchmark"],
                "leaderboard": ["test", "benchmark", "leaderboard"]}


@dataclass(frozen=True)
class SubmitOptions:
    gpu: str = "H100"
    mode: str = "leaderboard"
    out: Path | None = None
    check: bool = True
    dry_run: bool = False
    answer_json: Path | None = None
    poll_s: float = 5.0


def default_solution(problem: GpuModeProblem, echo: Callable[[str], None] | None = None,
                     gpu: str | None = None) -> Path:
    """A hand-written GPU MODE file, else the fastest solution our runs recorded, else the starter, else
    the folder's own sample (as on the leaderboard)."""
    own = ROOT / "solutions" / "gpumode" / problem.name / "submission.py"
    if own.is_file():
        return own
    best = fastest_recorded(problem.name, problem.ranking_by, ROOT / "results", ROOT / "solutions", gpu,
                            problem.benchmarks)
    if best is not None:
        if echo:
            echo(f"solution: {best.path.relative_to(ROOT)} (fastest in run {best.run} on {best.gpu}: {best.how})")
        return best.path
    for path in (ROOT / "solutions" / problem.name / "triton_starter.py", problem.path / "submission.py"):
        if path.is_file():
            return path
    raise GpuModeError(f"{problem.name}: no default solution; name a SOLUTION file")


def describe(run: LocalRun) -> list[str]:
    """Lines for one local run: the verdict, failing tests, benchmark means."""
    lines = [f"local {run.mode}: {'pass' if run.passed else 'FAIL'} ({run.meaning})"]
    r = run.results
    count = int(r.get("test-count", 0))
    for i in range(count):
        if f"test.{i}.spec" not in r:  # the child stopped before this test (its cause is the last line)
            lines.append(f"  {count - i} of {count} tests not run")
            break
        if r.get(f"test.{i}.status") != "pass":
            lines.append(f"  test {r[f'test.{i}.spec']}: {r.get(f'test.{i}.error', 'did not finish')}")
    for i in range(int(r.get("benchmark-count", 0))):
        if f"benchmark.{i}.mean" in r:
            lines.append(f"  benchmark {r[f'benchmark.{i}.spec']}: mean {float(r[f'benchmark.{i}.mean']) / 1e3:.3f} us"
                         f" over {r[f'benchmark.{i}.runs']} runs ({r.get('timer')})")
        elif f"benchmark.{i}.error" in r:
            lines.append(f"  benchmark {r[f'benchmark.{i}.spec']}: {r[f'benchmark.{i}.error']}")
    if not run.passed and run.stderr:
        lines.append("  " + run.stderr.splitlines()[-1])
    return lines


def precheck(problem: GpuModeProblem, submission: Path, mode: str, echo: Callable[[str], None]) -> bool:
    """The server's sequence, locally; prints the score the leaderboard would compute from the benchmarks."""
    for step in MODES_BEFORE[mode]:
        if step != "test" and not can_time_here():
            echo(f"local {step}: skipped ({NEEDS_GPU}; the tests passed through Triton's interpreter)")
            return True
        runs = [run_local(problem, submission, step)]
        if step == "leaderboard":
            runs.append(run_local(problem, submission, step, secret=secrets.randbelow(2**31)))
        for run in runs:
            for line in describe(run):
                echo(line)
            if not run.passed:
                return False
        if step == "benchmark":
            score = score_ns(runs[0].benchmark_means_ns(), problem.ranking_by)
            shown = f"{score / 1e3:.3f} us" if score is not None else "none"
            echo(f"score ({problem.ranking_by} benchmark mean): {shown}")
    return True


def build(problem: GpuModeProblem, solution: Path, options: SubmitOptions, echo) -> tuple[Path, list[str]]:
    text = package(solution, problem.name, options.gpu)
    out = options.out or Path(tempfile.mkdtemp(prefix="ksuite-submit-")) / "submission.py"
    write(text, out)
    echo(f"packaged {solution} -> {out} ({len(text.encode())} bytes)")
    return out, lint_rules.lint(out, problem.name, options.gpu, problem.gpus, problem.path)


def send(problem: GpuModeProblem, out: Path, options: SubmitOptions, echo) -> int:
    client = Client.from_env(poll_s=options.poll_s, progress=echo)
    sid = client.submit(problem.name, options.gpu, options.mode, "submission.py", out.read_bytes())
    echo(f"sent: submission {sid} ({problem.name} on {options.gpu}, mode {options.mode})")
    answer = client.wait(sid)
    lines, ranks = summarize(answer)
    for line in lines:
        echo(line)
    status = (answer.get("job") or {}).get("status", "unknown")
    if options.mode == "leaderboard":
        echo(f"ranked and secret runs both passed: {'yes' if ranks else 'no'}")
    if options.answer_json:
        Path(options.answer_json).write_text(client._redact(json.dumps(answer, indent=2)) + "\n", encoding="utf-8")
    ok = status == "succeeded" and (ranks or options.mode != "leaderboard")
    return Exit.OK if ok else Exit.FAILED


def submit(problem_ref: str, solution: str | None, options: SubmitOptions, echo: Callable[[str], None]) -> int:
    """The whole flow; returns the exit code (2 lint refusal, 1 failed check or run, client codes)."""
    problem = load(problem_ref)
    solution_path = Path(solution) if solution else default_solution(problem, echo, options.gpu)
    out, refusals = build(problem, solution_path, options, echo)
    for refusal in refusals:
        echo(f"refused: {refusal}")
    if refusals:
        return Exit.USAGE
    echo("lint: pass")
    if options.check and not precheck(problem, out, options.mode, echo):
        return Exit.FAILED
    if options.dry_run:
        echo("dry run: not sent")
        return Exit.OK
    try:
        return send(problem, out, options, echo)
    except ClientError as exc:
        echo(f"error: {exc}")
        return exc.exit_code
