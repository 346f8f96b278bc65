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
With --fresh each call gets a new input and output, made as the leaderboard mode's generate_input makes them
(randn, then a scale and an offset read back with .item()), with a clone kept for the check after the call (the
reference's float64 sum), as eval.py's recheck loop does: in that mode (H100, 2026-12-05) our
mean at 52,428,800 floats carried one call of 0.85-2.1 ms in a hundred where torch.sum's worst was 0.16 ms. The
table's last columns, the slowest call's window, its host time and its index, say whether such a call is the
host's (its host time as long as its window) or the GPU's, and whether it is the first.
With --spawn the probe runs in a spawned worker of a one-process pool, as eval.py runs a submission: eval.py's run
had the slow call where the replay in one process did not (H100, 2026-12-06).
Usage (on a GPU machine, from the repo root): python3 scripts/host_path_probe.py [OUT.tsv] [--fresh] [--spawn]
(under a minute; about two with --fresh)
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


def implementations(family, fresh: bool = False) -> dict:
    """name -> custom_kernel callable taking (x, output). With fresh, also the family with every bucket in its
    "slices" layout (a second copy of the module, its own caches): whether a slow call goes with the layout
    (the table runs "stride" at 27-67 million floats)."""

    def family_jit(data):
        family._launchers.clear()  # every call takes Triton's JIT launch (the plan stays cached)
        return family.custom_kernel(data)

    impls = {"torch.sum": load(TORCH_SUM, "ksuite_host_probe_torch_sum").custom_kernel, "family-jit": family_jit,
             "family-compiled": family.custom_kernel}
    if fresh:
        slices = load(FAMILY, "ksuite_host_probe_family_slices")
        table = {bucket: {**entry, "LAYOUT": "slices"} for bucket, entry in slices.dispatch_table().items()}
        slices.dispatch_table = lambda: table
        impls["family-slices"] = slices.custom_kernel
    return impls


def fresh_input(size: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A new (x, output) the way the leaderboard mode's generate_input makes one for each timed call."""
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    data = torch.randn(size, device="cuda", dtype=torch.float32, generator=gen)
    offset = (torch.rand(1, device="cuda", generator=gen) * 200 - 100).item()
    scale = (torch.rand(1, device="cuda", generator=gen) * 9.9 + 0.1).item()
    return (data * scale + offset).contiguous(), torch.empty(1, device="cuda", dtype=torch.float32)


def replay(fn, data, calls: int, fresh_size: int | None = None) -> list[tuple[float, float, float]]:
    """GPU MODE's loop; per call (host us from the fill's enqueue to the return, fill us, window us). With
    fresh_size, a new input of that size before each call (the leaderboard mode)."""
    flush = torch.empty((32, 1024, 1024), dtype=torch.int64, device="cuda")
    rows = []
    for i in range(calls):
        if fresh_size:  # as eval.py's recheck loop: a new input, and a clone of it kept for the check
            data = check_copy = flush = None
            data = fresh_input(fresh_size, 1000 + 13 * i)
            check_copy = tuple(t.clone() for t in data)
        torch.cuda.synchronize()
        fill_start, fill_end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter()
        fill_start.record()
        if fresh_size:  # eval.py's clear_l2_cache allocates its 256 MiB each call
            flush = torch.empty((32, 1024, 1024), dtype=torch.int64, device="cuda")
        flush.fill_(42)
        fill_end.record()
        start.record()
        fn(data)
        end.record()
        host = (time.perf_counter() - t0) * 1e6
        torch.cuda.synchronize()
        rows.append((host, fill_start.elapsed_time(fill_end) * 1e3, start.elapsed_time(end) * 1e3))
        if fresh_size:  # eval.py's check after the call: the reference sums the copy in float64 (a new 8-byte copy)
            check_copy[0].to(torch.float64).sum().item()
    return rows


def main(out_path: str | None, fresh: bool = False) -> None:
    family = load(FAMILY, "ksuite_host_probe_family")
    impls = implementations(family, fresh)
    lines = ["size\timpl\thost_p50_us\thost_p90_us\thost_max_us\tfill_p50_us\tleaked\twindow_p50_us\twindow_mean_us"
             "\twindow_max_us\thost_at_max_us\tcall_at_max"]
    print(f"{'size':>10} {'implementation':<16} {'host p50':>9} {'p90':>7} {'max':>7} {'fill':>6} {'leaked':>7} "
          f"{'window p50':>10} {'mean':>7} {'max':>7} {'its host':>8} {'call':>5}"
          + ("  (a fresh input each call)" if fresh else ""), flush=True)
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
            rows = replay(fn, (x, output), CALLS, size if fresh else None)
            host = sorted(r[0] for r in rows)
            fill = statistics.median(r[1] for r in rows)
            leaked = sum(1 for r in rows if r[0] > r[1])
            window = [r[2] for r in rows]
            slowest = max(range(len(rows)), key=lambda i: rows[i][2])
            cells = (statistics.median(host), host[int(0.9 * len(host))], host[-1], fill, leaked,
                     statistics.median(window), statistics.fmean(window), rows[slowest][2], rows[slowest][0], slowest)
            lines.append(f"{size}\t{name}\t" + "\t".join(f"{c:.2f}" if isinstance(c, float) else str(c)
                                                         for c in cells))
            print(f"{size:>10} {name:<16} {cells[0]:>9.1f} {cells[1]:>7.1f} {cells[2]:>7.1f} {cells[3]:>6.1f} "
                  f"{leaked:>4}/{CALLS} {cells[5]:>10.1f} {cells[6]:>7.1f} {cells[7]:>7.1f} {cells[8]:>8.1f} "
                  f"{slowest:>5}", flush=True)
    if out_path:
        Path(out_path).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    flags = {"--fresh", "--spawn"}
    args = [a for a in sys.argv[1:] if a not in flags]
    call = (args[0] if args else None, "--fresh" in sys.argv[1:])
    if "--spawn" in sys.argv[1:]:  # in a spawned worker of a one-process pool, as eval.py runs a submission
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(1) as pool:
            pool.apply(main, call)
    else:
        main(*call)
