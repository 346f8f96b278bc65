"""Run the cheat corpus through the harness on a CUDA GPU, check every honest solution in solutions/
(ours and the KernelBench ones, Triton and CUDA) still passes every integrity check there, and time
checking + timing with the integrity checks on and off.

    python3 scripts/integrity_gpu.py [corpus] [starters|solutions] [overhead]   # default: all three;
        # from the repo root; writes $OUT/integrity_gpu.json if OUT is set

Prints a table per part and a summary: cheats tried / caught / missed, honest solutions rejected, and
the integrity checks' extra wall time (goal: under 25 %). Exit 0 when every cheat is caught with its
reason and no honest solution is rejected, 1 otherwise. Takes a few minutes (one cheat hangs until its
20 s timeout; CUDA solutions compile on first use).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import torch  # noqa: E402
from fixtures.cheats import CHEATS, HONEST, PROBLEM, Cheat  # noqa: E402
from tabulate import tabulate  # noqa: E402

from harness import Options, ProblemRef, SolutionRef, cuda_build, evaluate_problem  # noqa: E402
from harness.jobs.runner import run_job  # noqa: E402
from suite.registry import Registry  # noqa: E402

GPU = Options(interpret=False, time=True, shapes="all", dtypes=("primary",), timeout_s=20, budget_s=0.2)
TIMED_PROBLEMS = ("rmsnorm", "softmax", "matmul")
OVERHEAD_GOAL = 0.25  # integrity checks may add at most this share of the wall time


def corpus_rows(folder: Path) -> list[dict]:
    """Every cheat (CUDA-only ones included) and the honest candidate, in as few children as the crashes allow."""
    last = ("segfault", "hangs")
    cheats = sorted(CHEATS, key=lambda c: last.index(c.name) + 1 if c.name in last else 0)
    refs = [SolutionRef(n, Cheat(n, "", ()).path) for n in HONEST]
    for cheat in cheats:
        path = cheat.path
        if path.suffix == ".txt":
            path = folder / f"{cheat.name}.py"
            shutil.copy(cheat.path, path)
        refs.append(SolutionRef(cheat.name, path))
    records = list(run_job(ProblemRef("scale_rows", PROBLEM), refs, GPU, lambda e: None))
    rows = []
    for name in HONEST:
        mine = [r for r in records if r["solution"] == name]
        ok = bool(mine) and all(r["correct"] for r in mine)
        rows.append(dict(cheat=name, honest=True, expected="passes", caught=ok,
                         actual="passes" if ok else next(r.get("error") for r in mine if not r["correct"])))
    for cheat in CHEATS:
        mine = [r for r in records if r["solution"] == cheat.name]
        errors = [r.get("error") for r in mine]
        caught = bool(mine) and not any(r["correct"] for r in mine) and all(cheat.matches(e) for e in errors)
        actual = next((e for e in errors if e), "PASSED (not caught)")
        rows.append(dict(cheat=cheat.name, expected=cheat.expected + (" (known gap)" if cheat.known_gap else ""),
                         caught=caught, actual=actual, cuda_only=cheat.cuda_only, known_gap=cheat.known_gap))
    return rows


def solutions() -> list[tuple[ProblemRef, list[SolutionRef]]]:
    """Every problem with its solutions on disk: problems/*.py, and problems/kernelbench/level*/ with the
    candidates kept under solutions/kernelbench/."""
    found = [(p, Registry().solutions(p)) for p in Registry().problems()]
    kernelbench = ROOT / "problems" / "kernelbench"
    if kernelbench.is_dir():
        registry = Registry(kernelbench_dir=kernelbench)
        found += [(p, registry.solutions(p)) for p in registry.problems()]
    return [(p, sols) for p, sols in found if sols]


def solution_rows() -> list[dict]:
    """Honest solutions on the device, integrity checks on: none may be rejected. CUDA C++ ones are built
    first, in parallel (harness.cuda_build); then one child per problem."""
    found = solutions()
    options = cuda_build.prebuild_for([(p.path, s.path) for p, sols in found for s in sols],
                                      replace(GPU, time=False, timeout_s=600))
    rows = []
    for problem, sols in found:
        records = list(run_job(problem, sols, options, lambda e: None))
        for sol in sols:
            mine = [r for r in records if r["solution"] == sol.name]
            bad = [r.get("error") for r in mine if not r["correct"]]
            rows.append(dict(problem=problem.name, solution=sol.name, passed=bool(mine) and not bad,
                             error=bad[0] if bad else (None if mine else "no records")))
    return rows


def overhead_rows() -> list[dict]:
    """Wall time of checking + timing each problem's triton_starter (no baselines), integrity on and off."""
    rows = []
    wanted = {p.name: (p, s) for p, sols in solutions() for s in sols
              if p.name in TIMED_PROBLEMS and s.name == "triton_starter"}
    for name, (problem, solution) in wanted.items():
        row = {"problem": name}
        for label, on in (("on", True), ("off", False)):
            started = time.perf_counter()
            records = evaluate_problem(problem, [solution], replace(GPU, shapes="large", integrity=on,
                                                                    timeout_s=600), env={}, with_baselines=False)
            row[f"wall_s_{label}"] = round(time.perf_counter() - started, 2)
            row[f"correct_{label}"] = all(r.correct for r in records)
        row["overhead_s"] = round(row["wall_s_on"] - row["wall_s_off"], 2)
        row["overhead_pct"] = round(100.0 * row["overhead_s"] / max(row["wall_s_off"], 1e-9), 1)
        rows.append(row)
    return rows


