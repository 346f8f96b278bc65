"""Why the bench times few-microsecond Triton calls higher than one process timing them side by side does.

At the held-out decode shapes the bench's medians (runs 20261204-213635, 20261205-035104, -035811) sit above
scripts/decode_probe.py's for the same kernels, by +0.0-0.5 us for torch.compile's and +0.3-1.4 us for ours and
Liger's (both launched through Triton's Python launcher; torch.compile's through Inductor's). The two differ
in the process (a worker that ran the checks first, against a bare one), in the spin before each call (each
callable's own, against the slowest of all) and in the statistic (the median of every call, against the
median of 5-call batch medians, the callables interleaved). This times each implementation in this one
process by every method in turn, and twice in reverse order, so the method's share shows apart from the
process's:
- measure: CudaTimer.measure, one callable after another (what a bench worker does);
- measure-lead400: the same with the spin at least 400 us;
- rounds: 5-call batches, the callables interleaved, the order rotated (decode_probe, `ksuite confirm`);
- measure-scattered: measure, with each input tensor copied into its own allocation 4 MB from any other (a
  worker that ran the checks first holds its inputs wherever its allocator had room: if the flush evicts the
  address translations, tensors on more 2 MB pages cost more walks before the first byte).
Per (shape, implementation, method): the median, quartiles, 10th and 90th percentiles, minimum and the
spin; every call's time in OUT.raw.tsv. Run a `ksuite bench` of the same shapes beside it for the process.
Usage (GPU machine): python3 scripts/timing_method_probe.py OUT.tsv
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from harness.baselines import make_baseline  # noqa: E402
from harness.inputs import build_candidate, make_inputs  # noqa: E402
from harness.loader import load_candidate_class, load_problem  # noqa: E402
from harness.shape_spec import custom_shapes  # noqa: E402
from harness.timing import BATCH, CudaTimer  # noqa: E402

CASES = [("rotary", "1x32x1x128"), ("rmsnorm", "7x3584"), ("layernorm", "7x1600"), ("swiglu_act", "127x3072")]
ROUNDS = 40


def quantile(values: list[float], q: float) -> float:
    ranked = sorted(values)
    return ranked[int(q * (len(ranked) - 1))]


def measured(timer: CudaTimer, fn) -> list[float]:
    """Every call's time, as CudaTimer.measure takes them (its stopping rule, its batches)."""
    from harness.timing import summarize

    timer.prepare(fn)
    times: list[float] = []
    while len(times) < timer.max_runs:
        times += timer.time_batch(fn, min(BATCH, timer.max_runs - len(times)))
        if len(times) >= timer.min_runs and summarize(times).rse < timer.target_rse:
            break
    return times


def rounds(timer: CudaTimer, fns: list) -> list[list[float]]:
    """Every call's time, 5-call batches of each callable in turn, the order rotated every round."""
    timer.prepare(*fns)
    out: list[list[float]] = [[] for _ in fns]
    for r in range(ROUNDS):
        for i in [(r + k) % len(fns) for k in range(len(fns))]:
            out[i] += timer.time_batch(fns[i], 5)
    return out


def scattered(inputs: list, keep: list) -> list:
    """The inputs, each tensor copied into its own allocation with 4 MB after it (`keep` holds the buffers)."""
    out = []
    for x in inputs:
        if not isinstance(x, torch.Tensor):
            out.append(x)
            continue
        n = x.numel() * x.element_size()
        buf = torch.empty((4 << 20) + n, dtype=torch.uint8, device=x.device)
        keep.append(buf)
        out.append(buf[:n].view(x.dtype).view(x.shape).copy_(x))
    return out


def batch_median(times: list[float]) -> float:
    return statistics.median(statistics.median(times[i:i + 5]) for i in range(0, len(times) - 4, 5))


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    raw = out.with_suffix(".raw.tsv")
    rows = ["problem\tshape\timpl\tmethod\tpass\tmedian_us\tbatch_median_us\tp10\tp25\tp75\tp90\tmin_us\truns\tlead_us"]
    raw_rows = ["problem\tshape\timpl\tmethod\tpass\tus"]
    timers = {"measure": CudaTimer(), "measure-lead400": CudaTimer(lead_us=400.0)}
    print(f"{'case':22s} {'impl':8s} {'method':16s} {'pass':>4s} {'median':>7s} {'p25':>6s} {'p75':>6s} {'min':>6s}",
          flush=True)
    for name, text in CASES:
        problem = load_problem(Path("problems") / f"{name}.py")
        shape = custom_shapes(problem, (text,))[0]
        inputs = make_inputs(problem, shape, "float16", 1, "cuda")
        family = load_candidate_class(Path("solutions") / name / "triton_family.py", f"timing_probe_{name}")
        impls = {"compile": make_baseline(problem, "compile", shape, "float16", 0, "cuda"),
                 "family": build_candidate(problem, family, shape, "float16", 0, "cuda")}
        try:
            impls["liger"] = make_baseline(problem, "liger", shape, "float16", 0, "cuda")
        except Exception as exc:  # noqa: BLE001 - Liger missing: one line
            print(f"  liger left out: {str(exc).splitlines()[0][:120]}", flush=True)
        fns = {label: (lambda m=m, x=inputs: m(*x)) for label, m in impls.items()}
        keep: list = []
        apart = scattered(inputs, keep)
        fns_apart = {label: (lambda m=m, x=apart: m(*x)) for label, m in impls.items()}
        results = []
        with torch.no_grad():
            for p, order in enumerate((list(fns), list(reversed(fns)))):
                for method, timer in timers.items():
                    for label in order:
                        results.append((label, method, p, measured(timer, fns[label]), timer.lead_us))
                for label in order:
                    results.append((label, "measure-scattered", p, measured(timers["measure"], fns_apart[label]),
                                    timers["measure"].lead_us))
                interleaved = rounds(timers["measure"], [fns[label] for label in order])
                results += [(label, "rounds", p, times, timers["measure"].lead_us)
                            for label, times in zip(order, interleaved)]
        for label, method, p, times, lead in results:
            rows.append("\t".join([name, text, label, method, str(p)] + [f"{v:.3f}" for v in (
                statistics.median(times), batch_median(times), quantile(times, 0.1), quantile(times, 0.25),
                quantile(times, 0.75), quantile(times, 0.9), min(times))] + [str(len(times)), f"{lead:.0f}"]))
            raw_rows += [f"{name}\t{text}\t{label}\t{method}\t{p}\t{t:.3f}" for t in times]
            print(f"{name + ' ' + text:22s} {label:8s} {method:16s} {p:4d} {statistics.median(times):7.2f} "
                  f"{quantile(times, 0.25):6.2f} {quantile(times, 0.75):6.2f} {min(times):6.2f}", flush=True)
        out.write_text("\n".join(rows) + "\n")  # after every case: a timeout keeps what was measured
        raw.write_text("\n".join(raw_rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
