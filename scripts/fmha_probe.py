"""Time variants of solutions/attention_causal/cuda_cutlass_fmha.py beside SDPA and triton_flash_tma.

Each variant is a set of TUNABLES overrides; its CUTLASS extensions (one per dtype and head-dim tile the
shapes need) are built first, all variants at once in threads (a cold build of one takes ~1.5 min on the
H200's host). Then for each (shape, dtype): SDPA, triton_flash_tma and each variant, each call checked
once against SDPA (max |difference|: a probe, not the harness's float64 check), then timed by the
harness's own timer (clean L2 flush, a spin before each call; median us). One TSV row per timing, flushed as
written; stops starting new shapes after --budget-s. `ksuite bench` is the judged measurement: this picks
what goes into TUNABLES, at tuning-set shapes. Needs a CUDA GPU and the CUTLASS folders
(scripts/cutlass_headers.sh).

Usage: python3 scripts/fmha_probe.py OUT.tsv --variants "base:;persistent:PERSISTENT=1" \
           --shapes "1x32x8192x128;2x32x4096x128" [--dtypes fp16,bf16] [--budget-s 300]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parent.parent
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def parse_variants(text: str) -> list[tuple[str, dict]]:
    out = []
    for item in filter(None, text.split(";")):
        name, _, body = item.partition(":")
        out.append((name, {k: int(v) for k, v in (kv.split("=") for kv in filter(None, body.split(",")))}))
    return out


def load_variants(path: Path, text: str, prefix: str) -> list[tuple[str, object]]:
    """(name, module) per variant of --variants: the solution file imported afresh, its TUNABLES overridden."""
    from harness.loader import import_file

    variants = []
    for i, (name, overrides) in enumerate(parse_variants(text)):
        module = import_file(path, f"{prefix}_{i}")
        module.TUNABLES = {**module.TUNABLES, **overrides}
        variants.append((name, module))
    return variants


def probe_args(default_dtypes: str, plans: dict | None = None):
    """The probes' command line: (args, shapes as int tuples, torch dtypes). `plans` names fixed (shapes,
    variants) pairs a probe keeps in code, where a test can check them: `--plan NAME` stands for both options."""
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--variants", default=None)
    ap.add_argument("--shapes", default=None)
    ap.add_argument("--plan", choices=sorted(plans or {}), default=None)
    ap.add_argument("--dtypes", default=default_dtypes)
    ap.add_argument("--budget-s", type=float, default=300.0)
    args = ap.parse_args()
    if args.plan:
        plan_shapes, plan_variants = plans[args.plan]
        args.shapes = args.shapes or plan_shapes
        args.variants = args.variants or plan_variants
    if not args.shapes:
        ap.error("--shapes (or --plan) is required")
    args.variants = args.variants or "base:"
    shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(";")]
    return args, shapes, [DTYPES[d] for d in args.dtypes.split(",")]


def build_all(jobs: list, build) -> list:
    """build(job) for every job at once in threads (a cold CUTLASS build takes minutes, each on one core), as many
    at a time as the machine's build slots allow (harness/build_slots.py); a job that does not build gives its
    exception, a row of the probe's table rather than a dead probe."""
    from harness import build_slots

    count = build_slots.configured_count()

    def attempt(job):
        try:
            with build_slots.build_slot(count):  # no more nvcc at once than the machine's memory holds
                return build(job)
        except Exception as exc:  # noqa: BLE001 - reported per variant
            return exc

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        built = list(pool.map(attempt, jobs))
    print(f"built {len(jobs)} extensions in {time.monotonic() - started:.0f} s", flush=True)
    return built


def time_rows(out, timer, row: str, impls: list, flops: float) -> None:
    """Each (name, zero-argument call, or the exception its build raised) at one shape and dtype (`row`: their
    TSV cells): its output checked once against the first's (max |difference|), then timed by the harness's
    timer; one TSV row each (median us, x the first's time, TFLOP/s, the difference), flushed as written. A
    call that fails is a row, not a dead probe."""
    first_us = ref = None
    with torch.no_grad():
        for name, fn in impls:
            try:
                if isinstance(fn, Exception):
                    raise fn
                value = fn().float()
                ref = value if ref is None else ref
                diff = (value - ref).abs().max().item()
                us = timer.measure(fn).median_us
            except Exception as exc:  # noqa: BLE001 - reported per row
                why = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
                out.write(f"{row}\t{name}\tfailed: {why}\t\t\t\n")
                continue
            first_us = first_us or us
            out.write(f"{row}\t{name}\t{us:.1f}\t{first_us / us:.3f}\t{flops / us / 1e6:.0f}\t{diff:.2e}\n")
            out.flush()


