"""Compile a Triton candidate's kernels for a GPU this machine does not have.

The candidate's forward runs on CPU tensors of the real shape under a stand-in driver that compiles each
launch for the named target and launches nothing, so the outputs are never computed: what comes back is
each launch's grid, options, PTX and cubin, for the disassembly (harness/machine_code/sass.py) to read. Kernels, block
sizes and specialisations are the ones the candidate picks at that shape, as on the GPU; only host logic
that asks the device itself (its multiprocessor count, say) sees a CPU instead.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from harness.cache_dirs import with_cache_dirs
from harness.children.launcher import run_to_end
from harness.machine_code.launch_record import grid_of

ROOT = Path(__file__).resolve().parents[2]  # so the child imports this checkout's harness


class OfflineCompileError(Exception):
    """This Triton cannot compile for another target, or the candidate needs a real device."""


@dataclass(frozen=True)
class CompiledLaunch:
    kernel: str
    grid: tuple[int, ...] | None  # None: the candidate passed a grid function we could not evaluate
    num_warps: int
    num_stages: int
    shared: int  # bytes of shared memory Triton asked for (static + dynamic)
    ptx: str
    cubin: bytes


class _OfflineDriver:
    """Just enough of Triton's driver for JITFunction.run to compile: one fake device, no stream."""

    def __init__(self, target):
        self.target = target

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        return self.target

    def get_active_torch_device(self):
        return torch.device("cpu")


def _imports():
    try:
        from triton.backends.compiler import GPUTarget
        from triton.runtime.driver import driver
        from triton.runtime.jit import JITFunction
    except ImportError as exc:  # pragma: no cover - only on a Triton without these modules
        raise OfflineCompileError(f"this Triton cannot compile for another GPU ({exc})") from None
    return GPUTarget, driver, JITFunction


@contextmanager
def compiling_for(capability: int, warp_size: int = 32) -> Iterator[list[CompiledLaunch]]:
    """Inside, each launch of a compiled (not interpreted) kernel is compiled for CUDA compute capability
    `capability` (90 for Hopper), appended to the yielded list, and not run. Needs a process whose Triton
    was imported with the interpreter off: `compile_launches` starts one."""
    GPUTarget, driver, JITFunction = _imports()
    launches: list[CompiledLaunch] = []
    touched: set = set()
    original_run = JITFunction.run
    # reset_active() would build the CUDA driver, which a CPU machine lacks (Triton 3.2 keeps it as `active`)
    slot = "_active" if hasattr(driver, "_active") else "active"
    saved_driver = getattr(driver, slot)

    def run(self, *args, grid, warmup, **kwargs):
        touched.add(self)
        kernel = original_run(self, *args, grid=grid, warmup=True, **kwargs)
        bound = dict(zip([p.name for p in self.params], args))
        md = kernel.metadata
        launches.append(CompiledLaunch(kernel=self.fn.__name__, grid=grid_of(grid, {**bound, **kwargs}),
                                       num_warps=md.num_warps, num_stages=md.num_stages, shared=md.shared,
                                       ptx=kernel.asm["ptx"], cubin=kernel.asm["cubin"]))
        return kernel

    JITFunction.run = run
    driver.set_active(_OfflineDriver(GPUTarget("cuda", capability, warp_size)))
    try:
        yield launches
    finally:
        JITFunction.run = original_run
        setattr(driver, slot, saved_driver)
        for fn in touched:  # their binders hold the fake target
            if hasattr(fn, "device_caches"):
                fn.device_caches.clear()
            else:  # Triton 3.2: one binder, and a kernel cache per device
                fn.cache.clear()
                fn.binder = None


