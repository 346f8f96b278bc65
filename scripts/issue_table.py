"""The issues' own opening tables, timed again: each row's shape with the solution users take today beside the
starter and every baseline, one `ksuite bench --shape` per row.

Why: the every-shape issue opened on seven (problem, shape, dtype) rows where the tuned solutions lost to
torch.compile, Liger and our own starters, and the compute-bound issue on four. Most of those shapes are in no
workload set (neither tuned on nor held out), so they are an out-of-sample check of what the tables and rules
learned; the table says which set each shape is in. Each row is a separate bench (its own run file under
results/<gpu>/), so a row that fails or hangs is a recorded failure and the others still run.
Usage (GPU machine): python3 scripts/issue_table.py [--issue 10|14 ...] [--timeout S] [--out DIR] [--dry-run]
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from harness.loader import load_problem  # noqa: E402
from harness.shape_spec import custom_shapes  # noqa: E402
from suite.results_store import RunFile  # noqa: E402

# (issue, problem, shape, dtype, solution users take there, baselines the bench times; None: every one that applies)
ROWS = [
    (10, "rmsnorm", "16384x2048", "float16", None, None),
    (10, "rmsnorm", "2048x12288", "bfloat16", None, None),
    (10, "layernorm", "3000x5120", "bfloat16", None, None),
    (10, "softmax", "1000x50257", "float16", None, None),
    (10, "rotary", "1x32x8192x128", "bfloat16", None, None),
    (10, "vectorsum_v2", "3276800", "float32", None, None),
    (10, "cross_entropy", "4096x128256", "bfloat16", None, None),
    (14, "matmul", "4096x4096x4096", "float16", "cuda_cutlass_dispatch", "eager"),  # eager: cuBLAS
    (14, "matmul", "8192x8192x8192", "bfloat16", "cuda_cutlass_dispatch", "eager"),
    (14, "attention_causal", "4x16x4096x128", "bfloat16", "cuda_cutlass_fmha", None),
    (14, "fused_mlp", "4096x4096x14336", "bfloat16", "triton_fused_gate_up", None),
]
STARTER = "triton_starter"
COLUMNS = ["issue", "problem", "shape", "dtype", "workload_set", "best_baseline", "baseline_us", "solution",
           "solution_us", "solution_x", "starter_us", "starter_x", "run", "error"]


def workload_set(problem: str, shape: str) -> str:
    """tuning or heldout where the problem's workload has the shape, else 'neither' (never tuned on)."""
    loaded = load_problem(ROOT / "problems" / f"{problem}.py")
    sizes = custom_shapes(loaded, (shape,))[0]
    found = loaded.meta.workload().set_of(sizes) if loaded.meta.workload_fn else None
    return found or "neither"


def solution_for(problem: str, named: str | None) -> str:
    recommended = named or load_problem(ROOT / "problems" / f"{problem}.py").meta.recommended
    if not recommended:
        raise SystemExit(f"issue_table: problems/{problem}.py names no recommended solution; name one in ROWS")
    return recommended


def bench_command(problem: str, shape: str, dtype: str, solution: str, baselines: str | None,
                  timeout: float) -> list[str]:
    command = [sys.executable, "-m", "suite", "bench", problem, "--shape", shape, "--dtype", dtype,
               "--solution", solution, "--solution", STARTER, "--timeout", str(timeout)]
    return command + (["--baselines", baselines] if baselines else [])


def run_files() -> set[Path]:
    return set((ROOT / "results").glob("*/*.jsonl"))


def summarize(records: list[dict], solution: str) -> dict:
    """The row's numbers from one run's records: the solution's and the starter's median, each as the best
    baseline's time over theirs (above 1: faster), and which baseline was best."""
    by_name = {r.get("solution"): r for r in records if r.get("kind") != "baseline"}
    baselines = [r for r in records if r.get("kind") == "baseline" and r.get("median_us")]
    best = min(baselines, key=lambda r: r["median_us"]) if baselines else None
    row = {"best_baseline": best["solution"] if best else "", "baseline_us": best["median_us"] if best else ""}
    errors = []
    for key, name in (("solution", solution), ("starter", STARTER)):
        rec = by_name.get(name)
        us = rec.get("median_us") if rec and rec.get("correct") is not False else None
        row[f"{key}_us"] = us if us else ""
        row[f"{key}_x"] = round(best["median_us"] / us, 3) if (best and us) else ""
        if rec is None or not us:
            errors.append(f"{name}: {(rec or {}).get('error') or 'no timing'}")
    row["error"] = "; ".join(errors)
    return row


def run_row(issue, problem, shape, dtype, named, baselines, timeout, logs: Path) -> dict:
    solution = solution_for(problem, named)
    row = {"issue": issue, "problem": problem, "shape": shape, "dtype": dtype, "solution": solution,
           "workload_set": workload_set(problem, shape), "run": "", "error": ""}
    before = run_files()
    log = logs / f"{problem}-{shape}-{dtype}.txt"
    command = bench_command(problem, shape, dtype, solution, baselines, timeout)
    try:
        with open(log, "w") as out:
            subprocess.run(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, timeout=6 * timeout)
    except subprocess.TimeoutExpired:
        row["error"] = f"bench did not finish in {6 * timeout:.0f} s"
    new = sorted(run_files() - before)
    if not new:
        row["error"] = row["error"] or f"no run file written (see {log.name})"
        return row
    row["run"] = new[-1].stem
    row.update(summarize([m.to_dict() for m in RunFile(new[-1]).read()], solution))
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--issue", type=int, action="append", help="only this issue's rows (repeatable)")
    parser.add_argument("--timeout", type=float, default=120.0, help="the bench's --timeout per row")
    parser.add_argument("--out", type=Path, default=Path("/tmp/issue_table"), help="issue-table.tsv and logs/")
    parser.add_argument("--dry-run", action="store_true", help="print each row's set and command; run nothing")
    args = parser.parse_args(argv)
    rows = [r for r in ROWS if not args.issue or r[0] in args.issue]
    if args.dry_run:
        for issue, problem, shape, dtype, named, baselines in rows:
            command = bench_command(problem, shape, dtype, solution_for(problem, named), baselines, args.timeout)
            print(f"#{issue} {problem} {shape} {dtype} ({workload_set(problem, shape)}): {' '.join(command[1:])}")
        return 0
    logs = args.out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    results = []
    with open(args.out / "issue-table.tsv", "w", newline="") as f:  # a row at a time: a cut-off call keeps them
        writer = csv.DictWriter(f, COLUMNS, delimiter="\t", extrasaction="ignore")
        writer.writeheader()
        for spec in rows:
            started = time.time()
            results.append(run_row(*spec, args.timeout, logs))
            writer.writerow(results[-1])
            f.flush()
            print(f"{spec[1]} {spec[2]} {spec[3]}: {time.time() - started:.0f} s", flush=True)
    print("\t".join(COLUMNS))
    for r in results:
        print("\t".join(str(r.get(c, "")) for c in COLUMNS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