def write_table(args, started: float, first: str, shapes: list, dtypes: list, time_shape) -> None:
    """The probe's TSV at args.out: its header (`first`: the reference the ratios are against), then
    time_shape(out, shape, dtype) for every shape and dtype, no new shape after args.budget_s seconds from
    `started`; printed at the end."""
    with open(args.out, "w") as out:
        out.write(f"shape\tdtype\timpl\tmedian_us\tx_{first}\ttflops\tmax_abs_diff\n")
        for shape in shapes:
            if time.monotonic() - started > args.budget_s:
                print(f"budget spent: {'x'.join(map(str, shape))} and later left out", flush=True)
                break
            for dtype in dtypes:
                time_shape(out, shape, dtype)
                torch.cuda.empty_cache()
    print(Path(args.out).read_text())
    print(pivot(Path(args.out).read_text()))


def pivot(tsv: str) -> str:
    """The TSV as one line per (shape, dtype): the reference's median (us), each implementation's speed as a share
    of the reference's time ("err" where its build or call failed) and the largest difference from the reference's
    output, so a round's summary shows the winners, and whether any of them is wrong, in a screenful."""
    lines = [line.split("\t") for line in tsv.strip().splitlines()[1:]]
    if not lines:
        return "no row timed"
    impls = list(dict.fromkeys(cells[2] for cells in lines))
    rows: dict = {}
    for shape, dtype, impl, median, ratio, _tflops, diff in lines:
        row = rows.setdefault((shape, dtype), {"_diff": 0.0})
        row[impl] = ratio or "err"
        if diff:
            row["_diff"] = max(row["_diff"], float(diff))
        if impl == impls[0]:
            row["_us"] = median
    head = ["shape", "dtype", f"{impls[0]} us", *impls[1:], "largest |diff|"]
    out = ["\t".join(head)]
    for (shape, dtype), row in rows.items():
        cells = [row.get("_us", "-"), *(row.get(i, "-") for i in impls[1:]), f"{row['_diff']:.2e}"]
        out.append("\t".join([shape, dtype, *cells]))
    return "\n".join(out)


def time_one(out, timer, shape: tuple, dtype, triton_mod, variants: list, kernels: dict) -> None:
    """SDPA, the Triton kernel and each variant at one (shape, dtype): one TSV row each."""
    b, h, s, d = shape
    flops = 4 * b * h * s * s * d / 2
    gen = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = [torch.randn(b, h, s, d, device="cuda", dtype=dtype, generator=gen) for _ in range(3)]
    impls = [("sdpa", lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
             ("triton_flash_tma", lambda: triton_mod.attention_causal(q, k, v))]
    tile = variants[0][1].head_tile(d)
    if tile is not None and s % 8 == 0:
        for name, _ in variants:
            kernel = kernels[(name, dtype, tile)]
            impls.append((f"cutlass:{name}", kernel if isinstance(kernel, Exception) else partial(kernel, q, k, v)))
    time_rows(out, timer, f"{b}x{h}x{s}x{d}\t{str(dtype)[6:]}", impls, flops)


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from harness.cuda_build import with_extensions_dir
    from harness.loader import import_file as load
    from harness.timing import CudaTimer

    with_extensions_dir(os.environ)  # the harness's build folder: `ksuite bench` then finds these builds

    args, shapes, dtypes = probe_args("fp16,bf16")
    started = time.monotonic()
    triton_mod = load(ROOT / "solutions/attention_causal/triton_flash_tma.py", "probe_triton_flash_tma")
    variants = load_variants(ROOT / "solutions/attention_causal/cuda_cutlass_fmha.py", args.variants, "probe_fmha")
    tiles = sorted({variants[0][1].head_tile(s[3]) for s in shapes} - {None})
    jobs = [(name, m, dt, t) for name, m in variants for dt in dtypes for t in tiles]
    built = build_all(jobs, lambda job: job[1]._build(job[2], job[3]))
    kernels = {(j[0], j[2], j[3]): fn for j, fn in zip(jobs, built)}
    timer = CudaTimer()
    write_table(args, started, "sdpa", shapes, dtypes,
                lambda out, shape, dtype: time_one(out, timer, shape, dtype, triton_mod, variants, kernels))

if __name__ == "__main__":
    main()
