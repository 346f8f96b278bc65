"""Static screen for the optimisation loop: a Triton candidate whose kernels spill registers, or cannot fit one
block on a multiprocessor, at any timed shape is discarded from its machine code (compiled offline for this
GPU, a few seconds) instead of being checked and timed (half a minute or more). A tile grown without more
warps is the usual case: in one H200 search BLOCK_M 128->256 at 4 warps took 1200 us against 255.
"""

from __future__ import annotations

from pathlib import Path

from harness.cuda_build import is_cuda_solution
from harness.machine_code.kernel_inspect import Target, report
from harness.machine_code.offline_compile import OfflineCompileError, compile_at_shapes
from harness.machine_code.sass import SassError


class StaticScreen:
    """Callable: a candidate file -> why it is not worth timing, or None (time it). CUDA C++ candidates
    and candidates that fail to compile offline pass through: the check reports those with their cause."""

    def __init__(self, problem_path: Path, target: Target, shapes: list[dict], dtype: str):
        self.problem_path, self.target, self.shapes, self.dtype = Path(problem_path), target, shapes, dtype

    def __call__(self, candidate: Path) -> str | None:
        if is_cuda_solution(candidate):
            return None
        try:
            per_shape = compile_at_shapes(self.problem_path, candidate, self.shapes, self.dtype,
                                          self.target.capability)
            for shape, launches in zip(self.shapes, per_shape):
                for launch in launches:
                    problem = _problem(report(launch, self.target))
                    if problem:
                        where = "x".join(str(v) for v in shape.values())
                        return f"static: {launch.kernel} {problem} at {where} (sm_{self.target.capability}, not timed)"
        except (OfflineCompileError, SassError, KeyError):  # KeyError: a GPU without known SM limits
            return None
        return None


def _problem(rep) -> str | None:
    if rep.resources.spill_bytes:
        return (f"spills {rep.resources.spill_bytes} B per thread ({rep.resources.registers} registers, "
                f"{rep.launch.num_warps} warps)")
    if rep.occupancy.blocks == 0:
        return f"does not fit on a multiprocessor ({rep.occupancy.limiter})"
    return None
