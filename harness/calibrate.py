"""Measure this GPU's ceilings once: copy bandwidth and matrix rate; and check our timer against
triton.testing.do_bench on the same kernel in the same process."""

from __future__ import annotations

import statistics

import torch

from harness.timing import CudaTimer


def copy_bandwidth(timer: CudaTimer, gib: float = 1.0) -> float:
    """Bytes per second of a large device-to-device copy, counting bytes read plus bytes written."""
    n = int(gib * 2**30)
    src = torch.randint(0, 127, (n,), dtype=torch.int8, device="cuda")
    dst = torch.empty_like(src)
    t = timer.measure(lambda: dst.copy_(src))
    return 2 * n / (t.median_us * 1e-6)


def matmul_rate(timer: CudaTimer, dtype=torch.bfloat16, sizes=(4096, 8192)) -> float:
    """Best FLOP per second of n^3 matrix products on random data (zeros run faster and would flatter).
    The best over sizes: a ceiling set too low would call honest cuBLAS runs faster than light."""
    best = 0.0
    for n in sizes:
        a = torch.randn(n, n, device="cuda", dtype=dtype)
        b = torch.randn(n, n, device="cuda", dtype=dtype)
        t = timer.measure(lambda a=a, b=b: a @ b)
        best = max(best, 2 * n**3 / (t.median_us * 1e-6))
    return best


def timer_agreement(timer: CudaTimer, repeats: int = 3) -> dict:
    """Our median vs do_bench's median for one memory-bound kernel (a 256 MiB fp16 scale), alternated.
    Compared with do_bench's own flush (a write), so the difference is the timer's, not the flush's."""
    import triton.testing

    timer = CudaTimer(timer.warmup_ms, timer.min_runs, timer.max_runs, timer.target_rse, timer.budget_s,
                      flush="write")
    x = torch.randn(128 * 2**20, device="cuda", dtype=torch.float16)
    ours, theirs = [], []
    for _ in range(repeats):
        ours.append(timer.measure(lambda: x * 2.0).median_us)
        theirs.append(triton.testing.do_bench(lambda: x * 2.0, warmup=25, rep=200, return_mode="median") * 1000)
    a, b = statistics.median(ours), statistics.median(theirs)
    return {"kernel": "fp16 x*2, 128Mi elements", "flush": "write", "harness_median_us": a, "do_bench_median_us": b,
            "difference_pct": (a - b) / b * 100.0}


def calibrate() -> dict:
    timer = CudaTimer(warmup_ms=50, min_runs=20, max_runs=200, target_rse=0.002, budget_s=3.0)
    result = {
        "copy_bandwidth_Bps": copy_bandwidth(timer),
        "matmul_bf16_flops": matmul_rate(timer, dtype=torch.bfloat16),
        "matmul_fp16_flops": matmul_rate(timer, dtype=torch.float16),
        "timer_agreement": timer_agreement(timer),
        "flush": timer.flush_kind,  # the copy ceiling is measured with the flush the kernels are timed with
    }
    result["matmul_flops"] = max(result["matmul_bf16_flops"], result["matmul_fp16_flops"])
    return result
