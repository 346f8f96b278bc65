"""Why the bench times some baselines slower than `ksuite confirm` times them paired. A GPU probe of the bench's order.

Across every committed paired record (scripts/bench_vs_paired.py, 2026-12-07), the bench's median over the paired
median of the same (implementation, shape, dtype) is about 1.00 for ours, torch.compile and eager at short calls,
but 1.11 on the H200 and 1.04 on the H100 for PyTorch's fused rmsnorm (its fastest call 1.15x and 1.10x the paired
one's, 1.18-1.25x at 7x3584 and 509x8192), 1.01-1.03 for Liger, and 1.07 for eager (cuBLAS) at matmul's calls past
100 us on the H200, where ours is 1.00. A bench times
the baselines first, in one child in the order eager, fused, compile, compile-max-autotune, liger, then each
solution in its own child, with CUDA C++ and Triton builds compiling on the spare CPU cores meanwhile; confirm times
them all in one child, interleaved. The bench's children come from a pool that keeps four spare workers started
ahead of the jobs (harness/children/worker_pool.py), each with its own CUDA context on the same GPU, idle beside the
timing; confirm's child runs alone. This runs the bench's own jobs (harness.jobs.runner.run_job, one child each)
in several orders on the same shapes, then the paired job, and prints each implementation's median per condition
over its paired median:
  bench        the baselines' child, then the solution's (the bench's order), from the bench's pool
  reversed     the solution's child, then the baselines' in reverse order
  alone        each implementation in a child of its own, solution first
  busy-host    the bench's order with all CPU cores but one spinning (the builds a bench compiles beside them)
  bench-again  the bench's order once more (how far two passes of one order differ)
  no-spares    the bench's order, the pool's workers stopped first and none started ahead (the baselines' worker
               stays for reuse, as in the bench, idle while the solution's runs)
  paired       one child, interleaved rounds, no other worker alive (what confirm does)
If a baseline is slow only where it shares a child with eager, only under busy-host, or only beside the spares,
that is the bias's cause.
Usage (GPU machine, Liger installed for rmsnorm's Liger rows): python3 scripts/child_order_probe.py OUT.tsv
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.spec import Options, ProblemRef, SolutionRef  # noqa: E402


@dataclass(frozen=True)
class Case:
    problem: str
    solution: str
    baselines: tuple[str, ...]
    shapes: tuple[str, ...]
    dtype: str = "bfloat16"


CASES = (
    Case("rmsnorm", "triton_family", ("eager", "fused", "liger"), ("7x3584", "509x8192")),
    Case("matmul", "triton_tma_persistent", ("eager",), ("8192x3072x8192", "3001x8192x28672")),
)
CONDITIONS = ("bench", "reversed", "alone", "busy-host", "bench-again", "no-spares", "paired")


def jobs(condition: str, baselines: tuple[str, ...], solution: str) -> list[tuple[str, ...]]:
    """The children a condition runs, in order, each the names it times (the paired condition: one child of all)."""
    if condition in ("bench", "busy-host", "bench-again", "no-spares"):
        return [baselines, (solution,)]
    if condition == "reversed":
        return [(solution,), tuple(reversed(baselines))]
    if condition == "alone":
        return [(solution,), *((b,) for b in baselines)]
    if condition == "paired":
        return [(*baselines, solution)]
    raise ValueError(f"unknown condition {condition!r}")


def pivot(rows: list[dict]) -> list[list[str]]:
    """One row per (problem, shape, implementation): each condition's median over the paired one's (the
    paired median itself in its column); '-' where a condition has no record."""
    medians = {(r["problem"], r["shape"], r["impl"], r["condition"]): r["median_us"] for r in rows}
    keys = sorted({k[:3] for k in medians}, key=lambda k: (k[0], k[1], k[2]))
    table = []
    for key in keys:
        paired = medians.get((*key, "paired"))
        cells = []
        for condition in CONDITIONS:
            value = medians.get((*key, condition))
            if value is None:
                cells.append("-")
            elif condition == "paired" or not paired:
                cells.append(f"{value:.2f} us")
            else:
                cells.append(f"{value / paired:.3f}")
        table.append([*key, *cells])
    return table


def spin() -> None:
    while True:
        pass


class BusyHost:
    """Every CPU core but one spinning, for the span of a with-block."""

    def __enter__(self):
        self.procs = [multiprocessing.Process(target=spin, daemon=True) for _ in range(max(1, os.cpu_count() - 1))]
        for p in self.procs:
            p.start()
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.join()


def run_condition(condition: str, case: Case, options: Options, bench_pool) -> list[dict]:
    """One condition's records. `bench_pool` is the case's pool with the bench's spares (a WorkerPool); the
    no-spares and paired conditions close it first, so they come last."""
    from harness.children.worker_pool import WorkerPool
    from harness.jobs.pairwise import run_together
    from harness.jobs.runner import run_job

    problem = ProblemRef(case.problem, ROOT / "problems" / f"{case.problem}.py")
    solution_path = ROOT / "solutions" / case.problem / f"{case.solution}.py"
    refs = {name: SolutionRef(name) for name in case.baselines} | {case.solution: SolutionRef(case.solution,
                                                                                             solution_path)}
    opts = replace(options, dtypes=(case.dtype,), custom_shapes=case.shapes, baselines=case.baselines)
    records = []
    pool = bench_pool
    if condition in ("no-spares", "paired"):
        bench_pool.close()  # every spare stopped: from here no worker is alive between jobs
        pool = WorkerPool(prestart=False, spares=0) if condition == "no-spares" else None
    for names in jobs(condition, case.baselines, case.solution):
        impls = [refs[n] for n in names]
        if condition == "paired":
            records += run_together(problem, impls, opts).records
            continue
        with BusyHost() if condition == "busy-host" else contextlib.nullcontext():
            records += list(run_job(problem, impls, opts, lambda e: None, pool=pool))
    if pool is not None and pool is not bench_pool:
        pool.close()
    return [dict(condition=condition, problem=case.problem, impl=r["solution"],
                 shape="x".join(str(v) for v in r["shape"].values()), median_us=r.get("median_us"),
                 min_us=r.get("min_us"), lead_us=r.get("lead_us"), runs=r.get("runs"), error=r.get("error"))
            for r in records if r.get("event", "measurement") == "measurement" and r.get("median_us")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--case", action="append", choices=[c.problem for c in CASES], default=None)
    args = parser.parse_args(argv)
    from tabulate import tabulate

    from harness.children.worker_pool import WorkerPool

    options = Options(timeout_s=240)
    rows: list[dict] = []
    fields = ["condition", "problem", "shape", "impl", "median_us", "min_us", "lead_us", "runs", "error"]
    with args.out.open("w") as sink:
        sink.write("\t".join(fields) + "\n")
        for case in [c for c in CASES if not args.case or c.problem in args.case]:
            bench_pool = WorkerPool()  # the bench's: spares started ahead on a GPU
            for condition in CONDITIONS:
                got = run_condition(condition, case, options, bench_pool)
                for r in got:
                    sink.write("\t".join(str(r[f]) for f in fields) + "\n")
                sink.flush()
                rows += got
                print(f"{case.problem} {condition}: {len(got)} records", flush=True)
            # after each case, so a time limit that cuts the next one short keeps this table
            print(tabulate(pivot(rows), headers=["problem", "shape", "implementation", *CONDITIONS]), flush=True)
    print(f"each condition's median over the paired one's; rows in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
