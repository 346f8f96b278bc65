"""Run the cheat corpus through the harness on a CUDA GPU, check the honest starters still pass every
integrity check there, and time `ksuite bench` with the integrity checks on and off.

    python3 scripts/integrity_gpu.py [corpus] [starters] [overhead]   # default: all three; from the repo root;
                                                                      # writes $OUT/integrity_gpu.json if OUT is set

Prints a table (cheat, expected reason, caught?, actual reason). Exit 0 when every cheat is caught with
its reason and every honest candidate passes, 1 otherwise. Takes a few minutes (one cheat hangs until
its 20 s timeout).
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

from harness import Options, ProblemRef, SolutionRef, evaluate_problem  # noqa: E402
from harness.runner import run_job  # noqa: E402

GPU = Options(interpret=False, time=True, shapes="all", dtypes=("primary",), timeout_s=20, budget_s=0.2)
TIMED_PROBLEMS = ("rmsnorm", "softmax", "matmul")


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
        rows.append(dict(cheat=name, expected="passes", caught=ok,
                         actual="passes" if ok else next(r.get("error") for r in mine if not r["correct"])))
    for cheat in CHEATS:
        mine = [r for r in records if r["solution"] == cheat.name]
        errors = [r.get("error") for r in mine]
        caught = bool(mine) and not any(r["correct"] for r in mine) and all(cheat.matches(e) for e in errors)
        actual = next((e for e in errors if e), "PASSED (not caught)")
        rows.append(dict(cheat=cheat.name, expected=cheat.expected + (" (known gap)" if cheat.known_gap else ""),
                         caught=caught, actual=actual, cuda_only=cheat.cuda_only, known_gap=cheat.known_gap))
    return rows


def starters() -> list[tuple[ProblemRef, SolutionRef]]:
    out = []
    for path in sorted((ROOT / "problems").glob("*.py")):
        starter = ROOT / "solutions" / path.stem / "triton_starter.py"
        if not path.name.startswith("_") and starter.is_file():
            out.append((ProblemRef(path.stem, path), SolutionRef("triton_starter", starter)))
    return out


def starter_rows() -> list[dict]:
    """Honest solutions on the device, integrity checks on: none may be rejected."""
    rows = []
    for problem, solution in starters():
        records = evaluate_problem(problem, [solution], replace(GPU, time=False, timeout_s=600), env={},
                                   with_baselines=False)
        bad = [r.error for r in records if not r.correct]
        rows.append(dict(problem=problem.name, passed=not bad, error=bad[0] if bad else None))
    return rows


def overhead_rows() -> list[dict]:
    """Wall time of checking + timing each starter (no baselines) with integrity checks on and off."""
    rows = []
    wanted = {p.name: (p, s) for p, s in starters() if p.name in TIMED_PROBLEMS}
    for name, (problem, solution) in wanted.items():
        row = {"problem": name}
        for label, on in (("on", True), ("off", False)):
            started = time.perf_counter()
            records = evaluate_problem(problem, [solution], replace(GPU, shapes="large", integrity=on,
                                                                    timeout_s=600), env={}, with_baselines=False)
            row[f"wall_s_{label}"] = round(time.perf_counter() - started, 2)
            row[f"correct_{label}"] = all(r.correct for r in records)
        row["overhead_s"] = round(row["wall_s_on"] - row["wall_s_off"], 2)
        rows.append(row)
    return rows


def main() -> int:
    if not torch.cuda.is_available():
        print("integrity_gpu.py needs a CUDA device; none is visible", file=sys.stderr)
        return 2
    parts = set(sys.argv[1:]) or {"corpus", "starters", "overhead"}  # e.g. `integrity_gpu.py corpus`
    corpus, honest, overhead = [], [], []
    if "corpus" in parts:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = corpus_rows(Path(tmp))
        print(tabulate([[r["cheat"], r["expected"], "yes" if r["caught"] else "NO", r["actual"][:110]]
                        for r in corpus], headers=["cheat", "expected reason", "caught?", "actual reason"]))
    if "starters" in parts:
        honest = starter_rows()
        print("\n" + tabulate([[r["problem"], "pass" if r["passed"] else "REJECTED", r["error"] or ""]
                               for r in honest], headers=["starter", "with integrity checks", "error"]))
    if "overhead" in parts:
        overhead = overhead_rows()
        print("\n" + tabulate(overhead, headers="keys"))
    summary = {"gpu": torch.cuda.get_device_name(), "corpus": corpus, "starters": honest, "overhead": overhead}
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "integrity_gpu.json").write_text(json.dumps(summary, indent=1, default=str))
    ok = all(r["caught"] for r in corpus if not r.get("known_gap")) and all(r["passed"] for r in honest)
    print(f"\n{sum(r['caught'] for r in corpus)}/{len(corpus)} corpus rows as expected; "
          f"{sum(r['passed'] for r in honest)}/{len(honest)} starters pass with integrity checks on")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
