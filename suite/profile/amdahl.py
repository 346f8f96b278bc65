"""Amdahl's law for one op and for several, and where each op's k comes from.

An op taking a share f of the model's time, made k times faster, speeds the model up by
1 / ((1 - f) + f / k). Two k per op: the one our best solution measured at the op's exact shape and
dtype on this GPU (results/<gpu>/*.jsonl: records of the registry problem, or of a problem extracted
from it; none: "not measured"), and the one its speed of light allows (META's bytes and flops over
this GPU's calibrated bandwidth and matrix rate).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path


def gain(f: float, k: float | None) -> float | None:
    """End-to-end speedup when a share f of the time becomes k times faster (k None: unknown)."""
    if k is None or k <= 0:
        return None
    return 1.0 / ((1.0 - f) + f / k)


def combined_gain(parts: list[tuple[float, float]]) -> float:
    """Several disjoint shares f_i, each k_i times faster: 1 / ((1 - sum f) + sum f / k)."""
    rest = 1.0 - sum(f for f, _ in parts)
    return 1.0 / (rest + sum(f / k for f, k in parts))


def base_problem(name: str) -> str:
    """`extracted/llama3-8b-4-layers/rmsnorm__8192x4096_bf16` -> `rmsnorm`; a registry name stays itself."""
    from suite.registry import EXTRACTED, extracted_op

    return extracted_op(name) if name.startswith(f"{EXTRACTED}/") else name


@lru_cache(maxsize=8)
def _records(folder: str, stamp: tuple) -> tuple:
    out = []
    for path in sorted(Path(folder).glob("*.jsonl")):
        for line in path.read_text().splitlines():
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(r, dict) and r.get("kind") == "solution" and r.get("correct") and r.get("median_us"):
                out.append((base_problem(r["problem"]), tuple(sorted(r["shape"].items())), r["dtype"],
                            r["problem"], r["solution"], float(r["median_us"]), r.get("run_id")))
    return tuple(out)


def newest_records(results_dir: Path, problem: str) -> list[dict]:
    """Every correct solution timing of a registry problem (or a problem extracted from it) in one GPU's
    folder, at any shape: the newest record of each (problem file, solution, shape, dtype)."""
    folder = Path(results_dir)
    if not folder.is_dir():
        return []
    stamp = tuple((p.name, p.stat().st_size) for p in sorted(folder.glob("*.jsonl")))
    latest = {}
    for base, shp, dt, prob, sol, median, run_id in _records(str(folder), stamp):
        if base == problem:
            latest[(prob, sol, shp, dt)] = {"problem": prob, "solution": sol, "shape": dict(shp), "dtype": dt,
                                            "median_us": median, "run_id": run_id}
    return list(latest.values())


def measured(results_dir: Path, problem: str, shape: dict, dtype: str) -> list[dict]:
    """Every correct solution timing at (problem, shape, dtype) in one GPU's folder, fastest first; the
    newest record of each (problem file, solution) wins."""
    key = dict(shape)
    found = [{k: r[k] for k in ("problem", "solution", "median_us", "run_id")}
             for r in newest_records(results_dir, problem) if r["shape"] == key and r["dtype"] == dtype]
    return sorted(found, key=lambda r: r["median_us"])


def speed_of_light_us(problem: str, shape: dict, dtype: str, calibration: dict | None) -> float | None:
    """The op's floor time on this GPU from its problem's cost model; None without a calibration."""
    if not calibration:
        return None
    from harness.loader import DTYPES, load_problem
    from harness.metrics import speed_of_light_us as floor
    from suite.registry import PROBLEMS_DIR

    meta = load_problem(PROBLEMS_DIR / f"{problem}.py", f"ksuite_amdahl_{problem}").meta
    if meta.bytes_fn is None:
        return None
    esize = DTYPES[dtype].itemsize
    flops = meta.flops_fn(shape, esize) if meta.flops_fn else None
    rate = calibration.get("matmul_bf16_flops" if dtype == "bfloat16" else "matmul_flops")
    return floor(float(meta.bytes_fn(shape, esize)), flops, meta.bound, calibration.get("copy_bandwidth_Bps"), rate)
