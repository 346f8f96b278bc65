"""Where a decode call's few microseconds go, on the GPU: memory latency or the kernel's own work.

At the held-out decode shapes of rmsnorm, layernorm, swiglu_act, rotary and reduce_rows the families lose to
torch.compile or Liger by 0.3-0.9 us of 4-5. For each (problem, shape) this builds torch.compile's model,
Liger's (when installed and the problem has one), the family as its table says and, where the family has the
tunable, the family with LOADS_TOGETHER on in every entry, all on the same inputs in one process, and times
them interleaved (the order rotated every round) twice: after the harness's clean L2 flush (what the bench
times) and with L2 warm (no flush; the same spin before each call). Flushed minus warm is the time a call
waits on memory. A family whose warm time matches the winner's but whose flushed time does not loses on
memory rounds (`ksuite inspect`'s "load rounds"); one already behind when warm loses in its own work.
A probe for design work; the bench is the record.
Usage (GPU machine): python3 scripts/decode_probe.py OUT.tsv [problem ...]  (KSUITE_PROBE_DTYPE=bfloat16)
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from harness.baselines import make_baseline  # noqa: E402
from harness.inputs import build_candidate, make_inputs  # noqa: E402
from harness.loader import import_file, load_problem  # noqa: E402
from harness.timing import CudaTimer  # noqa: E402

SHAPES = {  # held-out decode shapes the families lost at (README's held-out table)
    "rmsnorm": ["7x3584", "127x2304", "1x4096", "7x1600"],
    "layernorm": ["7x1600", "7x3584", "127x2304", "1x4096"],
    "swiglu_act": ["1x14336", "16x3072", "127x3072"],
    "rotary": ["1x16x1x256", "1x32x1x128", "1x32x16x96", "1x32x7x128"],
    "reduce_rows": ["16x2304", "127x8192", "127x768"],
}
ROUNDS, BATCH = 20, 5


class WarmTimer(CudaTimer):
    """The harness's timer without the flush: the inputs stay in L2 from the call before."""

    def flush(self) -> None:
        if self.lead_cycles:
            torch.cuda._sleep(self.lead_cycles)


def rotating_rounds(timer: CudaTimer, fns: list, rounds: int) -> list[list[float]]:
    """Per-round medians of BATCH calls of each callable, the order rotated every round."""
    timer.prepare(*fns)
    out: list[list[float]] = [[] for _ in fns]
    for r in range(rounds):
        for i in [(r + k) % len(fns) for k in range(len(fns))]:
            out[i].append(statistics.median(timer.time_batch(fns[i], BATCH)))
    return out


def family_variants(name: str) -> dict:
    """The family's model class as tabled, and (where it has the tunable) with LOADS_TOGETHER everywhere."""
    path = Path("solutions") / name / "triton_family.py"
    variants = {"family": import_file(path, f"decode_probe_{name}").ModelNew}
    together = import_file(path, f"decode_probe_{name}_together")
    if "LOADS_TOGETHER" in together.TUNABLES:
        together.TUNABLES["LOADS_TOGETHER"] = True
        together.DISPATCH, together.DISPATCH_BY_GPU = together.dispatch_table(), {}  # this GPU's table, patched
        for entry in together.DISPATCH.values():
            entry["LOADS_TOGETHER"] = True
        variants["family+together"] = together.ModelNew
    return variants


def shape_of(problem, text: str) -> dict:
    from harness.shape_spec import custom_shapes

    return custom_shapes(problem, (text,))[0]


def main(argv: list[str]) -> int:
    out, names = Path(argv[0]), argv[1:] or list(SHAPES)
    dtype = os.environ.get("KSUITE_PROBE_DTYPE", "float16")
    timers = {"flushed": CudaTimer(), "warm": WarmTimer()}
    rows = ["problem\tshape\tdtype\timpl\tflushed_us\twarm_us\tmemory_us\tclose_to_compile"]
    print(f"{'problem':12s} {'shape':14s} {'impl':16s} {'flushed':>8s} {'warm':>8s} {'memory':>8s}", flush=True)
    for name in names:
        problem = load_problem(Path("problems") / f"{name}.py")
        variants = family_variants(name)
        for text in SHAPES[name]:
            shape = shape_of(problem, text)
            inputs = make_inputs(problem, shape, dtype, 1, "cuda")
            impls = {"compile": make_baseline(problem, "compile", shape, dtype, 0, "cuda")}
            if problem.liger_class is not None:
                try:
                    impls["liger"] = make_baseline(problem, "liger", shape, dtype, 0, "cuda")
                except Exception as exc:  # noqa: BLE001 - Liger missing: one line, not the end of the probe
                    print(f"  liger left out at {name} {text}: {str(exc).splitlines()[0][:120]}", flush=True)
            for label, cls in variants.items():
                impls[label] = build_candidate(problem, cls, shape, dtype, 0, "cuda")
            fns = [lambda m=m, x=inputs: m(*x) for m in impls.values()]
            with torch.no_grad():
                first = [fn().float() for fn in fns]  # a variant far from torch.compile's answer is flagged
                close = [torch.allclose(o, first[0], rtol=2e-2, atol=2e-2) for o in first]
                medians = {kind: [statistics.median(r) for r in rotating_rounds(t, fns, ROUNDS)]
                           for kind, t in timers.items()}
            for i, label in enumerate(impls):
                f, w = medians["flushed"][i], medians["warm"][i]
                rows.append(f"{name}\t{text}\t{dtype}\t{label}\t{f:.3f}\t{w:.3f}\t{f - w:.3f}\t{close[i]}")
                flag = "" if close[i] else "  FAR FROM COMPILE'S ANSWER"
                print(f"{name:12s} {text:14s} {label:16s} {f:8.2f} {w:8.2f} {f - w:8.2f}{flag}", flush=True)
            out.write_text("\n".join(rows) + "\n")  # after every shape: a timeout keeps what was measured
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