def summary_lines(corpus: list, honest: list, overhead: list) -> tuple[list[str], bool]:
    lines, ok = [], True
    if corpus:
        cheats = [r for r in corpus if not r.get("honest")]
        missed = [r["cheat"] for r in cheats if not r["caught"]]
        honest_fail = [r["cheat"] for r in corpus if r.get("honest") and not r["caught"]]
        lines.append(f"corpus: {len(cheats)} cheats tried, {len(cheats) - len(missed)} caught with their reason, "
                     f"{len(missed)} missed{' (' + ', '.join(missed) + ')' if missed else ''}; honest fixture "
                     + ("passes" if not honest_fail else "REJECTED"))
        ok &= not honest_fail and all(r["caught"] for r in cheats if not r.get("known_gap"))
    if honest:
        rejected = [f"{r['problem']}/{r['solution']}" for r in honest if not r["passed"]]
        lines.append(f"solutions: {len(honest)} honest solutions checked, {len(rejected)} rejected"
                     + (f" ({', '.join(rejected)})" if rejected else ""))
        ok &= not rejected
    if overhead:
        on, off = sum(r["wall_s_on"] for r in overhead), sum(r["wall_s_off"] for r in overhead)
        share = (on - off) / off if off else 0.0
        lines.append(f"overhead: integrity on {on:.1f} s vs off {off:.1f} s: {100 * share:+.1f} % "
                     f"(goal under {100 * OVERHEAD_GOAL:.0f} %{'' if share < OVERHEAD_GOAL else ': MISSED'})")
    return lines, ok


def main() -> int:
    if not torch.cuda.is_available():
        print("integrity_gpu.py needs a CUDA device; none is visible", file=sys.stderr)
        return 2
    parts = set(sys.argv[1:]) or {"corpus", "starters", "overhead"}  # e.g. `integrity_gpu.py corpus`
    if "solutions" in parts:
        parts.add("starters")
    corpus, honest, overhead = [], [], []
    if "corpus" in parts:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = corpus_rows(Path(tmp))
        print(tabulate([[r["cheat"], r["expected"], "yes" if r["caught"] else "NO", r["actual"][:110]]
                        for r in corpus], headers=["cheat", "expected reason", "caught?", "actual reason"]))
    if "starters" in parts:
        honest = solution_rows()
        print("\n" + tabulate([[r["problem"], r["solution"], "pass" if r["passed"] else "REJECTED",
                                (r["error"] or "")[:110]] for r in honest],
                               headers=["problem", "solution", "with integrity checks", "error"]))
    if "overhead" in parts:
        overhead = overhead_rows()
        print("\n" + tabulate(overhead, headers="keys"))
    lines, ok = summary_lines(corpus, honest, overhead)
    summary = {"gpu": torch.cuda.get_device_name(), "summary": lines, "corpus": corpus, "solutions": honest,
               "overhead": overhead}
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "integrity_gpu.json").write_text(json.dumps(summary, indent=1, default=str))
    print("\n" + "\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
