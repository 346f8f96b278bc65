"""Inspect a candidate's kernels for a GPU without one: a Triton candidate's launches compiled at a real
shape for the target (offline_compile.py), a CUDA C++ candidate's kernels through nvcc (cuda_offline.py);
then registers, spills, occupancy, load and store widths, bytes in flight and tensor-core instructions read
from the machine code (sass.py, occupancy.py), all beside this file in harness/machine_code/. Says why a
kernel falls short of the ceiling before any device time is spent.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.machine_code import cuda_offline
from harness.machine_code.occupancy import LIMITS, Occupancy, occupancy
from harness.machine_code.offline_compile import CompiledLaunch, OfflineCompileError, compile_launches
from harness.machine_code.sass import (
    MemoryProfile,
    Resources,
    SassError,
    disassemble,
    memory_profile,
    resources,
    run_tool,
    tensor_core_ops,
)


@dataclass(frozen=True)
class Target:
    capability: int  # 90 for sm_90
    sm_count: int
    bandwidth_Bps: float | None = None  # measured copy bandwidth, for the bytes in flight it takes
    latency_ns: float = 700.0  # assumed loaded DRAM latency; printed beside anything derived from it

    def needed_bytes_per_sm(self) -> float | None:
        """Little's law: bandwidth x latency bytes in flight over the GPU, spread over its SMs."""
        if not self.bandwidth_Bps:
            return None
        return self.bandwidth_Bps * self.latency_ns * 1e-9 / self.sm_count


@dataclass(frozen=True)
class KernelReport:
    launch: CompiledLaunch
    resources: Resources
    occupancy: Occupancy
    memory: MemoryProfile
    sass: str

    @property
    def tensor_cores(self):
        return tensor_core_ops(self.sass)

    @property
    def threads(self) -> int:
        return self.launch.num_warps * 32

    def resident_blocks(self, target: Target) -> int:
        """Blocks per SM in this launch: the occupancy limit, or fewer if the grid does not fill the GPU."""
        if self.launch.grid is None:
            return self.occupancy.blocks
        blocks = 1
        for g in self.launch.grid:
            blocks *= g
        return min(self.occupancy.blocks, -(-blocks // target.sm_count))

    def bytes_in_flight_per_sm(self, target: Target) -> int:
        return self.resident_blocks(target) * self.threads * self.memory.max_bytes_in_flight


class InspectError(Exception):
    """The candidate could not be compiled offline; the message names the file and the cause."""


def inspect(problem_path: Path, solution_path: Path | None, shape: dict, dtype: str, target: Target,
            timeout_s: float = 300.0, baseline: str | None = None) -> list[KernelReport]:
    """Every kernel launch of one forward call at `shape` and `dtype`, compiled for `target`: the solution's,
    or with `baseline` "liger" (solution_path None) the problem's Liger baseline's."""
    try:
        launches = compile_launches(problem_path, solution_path, shape, dtype, target.capability, timeout_s,
                                    baseline=baseline)
    except OfflineCompileError as exc:
        raise InspectError(str(exc)) from None
    if not launches:
        raise InspectError(f"{solution_path or baseline}: launched no Triton kernel at this shape")
    try:
        return [report(launch, target) for launch in launches]
    except (SassError, KeyError) as exc:  # KeyError: no SM limits for this compute capability
        raise InspectError(str(exc).strip("'\"")) from None


def report(launch: CompiledLaunch, target: Target) -> KernelReport:
    """One compiled launch read: resources, residency, memory profile."""
    res = resources(launch.cubin)
    sass = disassemble(launch.cubin)
    occ = occupancy(target.capability, res.registers, launch.num_warps, launch.shared)
    return KernelReport(launch, res, occ, memory_profile(sass), sass)


@dataclass(frozen=True)
class CudaKernelReport:
    """One kernel of a CUDA C++ solution's cubin: no launch seen, so the block size is its
    __launch_bounds__ (occupancy is unknown without one) and the grid is not known."""

    name: str
    resources: Resources
    threads: int | None
    occupancy: Occupancy | None
    memory: MemoryProfile
    sass: str

    @property
    def tensor_cores(self):
        return tensor_core_ops(self.sass)

    def bytes_in_flight_per_sm(self) -> int | None:
        """If the grid fills every SM to the occupancy limit, as the large shapes do."""
        if self.occupancy is None or self.threads is None:
            return None
        return self.occupancy.blocks * self.threads * self.memory.max_bytes_in_flight


def inspect_cuda(solution_path: Path, target: Target, dtype: str | None = None,
                 timeout_s: float = 600.0, source: str | None = None) -> list[CudaKernelReport]:
    """Every kernel of a CUDA C++ solution (load_inline layout), compiled by nvcc for `target` (from `source`
    where given: one of several builds); with `dtype`, templates instantiated for another element type are
    left out."""
    try:
        cubin = cuda_offline.compile_cubin(solution_path, target.capability, timeout_s, source)
        usage = cuda_offline.resources_by_function(run_tool(cubin, "cuobjdump", "-res-usage"))
        bounds = cuda_offline.launch_bounds(run_tool(cubin, "cuobjdump", "-elf"))
        per_kernel = cuda_offline.functions(disassemble(cubin))
    except (cuda_offline.CudaOfflineError, SassError) as exc:
        raise InspectError(str(exc)) from None
    if target.capability not in LIMITS:
        raise InspectError(f"no SM limits for compute capability {target.capability} (known: {sorted(LIMITS)})")
    names = cuda_offline.demangle(sorted(per_kernel))
    reports = []
    for mangled in sorted(per_kernel, key=names.get):
        if dtype and not cuda_offline.for_dtype(names[mangled], dtype):
            continue
        found = usage.get(mangled, {})
        res = Resources(found.get("REG", 0), found.get("STACK", 0) + found.get("LOCAL", 0), found.get("SHARED", 0))
        threads = bounds.get(mangled)
        occ = (occupancy(target.capability, res.registers, max(1, threads // 32), res.shared_bytes)
               if threads else None)
        reports.append(CudaKernelReport(names[mangled], res, threads, occ, memory_profile(per_kernel[mangled]),
                                        per_kernel[mangled]))
    if not reports:
        raise InspectError(f"{solution_path}: the CUDA source defines no kernel")
    return reports
