"""Does an evict_first read keep the L2 flush's dirty lines out of the timed call? A GPU probe for vectorsum_v2.

GPU MODE's eval.py (and triton.testing.do_bench) flush L2 by writing 256 MiB just before each timed call;
up to L2's size of those lines is still dirty when the kernel starts, and a kernel whose reads evict them
pays for their write-back (a 134 MB sum: 48.0 us after the write, 41.0 after a clean flush, on the H200).
A load marked L2::evict_first is, by the PTX rules, the first line its set gives up: once a set holds one
of our lines, the next miss there should evict that (already consumed) line, not a dirty one, so most
of the write-back would never happen inside the call. vectorsum_v2's family loads with evict_first only
without pipelined copies (NUM_STAGES 1: cp.async carries no L2 hint in Triton), and its table was tuned
with the suite's clean flush, where the hint cannot matter.

This times the family at GPU MODE's six benchmark sizes and two held-out ones, with its table and with
fixed configurations (pipelined or not, tile, programs per SM, warps), after the write flush with no spin
(GPU MODE's protocol) and after the suite's clean flush, beside torch.sum, all in one process.
Usage (on a GPU machine, from the repo root): python3 scripts/evict_first_probe.py OUT.tsv  (about 2 min)
Prints, per size, torch.sum, the table, and the fastest configuration under each flush.
"""

import importlib.util
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from harness.timing import CudaTimer  # noqa: E402

FAMILY = ROOT / "solutions" / "vectorsum_v2" / "triton_family.py"
SIZES = [1638400, 3276800, 6553600, 13107200, 26214400, 52428800, 29360128, 67108864]


def configs() -> dict:
    """name -> the family's tunables, every bucket alike."""
    out = {}
    for stages in (1, 4):
        for block in (4096, 8192, 16384):
            for per_sm in (2, 4):
                out[f"slices-s{stages}-b{block}-p{per_sm}-w8"] = dict(
                    LAYOUT="slices", BLOCK_SIZE=block, NUM_STAGES=stages, PROGRAMS_PER_SM=per_sm, num_warps=8)
    for block in (8192, 16384):
        out[f"slices-s1-b{block}-p2-w16"] = dict(LAYOUT="slices", BLOCK_SIZE=block, NUM_STAGES=1,
                                                 PROGRAMS_PER_SM=2, num_warps=16)
        out[f"slices-s1-b{block}-p1-w16"] = dict(LAYOUT="slices", BLOCK_SIZE=block, NUM_STAGES=1,
                                                 PROGRAMS_PER_SM=1, num_warps=16)
    for block in (4096, 8192):
        for per_sm in (2, 4):
            out[f"stride-s1-b{block}-p{per_sm}-w8"] = dict(LAYOUT="stride", BLOCK_SIZE=block, NUM_STAGES=1,
                                                          PROGRAMS_PER_SM=per_sm, num_warps=8)
    for block, warps in ((4096, 8), (8192, 8), (8192, 16), (16384, 16)):
        out[f"tile-b{block}-w{warps}"] = dict(LAYOUT="tile", BLOCK_SIZE=block, NUM_STAGES=1, PROGRAMS_PER_SM=4,
                                              num_warps=warps)
    return out


def load_family():
    spec = importlib.util.spec_from_file_location("ksuite_probe_family", FAMILY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # the table this GPU runs (its own where the file has one) as DISPATCH, which the variants below replace
    module.DISPATCH, module.DISPATCH_BY_GPU = module.dispatch_table(), {}
    return module


def main(out_path: str) -> None:
    family = load_family()
    table, default = dict(family.DISPATCH), dict(family.TUNABLES)
    variants = {"torch.sum": None, "table": (table, default), **{n: ({}, c) for n, c in configs().items()}}
    timers = {"write": CudaTimer(flush="write", lead_us=0.0, budget_s=0.3, max_runs=200),
              "clean": CudaTimer(budget_s=0.3, max_runs=200)}
    rows = []
    for size in SIZES:
        x = torch.rand(size, device="cuda", dtype=torch.float32)
        out = torch.empty((), device="cuda", dtype=torch.float32)
        expect = x.double().sum().item()
        for name, setting in variants.items():
            if setting is None:
                fn = lambda x=x, out=out: torch.sum(x, dim=0, out=out)  # noqa: E731
            else:
                family.DISPATCH, family.TUNABLES = setting  # read by the wrapper at every call
                fn = lambda x=x, out=out: family.vector_sum(x, out=out)  # noqa: E731
            fn()
            if abs(out.item() - expect) > 1e-3 * abs(expect):
                rows.append((size, name, "wrong", "wrong"))
                continue
            times = {flush: timer.measure(fn).median_us for flush, timer in timers.items()}
            rows.append((size, name, f"{times['write']:.2f}", f"{times['clean']:.2f}"))
            print(f"{size}\t{name}\t{times['write']:.2f}\t{times['clean']:.2f}", flush=True)
    Path(out_path).write_text("size\tvariant\twrite_flush_us\tclean_flush_us\n"
                              + "".join("\t".join(map(str, r)) + "\n" for r in rows))
    print("\nsize | torch.sum write/clean | table write/clean | best under write | best under clean")
    for size in SIZES:
        mine = [r for r in rows if r[0] == size and r[2] != "wrong"]
        by = {r[1]: r for r in mine}
        ours = [r for r in mine if r[1] != "torch.sum"]
        bw = min(ours, key=lambda r: float(r[2]))
        bc = min(ours, key=lambda r: float(r[3]))
        print(f"{size} | {by['torch.sum'][2]} / {by['torch.sum'][3]} | {by['table'][2]} / {by['table'][3]} | "
              f"{bw[1]} {bw[2]} (clean {bw[3]}) | {bc[1]} {bc[3]} (write {bc[2]})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "evict_first_probe.tsv")
