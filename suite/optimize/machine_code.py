"""The current best kernel's machine code, in a few lines for the LLM's prompt: what `ksuite inspect` reads
(registers, spills, residency, access widths, bytes in flight, tensor-core instructions), so a proposal can
answer what the compiler made of the last one instead of guessing."""

from __future__ import annotations

import tempfile
from pathlib import Path

from harness.cuda_build import is_cuda_solution
from harness.machine_code.kernel_inspect import InspectError, Target, inspect, inspect_cuda
from harness.machine_code.sass import MemoryProfile, mix_ops


class MachineCode:
    """Callable: a kernel file's source -> its machine-code summary for `target` at one shape and dtype."""

    def __init__(self, problem_path: Path, target: Target, shape: dict, dtype: str):
        self.problem_path, self.target, self.shape, self.dtype = Path(problem_path), target, shape, dtype
        self._cache: dict[str, str] = {}

    def __call__(self, source: str) -> str:
        if source not in self._cache:
            self._cache = {source: self._summarise(source)}  # only the newest best is asked for again
        return self._cache[source]

    def _summarise(self, source: str) -> str:
        with tempfile.TemporaryDirectory(prefix="ksuite-machine-code-") as folder:
            path = Path(folder) / "best.py"  # Triton's jit reads the source from a real file
            path.write_text(source)
            try:
                if is_cuda_solution(path):
                    lines = [_cuda_line(r) for r in inspect_cuda(path, self.target, self.dtype)]
                else:
                    lines = [_triton_line(r, self.target)
                             for r in inspect(self.problem_path, path, self.shape, self.dtype, self.target)]
            except InspectError as exc:
                return f"not available: {str(exc).replace(str(path), 'the kernel file')}"
        need = self.target.needed_bytes_per_sm()
        head = (f"sm_{self.target.capability}, {self.target.sm_count} SMs, "
                f"shape {'x'.join(str(v) for v in self.shape.values())} {self.dtype}, compiled offline"
                + (f"; about {need / 1024:.0f} KB in flight per SM keeps the measured bandwidth busy "
                   f"(at an assumed {self.target.latency_ns:.0f} ns latency)" if need else ""))
        return "\n".join([head] + [f"- {line}" for line in lines])


def _blocks(occ) -> str:
    return f"{occ.blocks} blocks per SM ({occ.limiter} limit)"


def _memory(memory: MemoryProfile) -> str:
    loads, stores = MemoryProfile.mix(memory.loads + memory.async_copies), MemoryProfile.mix(memory.stores)
    return f"loads {loads}, stores {stores}, {memory.max_bytes_in_flight} B in flight per thread"


def _triton_line(rep, target: Target) -> str:
    grid = "x".join(str(g) for g in rep.launch.grid) if rep.launch.grid else "?"
    return (f"{rep.launch.kernel}: grid {grid}, {rep.launch.num_warps} warps, {rep.launch.num_stages} stages, "
            f"{rep.resources.registers} registers, {rep.resources.spill_bytes} B spilled, "
            f"{rep.launch.shared / 1024:.1f} KB shared, {_blocks(rep.occupancy)}; {_memory(rep.memory)}, "
            f"{rep.bytes_in_flight_per_sm(target) / 1024:.0f} KB per SM; tensor cores {mix_ops(rep.tensor_cores)}")


def _cuda_line(rep) -> str:
    blocks = _blocks(rep.occupancy) if rep.occupancy else "blocks per SM unknown (no __launch_bounds__)"
    return (f"{rep.name}: {rep.threads or '?'} threads, {rep.resources.registers} registers, "
            f"{rep.resources.spill_bytes} B spilled, {blocks}; {_memory(rep.memory)}; "
            f"tensor cores {mix_ops(rep.tensor_cores)}")


def target_here(slug: str, latency_ns: float = 700.0) -> Target | None:
    """This machine's GPU as an inspection target (bandwidth from its calibration), or None without one."""
    import torch

    from suite.results_store import load_calibration

    if not torch.cuda.is_available():
        return None
    major, minor = torch.cuda.get_device_capability()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    calibration = load_calibration(slug) or {}
    return Target(major * 10 + minor, sms, calibration.get("copy_bandwidth_Bps"), latency_ns)
