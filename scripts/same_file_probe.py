"""Why two copies of one file time differently in paired rounds (`ksuite ab` of a file against its own copy).

On the H100 (2026-12-06) `ksuite ab vectorsum_v2 triton_family COPY` called A faster by 4-6 % at the 6 us sizes in
both orders (the copy as A or as B), and the repository's file faster than the copy by 2-4 % at 1.6 M floats in both
orders. The two arms differ in three things: the callable (one object or two modules), the module's workspace (its
partials and ticket buffers, allocated where the allocator put them) and the role (timed first or second in a round,
built by the checker or not). This times, in one process and with the harness's own paired rounds and clean flush:
  same      one callable in both arms: the method's own floor;
  copies    two modules of the file, each with its own workspace;
  swapped   the same two modules with their workspaces exchanged;
  shared    the same two modules sharing the first one's workspace.
(A version of 2026-12-06 also timed a PREFETCH_TICKET tunable of the family, since removed: results/
nvidia-h100-80gb-hbm3/rounds/20261206-0743-same-file-probe-prefetch.txt.)
If "copies" and "swapped" flip sign and "shared" ties, the workspace's address decides; if all tie, the harness's
roles do. Prints one row per (arm, size): medians, B over A with the keep rule's bootstrap interval.
Run on a GPU from the repository root: python3 scripts/same_file_probe.py [--sizes 25088,97536,1638400] [--rounds 15]
"""

import argparse
import importlib.util
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FAMILY = ROOT / "solutions" / "vectorsum_v2" / "triton_family.py"


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, FAMILY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reset_launches(*modules) -> None:
    """Forget the cached launchers: their argument tails hold the workspace they were built with."""
    for m in modules:
        m._launchers.clear()


def caller(module, tunables: dict, x):
    """A call of the module's vector_sum under `tunables` (the plan and launcher caches are keyed by the table's
    identity, so two tables of one module keep a launcher each)."""
    def call():
        module.TUNABLES = tunables
        return module.vector_sum(x)
    return call


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="25088,97536,1638400,1824256,52428800")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()

    import torch

    from harness.jobs.tuning_session import paired_rounds
    from harness.timing import CudaTimer
    from suite.optimize import paired

    if not torch.cuda.is_available():
        print("same_file_probe: no CUDA device")
        return 2
    first, second = load("probe_family_a"), load("probe_family_b")
    timer = CudaTimer()
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        x = torch.randn(size, device="cuda")
        first.vector_sum(x), second.vector_sum(x)  # each module's workspace and launcher
        dev = str(x.device)
        own = (first._workspaces[dev], second._workspaces[dev])
        plain = {m: m.TUNABLES for m in (first, second)}

        call_a, call_b = caller(first, plain[first], x), caller(second, plain[second], x)
        arms = {
            "same": (call_a, call_a, own),
            "copies": (call_a, call_b, own),
            "swapped": (call_a, call_b, own[::-1]),
            "shared": (call_a, call_b, (own[0], own[0])),
            "copies again": (call_a, call_b, own),
        }
        for arm, (fa, fb, (wa, wb)) in arms.items():
            first._workspaces, second._workspaces = {dev: wa}, {dev: wb}
            reset_launches(first, second)
            a_us, b_us = paired_rounds(timer, fa, fb, args.rounds)
            v = paired.decide([(a_us, b_us)])
            rows.append((arm, size, statistics.median(a_us), statistics.median(b_us), v.speedup, v.low, v.high,
                         f"{wa[1].data_ptr():#x}/{wb[1].data_ptr():#x}"))
        first._workspaces, second._workspaces = {dev: own[0]}, {dev: own[1]}
        for m in (first, second):
            m.TUNABLES = plain[m]
        reset_launches(first, second)
    print(f"{'arm':<13} {'size':>10} {'A us':>8} {'B us':>8} {'B vs A':>7} {'interval':>16}  tickets A/B")
    for arm, size, a, b, s, lo, hi, where in rows:
        print(f"{arm:<13} {size:>10} {a:8.2f} {b:8.2f} {s:7.3f}   [{lo:.3f}, {hi:.3f}]  {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
