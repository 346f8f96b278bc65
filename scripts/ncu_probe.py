"""Hardware counters (Nsight Compute) for the kernels behind a gap the timings alone do not explain.

For each implementation named (a baseline: eager, fused, compile, compile-max-autotune; or a solution file's
name), one process builds it at the shape as the bench does (the harness's inputs, weights and caches),
calls it a few times, then once more between cudaProfilerStart and cudaProfilerStop, so that `ncu
--profile-from-start off` reads only that call's kernels. A first pass without ncu builds and caches what
needs building (a CUTLASS extension takes minutes), so ncu's process only loads it. Per kernel it prints
the duration, the speed-of-light throughputs (compute, memory, DRAM), registers, achieved occupancy and
grid, and keeps ncu's CSV under --out. The clocks are left alone (--clock-control none), as the device
notes ask. Where ncu is missing or cannot read the counters, one line says so.

  python3 scripts/ncu_probe.py run attention_causal 1x64x16384x128 float16 fused cuda_cutlass_fmha --out DIR
  python3 scripts/ncu_probe.py target attention_causal 1x64x16384x128 float16 fused   # what ncu runs
"""

from __future__ import annotations

import argparse
import csv
import glob
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SECTIONS = ("SpeedOfLight", "Occupancy", "LaunchStats")
COLUMNS = (("Duration", "duration"), ("Compute (SM) Throughput", "compute %"), ("Memory Throughput", "memory %"),
           ("DRAM Throughput", "dram %"), ("Registers Per Thread", "regs"), ("Achieved Occupancy", "occupancy %"))

def build(problem_name: str, impl: str, shape_text: str, dtype: str):
    """(callable, inputs) for one implementation at one shape, built as the bench builds it."""
    import torch

    from harness.baselines import make_baseline
    from harness.inputs import build_candidate, make_inputs
    from harness.loader import load_candidate_class, load_problem
    from harness.shape_spec import custom_shapes
    from harness.spec import BASELINES
    from suite.registry import find_problem

    registry, ref = find_problem(problem_name)
    problem = load_problem(ref.path)
    shape = custom_shapes(problem, (shape_text,))[0]
    if impl in BASELINES:
        model = make_baseline(problem, impl, shape, dtype, 0, "cuda")
    else:
        cls = load_candidate_class(registry.solution(ref, impl).path)
        model = build_candidate(problem, cls, shape, dtype, 0, "cuda")
    inputs = make_inputs(problem, shape, dtype, 0, "cuda")
    torch.cuda.synchronize()
    return model, inputs


def target(problem_name: str, impl: str, shape_text: str, dtype: str, profile: bool) -> None:
    """Warm calls, then (profile) one call inside the profiler's start and stop."""
    import torch

    model, inputs = build(problem_name, impl, shape_text, dtype)
    with torch.no_grad():
        for _ in range(3):
            model(*inputs)
        torch.cuda.synchronize()
        if profile:
            torch.cuda.profiler.start()
            model(*inputs)
            torch.cuda.synchronize()
            torch.cuda.profiler.stop()


def find_ncu() -> str | None:
    """ncu on PATH, else the newest Nsight Compute or CUDA toolkit copy."""
    found = shutil.which("ncu")
    if found:
        return found
    candidates = sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu")) + sorted(glob.glob("/usr/local/cuda*/bin/ncu"))
    return candidates[-1] if candidates else None


def ncu_command(ncu: str, target_args: list[str]) -> list[str]:
    sections = [arg for name in SECTIONS for arg in ("--section", name)]
    return [ncu, "--clock-control", "none", "--profile-from-start", "off", "--csv", "--page", "details",
            *sections, sys.executable, str(Path(__file__).resolve()), "target", *target_args]


def parse_details(text: str) -> list[dict]:
    """ncu's --csv --page details output (other lines, the program's and ncu's own, skipped): one dict per
    kernel launch, in order, with its name, grid, block and the COLUMNS' values (value and unit)."""
    start = next((i for i, line in enumerate(text.splitlines()) if line.startswith('"ID"')), None)
    if start is None:
        return []
    rows = csv.DictReader(io.StringIO("\n".join(text.splitlines()[start:])))
    kernels: dict[str, dict] = {}
    for row in rows:
        kid = row.get("ID")
        if kid is None or not kid.strip().isdigit():
            continue
        kernel = kernels.setdefault(kid, {"id": int(kid), "name": row.get("Kernel Name", ""),
                                          "grid": row.get("Grid Size", ""), "block": row.get("Block Size", "")})
        for metric, label in COLUMNS:
            if row.get("Metric Name") == metric:
                unit = row.get("Metric Unit", "")
                kernel[label] = f"{row.get('Metric Value', '')}{' ' + unit if unit and unit != '%' else ''}"
    return sorted(kernels.values(), key=lambda k: k["id"])


def table(impl: str, kernels: list[dict]) -> list[str]:
    lines = []
    for k in kernels:
        values = "  ".join(f"{label} {k.get(label, '-')}" for _, label in COLUMNS)
        lines.append(f"{impl:24.24s} {k['name'][:60]:60s} grid {k['grid']} block {k['block']}  {values}")
    return lines


def run(args) -> int:
    ncu = find_ncu()
    if ncu is None:
        print("ncu_probe: Nsight Compute (ncu) not found on PATH, /opt/nvidia/nsight-compute or /usr/local/cuda*/bin")
        return 1
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from harness.cache_dirs import with_cache_dirs

    env = with_cache_dirs(dict(os.environ))
    status = 0
    for impl in args.impls:
        target_args = [args.problem, args.shape, args.dtype, impl]
        try:  # build and cache first, outside the profiler
            warm = subprocess.run([sys.executable, str(Path(__file__).resolve()), "target", *target_args,
                                   "--no-profile"], env=env, capture_output=True, text=True, timeout=args.timeout)
            if warm.returncode != 0:
                print(f"{impl}: does not run at {args.shape} {args.dtype}: {warm.stderr.strip().splitlines()[-1:]}")
                status = 1
                continue
            done = subprocess.run(ncu_command(ncu, target_args), env=env, capture_output=True, text=True,
                                  timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print(f"{impl}: over {args.timeout:.0f} s, left out")
            status = 1
            continue
        (out / f"ncu-{args.problem}-{impl}-{args.dtype}.csv").write_text(done.stdout)
        kernels = parse_details(done.stdout)
        if not kernels:
            tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-2:]
            print(f"{impl}: ncu read no kernels (rc {done.returncode}): {' | '.join(tail)}")
            status = 1
            continue
        print("\n".join(table(impl, kernels)), flush=True)
    return status


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("run")
    t = sub.add_parser("target")
    for p in (r, t):
        p.add_argument("problem")
        p.add_argument("shape")
        p.add_argument("dtype")
    r.add_argument("impls", nargs="+")
    r.add_argument("--out", default="ncu-probe")
    r.add_argument("--timeout", type=float, default=300.0)
    t.add_argument("impl")
    t.add_argument("--no-profile", action="store_true")
    args = ap.parse_args(argv)
    if args.mode == "target":
        target(args.problem, args.impl, args.shape, args.dtype, not args.no_profile)
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
