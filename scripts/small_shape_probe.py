"""Are the small-shape losses the kernel's, or the bench's? A GPU probe of held-out decode shapes.

In `ksuite bench` each solution runs in a fresh worker process and the baselines in another, so at shapes of
3.5-5 us a 0.3-1 us gap between triton_family and torch.compile (held-out runs 20261202-022505, -022823,
-023216) may come from the process (where its buffers landed, what ran before) as well as from the kernel.
This times both in one process on the same inputs, interleaved (harness/jobs/tuning_session.paired_rounds:
the order flipped every round), with the harness's own timer, and prints per shape the two medians, their
ratio (compile time / family time: above 1 the family is faster) and the family's launch configuration.
Usage: python3 scripts/small_shape_probe.py [problem ...] (default: every problem in SHAPES)
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from harness.baselines import make_baseline  # noqa: E402
from harness.inputs import build_candidate, make_inputs  # noqa: E402
from harness.jobs.tuning_session import paired_rounds  # noqa: E402
from harness.loader import import_file, load_candidate_class, load_problem  # noqa: E402
from harness.timing import CudaTimer  # noqa: E402

# the held-out shapes the family lost at, and one it tied at, per problem (fp16); reduce_rows also its tuning shape
# 127x2304, beside the held-out 127x3072 of the same bucket
SHAPES = {
    "swiglu_act": [{"rows": 1, "cols": 14336}, {"rows": 16, "cols": 3072}, {"rows": 127, "cols": 3072},
                   {"rows": 7, "cols": 18944}, {"rows": 7, "cols": 6400}],
    "rotary": [{"batch_size": 1, "num_heads": 32, "seq_len": 16, "head_dim": 96},
               {"batch_size": 1, "num_heads": 32, "seq_len": 127, "head_dim": 96},
               {"batch_size": 1, "num_heads": 32, "seq_len": 7, "head_dim": 128},
               {"batch_size": 1, "num_heads": 28, "seq_len": 509, "head_dim": 128}],
    "reduce_rows": [{"rows": 127, "cols": 768}, {"rows": 16, "cols": 3072}, {"rows": 127, "cols": 8192},
                    {"rows": 7, "cols": 1600}, {"rows": 127, "cols": 3072}, {"rows": 127, "cols": 2304}],
    "rmsnorm": [{"batch_size": 127, "dim": 2304}, {"batch_size": 7, "dim": 3584}],
    "layernorm": [{"batch_size": 7, "dim": 1600}, {"batch_size": 7, "dim": 3584}],
    "softmax": [{"batch_size": 16, "dim": 50257}],
}
ROUNDS = 30


def family_config(name: str, shape: dict) -> str:
    """The family's launch configuration at this shape, where its module says (launch_config)."""
    module = import_file(Path("solutions") / name / "triton_family.py", f"probe_cfg_{name}")
    launch = getattr(module, "launch_config", None)
    if launch is None:
        return "-"
    for extra in ((), (2,)):  # reduce_rows' also takes the element size (float16: 2 bytes)
        try:
            return str(launch(*shape.values(), *extra))
        except TypeError:
            continue
    return "-"


def main(names: list[str]) -> None:
    timer = CudaTimer()
    print(f"{'problem':12s} {'shape':28s} {'compile us':>10s} {'family us':>10s} {'x':>6s}  config")
    for name in names:
        problem = load_problem(Path("problems") / f"{name}.py")
        family_cls = load_candidate_class(Path("solutions") / name / "triton_family.py", f"probe_family_{name}")
        dtype = "float16"
        for shape in SHAPES[name]:
            inputs = make_inputs(problem, shape, dtype, 1, "cuda")
            compiled = make_baseline(problem, "compile", shape, dtype, 0, "cuda")
            family = build_candidate(problem, family_cls, shape, dtype, 0, "cuda")
            with torch.no_grad():
                base_us, fam_us = paired_rounds(timer, lambda m=compiled, x=inputs: m(*x),
                                                lambda m=family, x=inputs: m(*x), ROUNDS)
            b, f = statistics.median(base_us), statistics.median(fam_us)
            text = "x".join(str(v) for v in shape.values())
            print(f"{name:12s} {text:28s} {b:10.2f} {f:10.2f} {b / f:6.3f}  {family_config(name, shape)}",
                  flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or list(SHAPES))
