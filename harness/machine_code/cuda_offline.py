"""Compile a CUDA C++ solution's kernels for a GPU this machine does not have: nvcc turns the source the
solution would hand to load_inline (its TUNABLES struct followed by CUDA_SOURCE) into a cubin for the
named architecture, without building or loading the extension. Works with a CPU wheel of torch: the one
generated header such a wheel lacks is stubbed (its content does not change the device code).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sysconfig
import tempfile
from itertools import count
from pathlib import Path

from harness.loader import LoadError, import_file

STUB_HEADER = ("c10/cuda/impl/cuda_cmake_macros.h", "#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n")
_names = count()


class CudaOfflineError(Exception):
    """No nvcc, a solution without the load_inline layout, or a compile error; names the file."""


def solution_source(path: Path) -> str:
    """The CUDA source of a solution, as its build step would assemble it, read without building."""
    module = _module(path)
    return module.config_source(module.TUNABLES) + module.CUDA_SOURCE


def solution_flags(path: Path, capability: int) -> tuple[str, list[str]]:
    """(the nvcc target, extra flags) a solution builds with: its ARCH ("90a": wgmma's architecture-specific
    target) where it names one for this capability, and its include_dirs() (CUTLASS's headers); else the
    plain target and nothing."""
    module = _module(path)
    arch = getattr(module, "ARCH", None)
    target = arch if arch and arch.rstrip("a") == str(capability) else str(capability)
    includes = module.include_dirs() if hasattr(module, "include_dirs") else []
    extra = [flag for flag in (module.nvcc_flags() if hasattr(module, "nvcc_flags") else [])
             if not flag.startswith("-gencode") and flag not in ("-O3",) and not flag.startswith("-std=")]
    return target, extra + [f"-I{folder}" for folder in includes]


def _module(path: Path):
    """The solution imported without building (its load_inline refused)."""
    from torch.utils import cpp_extension

    def refuse(*args, **kwargs):
        raise CudaOfflineError(f"{path}: builds its extension at import time")

    saved = cpp_extension.load_inline
    cpp_extension.load_inline = refuse
    try:
        module = import_file(path, f"ksuite_cuda_offline_{next(_names)}")
    except LoadError as exc:
        raise CudaOfflineError(str(exc)) from None
    finally:
        cpp_extension.load_inline = saved
    missing = [name for name in ("CUDA_SOURCE", "TUNABLES", "config_source") if not hasattr(module, name)]
    if missing:
        raise CudaOfflineError(f"{path}: no {', '.join(missing)} (the load_inline layout of solutions/*/cuda_*.py)")
    return module


def nvcc_command(cu: Path, out: Path, stub_dir: Path, capability: int | str, output: str = "-cubin",
                 extra: tuple = ()) -> list[str]:
    """nvcc with the flags and include paths torch's extension builder uses; `output` -cubin or -c;
    `capability` 90, or "90a" for the architecture-specific target; `extra`: a solution's own flags."""
    from torch.utils import cpp_extension

    includes = [*cpp_extension.include_paths(), sysconfig.get_path("include")]
    return ["nvcc", output, str(cu), "-o", str(out), f"-gencode=arch=compute_{capability},code=sm_{capability}",
            *extra,
            "-O3", "-std=c++20", "--compiler-options", "-fPIC", "-DTORCH_EXTENSION_NAME=ksuite_offline",
            "-DTORCH_API_INCLUDE_EXTENSION_H", *cpp_extension.COMMON_NVCC_FLAGS, f"-I{stub_dir}",
            *[arg for inc in includes for arg in ("-isystem", inc)]]


def write_stub(folder: Path) -> Path:
    header = folder / STUB_HEADER[0]
    header.parent.mkdir(parents=True, exist_ok=True)
    header.write_text(STUB_HEADER[1])
    return folder


def compile_cubin(path: Path, capability: int, timeout_s: float = 600.0, source: str | None = None) -> bytes:
    """The solution's cubin for `capability`: of `source` (one build of a file that builds several, its
    route_source()) with the file's flags, else of the source its TUNABLES make."""
    if shutil.which("nvcc") is None:
        raise CudaOfflineError(f"{path}: nvcc not found on PATH (needed to compile CUDA C++ for inspection)")
    source = source if source is not None else solution_source(path)
    try:
        target, extra = solution_flags(path, capability)
    except RuntimeError as exc:  # headers it needs are not here (CUTLASS's): one line naming the file
        raise CudaOfflineError(f"{path}: {exc}") from None
    with tempfile.TemporaryDirectory(prefix="ksuite-cuda-offline-") as folder:
        folder = Path(folder)
        cu, cubin = folder / "kernels.cu", folder / "kernels.cubin"
        cu.write_text(source)
        try:
            done = subprocess.run(nvcc_command(cu, cubin, write_stub(folder / "stub"), target, extra=tuple(extra)),
                                  capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise CudaOfflineError(f"{path}: nvcc took over {timeout_s:.0f} s") from None
        if done.returncode != 0:
            errors = [line for line in done.stderr.splitlines() if "error" in line] or done.stderr.splitlines()
            raise CudaOfflineError(f"{path}: nvcc failed: {(errors or ['no output'])[0].strip()[:300]}")
        return cubin.read_bytes()


_SECTION = re.compile(r"^\s*\.section\s+\.text\.([\w$.]+)", re.M)


def functions(sass: str) -> dict[str, str]:
    """A multi-kernel disassembly split per kernel: mangled name -> its SASS."""
    marks = list(_SECTION.finditer(sass))
    return {m.group(1): sass[m.start():(marks[i + 1].start() if i + 1 < len(marks) else len(sass))]
            for i, m in enumerate(marks)}


def resources_by_function(text: str) -> dict[str, dict[str, int]]:
    """cuobjdump -res-usage output -> mangled name -> {'REG': .., 'STACK': .., 'LOCAL': .., 'SHARED': ..}."""
    out, current = {}, None
    for line in text.splitlines():
        head = re.match(r"\s*Function\s+([\w$.]+):", line)
        if head:
            current = out.setdefault(head.group(1), {})
        elif current is not None:
            current.update({k: int(v) for k, v in re.findall(r"\b(REG|STACK|LOCAL|SHARED):(\d+)", line)})
    return out


def demangle(names: list[str]) -> dict[str, str]:
    """Readable kernel names (c++filt when present): `rmsnorm_vec_kernel<c10::Half, 2>`, without the
    return type, the anonymous namespace or the parameter list."""
    filt = shutil.which("c++filt")
    readable = names
    if filt and names:
        done = subprocess.run([filt], input="\n".join(names), capture_output=True, text=True)
        if done.returncode == 0 and len(done.stdout.splitlines()) == len(names):
            readable = done.stdout.splitlines()
    return {n: _cutlass_summary(r) if r.startswith("_Z") else _short(r) for n, r in zip(names, readable)}


_MMA_ATOM = re.compile(r"MMA_\d+x\d+x\d+_F32(BF16|F16|TF32)\w*?_[SR]S")


def _cutlass_summary(mangled: str) -> str:
    """A CUTLASS SM90 GEMM kernel's name, which c++filt cannot read (a thousand characters of nested templates), as
    what tells its builds apart: the schedule, the mainloop's stages and the warpgroup MMA (its element type and
    N, the swapped tile's width); any other name as it is."""
    atom = _MMA_ATOM.search(mangled)
    schedule = re.search(r"Kernel(TmaWarpSpecialized\w*?)E", mangled)
    stages = re.search(r"MainloopSm90TmaGmmaWarpSpecializedILi(\d+)E", mangled)
    if not (mangled.startswith("_ZN7cutlass") and atom and schedule and stages):
        return mangled
    return f"cutlass GEMM, {schedule.group(1)}, {stages.group(1)} stages, {atom.group(0)}"


def _short(text: str) -> str:
    text = text.replace("(anonymous namespace)::", "")
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        if text[i] == ")":
            depth += 1
        elif text[i] == "(":
            depth -= 1
            if depth == 0:
                text = text[:i]
                break
    return text.removeprefix("void ").strip()


ELEMENT_TYPES = {"float16": ("c10::Half", "__half", "half"), "bfloat16": ("c10::BFloat16", "__nv_bfloat16"),
                 "float32": ("float",)}


def for_dtype(name: str, dtype: str) -> bool:
    """False for a template instantiated for another element type than `dtype` (its first argument; a CUTLASS
    GEMM's: its warpgroup MMA's inputs)."""
    atom = _MMA_ATOM.search(name)
    if atom:
        return {"BF16": "bfloat16", "F16": "float16", "TF32": "float32"}[atom.group(1)] == dtype
    if "<" not in name:
        return True
    first = name.split("<", 1)[1].split(",")[0].rstrip(">").strip()
    known = {t for types in ELEMENT_TYPES.values() for t in types}
    return first not in known or first in ELEMENT_TYPES.get(dtype, ())


def launch_bounds(elf_text: str) -> dict[str, int]:
    """cuobjdump -elf output -> mangled name -> the threads per block its __launch_bounds__ names."""
    out, current, in_max = {}, None, False
    for line in elf_text.splitlines():
        section = re.match(r"^\.nv\.info\.([\w$.]+)\s*$", line.strip())
        if section:
            current = section.group(1)
        elif "EIATTR_MAX_THREADS" in line:
            in_max = True
        elif in_max and line.strip().startswith("Value:"):
            dims = [int(v, 16) for v in re.findall(r"0x[0-9a-f]+", line)]
            if current and dims:
                out[current] = dims[0] * (dims[1] if len(dims) > 1 else 1) * (dims[2] if len(dims) > 2 else 1)
            in_max = False
    return out
