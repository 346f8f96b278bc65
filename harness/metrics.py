"""Derived numbers for one timing: bytes and flops moved, GB/s, TFLOP/s, speed of light, speedups."""

from __future__ import annotations

import torch

from harness.loader import DTYPES, LoadedProblem


def work(problem: LoadedProblem, shape: dict, dtype: str, inputs: list, outputs: list) -> tuple[float, float | None]:
    """(bytes, flops) from the problem's cost model; without one, bytes = inputs + outputs read/written once."""
    esize = DTYPES[dtype].itemsize
    meta = problem.meta
    if meta.bytes_fn is not None:
        nbytes = float(meta.bytes_fn(shape, esize))
    else:
        nbytes = float(sum(t.numel() * t.element_size() for t in list(inputs) + list(outputs)
                           if isinstance(t, torch.Tensor)))
    flops = float(meta.flops_fn(shape, esize)) if meta.flops_fn is not None else None
    return nbytes, flops


def speed_of_light_us(nbytes: float, flops: float | None, bound: str, bandwidth: float | None,
                      matmul_rate: float | None) -> float | None:
    """Floor time: bytes over copy bandwidth, and for compute-bound problems flops over the matrix rate."""
    floors = []
    if bandwidth:
        floors.append(nbytes / bandwidth * 1e6)
    if flops and matmul_rate and bound == "compute":
        floors.append(flops / matmul_rate * 1e6)
    return max(floors) if floors else None


def rates(nbytes: float, flops: float | None, median_us: float) -> tuple[float, float | None]:
    gbps = nbytes / (median_us * 1e-6) / 1e9
    tflops = flops / (median_us * 1e-6) / 1e12 if flops else None
    return gbps, tflops


def add_speedups(records: list[dict]) -> list[dict]:
    """Speedup of every record against each correct baseline of the same (problem, shape, dtype),
    and against the best of them. Works on plain dicts so it can run on records read back from disk."""
    groups: dict = {}
    for r in records:
        key = (r["problem"], tuple(sorted(r["shape"].items())), r["dtype"])
        groups.setdefault(key, []).append(r)
    for group in groups.values():
        base = {r["solution"]: r["median_us"] for r in group
                if r["kind"] == "baseline" and r.get("correct") and r.get("median_us")}
        best_name = min(base, key=base.get) if base else None
        for r in group:
            if not r.get("median_us"):
                continue
            r["speedup_vs"] = {name: t / r["median_us"] for name, t in base.items()}
            if best_name:
                r["best_baseline"] = best_name
                r["speedup_vs_best_baseline"] = base[best_name] / r["median_us"]
    return records