def compile_launches(problem_path: Path, solution_path: Path | None, shape: dict, dtype: str, capability: int,
                     timeout_s: float = 300.0, baseline: str | None = None) -> list[CompiledLaunch]:
    """One forward call of the candidate at `shape`, compiled for `capability`, in a child process: its
    Triton starts with the interpreter off (the parent's may be on), and a candidate that hangs or
    crashes costs only the child. `baseline` "liger" compiles the problem's Liger baseline instead (a Triton
    one too; solution_path None)."""
    return compile_at_shapes(problem_path, solution_path, [shape], dtype, capability, timeout_s,
                             baseline=baseline)[0]


def compile_at_shapes(problem_path: Path, solution_path: Path | None, shapes: list[dict], dtype: str,
                      capability: int, timeout_s: float = 300.0, env: dict | None = None,
                      baseline: str | None = None) -> list[list[CompiledLaunch]]:
    """compile_launches at several shapes in one child (its start, importing torch, is most of the cost);
    `env`: the child's environment (default: this process's), its compile caches under the cache root."""
    if baseline not in (None, "liger"):
        raise OfflineCompileError(f"{problem_path}: only Liger's baseline is Triton code to compile, not {baseline!r}")
    name = f"{Path(problem_path).name} ({baseline})" if baseline else str(solution_path)
    with tempfile.TemporaryDirectory(prefix="ksuite-inspect-") as folder:
        out = Path(folder) / "launches.json"
        job = json.dumps({"problem": str(Path(problem_path).resolve()), "shapes": shapes, "dtype": dtype,
                          "solution": str(Path(solution_path).resolve()) if solution_path else None,
                          "baseline": baseline, "capability": capability, "out": str(out)})
        env = with_cache_dirs({k: v for k, v in (os.environ if env is None else env).items()
                               if k != "TRITON_INTERPRET"})
        done = run_to_end("harness.machine_code.offline_compile", [job], env, timeout_s, cwd=ROOT)
        if done.timed_out:
            raise OfflineCompileError(f"{name}: no answer within {timeout_s:.0f} s")
        if not out.is_file():
            tail = (done.stderr.strip().splitlines() or ["exit code " + str(done.returncode)])[-1]
            raise OfflineCompileError(f"{name}: {tail[:300]}")
        answer = json.loads(out.read_text())
    if "error" in answer:
        raise OfflineCompileError(f"{name}: {answer['error']}")
    return [[CompiledLaunch(**{**a, "grid": tuple(a["grid"]) if a["grid"] else None,
                               "cubin": base64.b64decode(a["cubin"])}) for a in launches]
            for launches in answer["launches"]]


def _child(job: dict) -> dict:
    from harness.inputs import build_candidate, make_inputs
    from harness.loader import load_candidate_class, load_problem

    problem = load_problem(Path(job["problem"]), "ksuite_inspect_problem")
    per_shape = []
    with compiling_for(job["capability"]) as launches:
        if job.get("baseline"):
            cls = problem.liger_class
            if cls is None:
                raise ValueError("the problem names no Liger op (no ModelLiger)")
        else:
            cls = load_candidate_class(Path(job["solution"]), "ksuite_inspect_candidate")
        for shape in job["shapes"]:
            seen = len(launches)
            model = build_candidate(problem, cls, shape, job["dtype"], seed=0, device="cpu")
            with torch.no_grad():
                model(*make_inputs(problem, shape, job["dtype"], seed=0, device="cpu"))
            per_shape.append([{**asdict(launch), "cubin": base64.b64encode(launch.cubin).decode()}
                              for launch in launches[seen:]])
    return {"launches": per_shape}


def _summary(message: str) -> str:
    """One line: a Triton CompilationError puts the place first and the cause last, with source between."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if not lines:
        return ""
    return (lines[0] if len(lines) == 1 else f"{lines[0]} {lines[-1]}")[:300]


def main(argv: list[str]) -> int:
    job = json.loads(argv[0])
    try:
        answer = _child(job)
    except Exception as exc:  # noqa: BLE001 - the candidate's or the problem's failure, told to the parent
        answer = {"error": f"{type(exc).__name__}: {_summary(str(exc))}"}
    Path(job["out"]).write_text(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
