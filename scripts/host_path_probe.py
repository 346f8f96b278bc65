"""How much of GPU MODE's timed window is the host's? A GPU probe for vectorsum_v2's custom_kernel.

GPU MODE's eval.py times each call as: synchronize, flush L2 (a 256 MiB fill), start event, call, end
event, synchronize, with nothing to keep the GPU busy between the flush and the call. While the host
enqueues the start event and the call, the GPU runs the fill; if the host takes longer than the fill,
the GPU waits with the start event already recorded, and the host's time is counted as the kernel's.
On 2026-12-02 our means at one size swung between calls of eval.py (62 to 118 us at 52,428,800 floats)
where torch.sum's did not.

This replays that loop in one process for torch.sum, the family through Triton's JIT launch, and the
family through its cached compiled launcher (the default path after a size's first call), and records
per call: the host's time from the fill's enqueue to the call's return, the fill's GPU time, and the
window. A call whose host time passes the fill's is a leaked call.
Usage (on a GPU machine, from the repo root): python3 scripts/host_path_probe.py [OUT.tsv]  (under a minute)
"""

import importlib.util
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
FAMILY = ROOT / "solutions" / "vectorsum_v2" / "triton_family.py"
TORCH_SUM = ROOT / "submit" / "gpumode" / "baselines" / "vectorsum_v2_torch_sum.py"  # the bar GPU MODE sets
SIZES = [1638400, 6553600, 52428800]
CALLS = 300


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def implementations(family) -> dict:
    """name -> custom_kernel callable taking (x, output)."""

    def family_jit(data):
        family._launchers.clear()  # every call takes Triton's JIT launch (the plan stays cached)
        return family.custom_kernel(data)

    return {"torch.sum": load(TORCH_SUM, "ksuite_host_probe_torch_sum").custom_kernel, "family-jit": family_jit,
            "family-compiled": family.custom_kernel}


def replay(fn, data, calls: int) -> list[tuple[float, float, float]]:
    """GPU MODE's loop; per call (host us from the fill's enqueue to the return, fill us, window us)."""
    flush = torch.empty((32, 1024, 1024), dtype=torch.int64, device="cuda")
    rows = []
    for _ in range(calls):
        torch.cuda.synchronize()
        fill_start, fill_end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter()
        fill_start.record()
        flush.fill_(42)
        fill_end.record()
        start.record()
        fn(data)
        end.record()
        host = (time.perf_counter() - t0) * 1e6
        torch.cuda.synchronize()
        rows.append((host, fill_start.elapsed_time(fill_end) * 1e3, start.elapsed_time(end) * 1e3))
    return rows


def main(out_path: str | None) -> None:
    family = load(FAMILY, "ksuite_host_probe_family")
    impls = implementations(family)
    lines = ["size\timpl\thost_p50_us\thost_p90_us\thost_max_us\tfill_p50_us\tleaked\twindow_p50_us\twindow_mean_us"]
    print(f"{'size':>10} {'implementation':<16} {'host p50':>9} {'p90':>7} {'max':>7} {'fill':>6} {'leaked':>7} "
          f"{'window p50':>10} {'mean':>7}")
    for size in SIZES:
        x = torch.randn(size, device="cuda") * 3.0 + 7.0
        output = torch.empty(1, device="cuda")
        for fn in impls.values():  # warm-up: compile, plan, first launch
            for _ in range(5):
                fn((x, output))
        want = x.double().sum().item()
        for name, fn in impls.items():
            got = fn((x, output)).item()
            assert abs(got - want) <= 1e-5 * abs(want) + 1e-3, f"{name} at {size}: {got} != {want}"
            rows = replay(fn, (x, output), CALLS)
            host = sorted(r[0] for r in rows)
            fill = statistics.median(r[1] for r in rows)
            leaked = sum(1 for r in rows if r[0] > r[1])
            window = [r[2] for r in rows]
            cells = (statistics.median(host), host[int(0.9 * len(host))], host[-1], fill, leaked,
                     statistics.median(window), statistics.fmean(window))
            lines.append(f"{size}\t{name}\t" + "\t".join(f"{c:.2f}" if isinstance(c, float) else str(c)
                                                         for c in cells))
            print(f"{size:>10} {name:<16} {cells[0]:>9.1f} {cells[1]:>7.1f} {cells[2]:>7.1f} {cells[3]:>6.1f} "
                  f"{leaked:>4}/{CALLS} {cells[5]:>10.1f} {cells[6]:>7.1f}")
    if out_path:
        Path(out_path).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
