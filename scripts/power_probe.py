"""Does a long compute-bound call's median follow the card's clock? The probe behind confirm's COMPUTE_WITHIN.

On the H200, an implementation's median at matmul's 0.5-2 ms shapes moves 5-24 % from one run to the next (cuBLAS's
and ours: scripts/process_spread.py --min-us 20 --max-us 1e9 --by problem), and on 2026-12-07 a bench's block of
cuBLAS against a block of ours parted from the same calls timed paired (3001x8192x28672 bf16: cuBLAS 1980 us in the
bench, 1743 paired; ours 1797 and 1799). The likely cause is the power limit: there the SM clock follows the
card's temperature, and a block's median follows the clock. In one process this times torch's matmul (A) and a
solution (B) at each shape as the bench does, a block of each, in the order A B B A, then paired (batches of 5
interleaved, 15 rounds), with nvidia-smi sampling the SM clock, power and temperature every 50 ms beside it. Per
phase: the median, the mean SM clock and power over the phase, and the temperature at its start and end. If the
medians of A in its two blocks differ as the clock does, the block order is the draw and the paired ratio the
verdict.
Usage (GPU machine): python3 scripts/power_probe.py OUT.tsv [--solution triton_tma_persistent] [--dtype bfloat16]
                     [--shape 8192x3072x8192 ...]   (matmul's M x K x N)
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from harness.inputs import build_candidate, make_inputs  # noqa: E402
from harness.loader import load_candidate_class, load_problem  # noqa: E402
from harness.shape_spec import custom_shapes  # noqa: E402
from harness.timing import CudaTimer  # noqa: E402

SHAPES = ("8192x3072x8192", "3001x8192x28672", "4096x3584x18944")
QUERY = "timestamp,clocks.sm,power.draw,temperature.gpu"
SAMPLE_MS = 50
ROUNDS, BATCH = 15, 5


def parse_samples(lines: list[str]) -> list[tuple[float, float, float, float]]:
    """nvidia-smi's CSV lines as (epoch seconds, SM MHz, watts, deg C); lines that do not parse are skipped."""
    out = []
    for line in lines:
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 4:
            continue
        try:
            stamp = datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
            out.append((stamp, float(parts[1].split()[0]), float(parts[2].split()[0]), float(parts[3].split()[0])))
        except ValueError:
            continue
    return out


def phase_line(shape: str, phase: str, impl: str, median_us: float, calls: int, begin: float, end: float,
               samples: list[tuple[float, float, float, float]]) -> str:
    """One TSV row: the phase's median and the card's state while it ran (- where no sample fell inside)."""
    inside = [s for s in samples if begin <= s[0] <= end]
    clock = f"{statistics.fmean(s[1] for s in inside):.0f}" if inside else "-"
    watts = f"{statistics.fmean(s[2] for s in inside):.0f}" if inside else "-"
    temps = f"{inside[0][3]:.0f}-{inside[-1][3]:.0f}" if inside else "-"
    return "\t".join([shape, phase, impl, f"{median_us:.1f}", str(calls), clock, watts, temps])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--solution", default="triton_tma_persistent", help="a file under solutions/matmul/")
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--shape", action="append", default=None, help="M x K x N (repeatable)")
    args = parser.parse_args(argv)
    problem = load_problem(ROOT / "problems" / "matmul.py")
    cls = load_candidate_class(ROOT / "solutions" / "matmul" / f"{args.solution}.py", "probe_solution")
    specs = tuple(args.shape or SHAPES)
    samples_file = args.out.with_suffix(".smi.csv")  # a file, not a pipe: a full pipe would stop the sampling
    with samples_file.open("w") as sink:
        sampler = subprocess.Popen(["nvidia-smi", f"--query-gpu={QUERY}", "--format=csv,noheader", "-lms",
                                    str(SAMPLE_MS)], stdout=sink, text=True)
    phases = []  # (shape, phase, impl, median, calls, begin, end)
    timer = CudaTimer()
    with torch.no_grad():
        for spec, shape in zip(specs, custom_shapes(problem, specs)):
            inputs = make_inputs(problem, shape, args.dtype, 1, "cuda")
            impls = {"torch": problem.module.Model().cuda(),
                     args.solution: build_candidate(problem, cls, shape, args.dtype, 0, "cuda")}
            calls = {name: (lambda m=m, x=inputs: m(*x)) for name, m in impls.items()}
            for k, name in enumerate(["torch", args.solution, args.solution, "torch"]):
                begin = time.time()
                m = timer.measure(calls[name])
                phases.append((spec, f"block {k + 1}", name, m.median_us, m.runs, begin, time.time()))
            timer.prepare(*calls.values())
            paired = {name: [] for name in calls}
            begin = time.time()
            for r in range(ROUNDS):
                for name in (list(calls) if r % 2 == 0 else list(calls)[::-1]):
                    paired[name] += timer.time_batch(calls[name], BATCH)
            end = time.time()
            for name, times in paired.items():
                phases.append((spec, "paired", name, statistics.median(times), len(times), begin, end))
            torch.cuda.synchronize()
    sampler.terminate()
    sampler.wait(timeout=10)
    samples = parse_samples(samples_file.read_text().splitlines())
    header = "shape\tphase\timplementation\tmedian_us\tcalls\tsm_mhz\twatts\ttemp_c"
    rows = [phase_line(*p, samples) for p in phases]
    args.out.write_text("\n".join([header, *rows]) + "\n")
    print(header)
    print("\n".join(rows))
    print(f"{len(samples)} nvidia-smi samples every {SAMPLE_MS} ms ({samples_file}); rows in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
