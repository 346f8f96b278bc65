"""The CUDA C++ solutions on a machine without a GPU: they import without building, read clean, declare
tunable TUNABLES, and (with KSUITE_NVCC_CHECK=1 and nvcc on PATH) their kernels compile for sm_90.

The nvcc check takes 30-60 s a file on two cores, so it is opt-in; the lead runs the kernels on the GPU.
"""

import os
import shutil
import subprocess

import pytest
from conftest import PROBLEMS_DIR, SOLUTIONS_DIR

from harness.integrity.static_check import check_file
from harness.loader import import_file
from harness.machine_code.cuda_offline import nvcc_command, solution_flags, solution_source, write_stub
from suite.optimize import tunables

CUDA_SOLUTIONS = sorted(SOLUTIONS_DIR.glob("*/cuda_*.py"))
# the compute-bound ones with tensor-core kernels; the memory-bound ones may share the cuda_ prefix
MMA_SOLUTIONS = [p for p in CUDA_SOLUTIONS if p.parent.name in ("matmul", "fused_mlp", "attention_causal")]


def _import_without_building(path, monkeypatch):
    from torch.utils import cpp_extension

    def refuse(*args, **kwargs):
        raise AssertionError(f"{path.name} built its extension at import time")

    monkeypatch.setattr(cpp_extension, "load_inline", refuse)
    return import_file(path, f"cuda_source_{path.parent.name}_{path.stem}")


@pytest.mark.parametrize("path", MMA_SOLUTIONS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_imports_without_building_and_declares_tunables(path, monkeypatch):
    module = _import_without_building(path, monkeypatch)
    source = path.read_text()
    assert tunables.read(source) == module.TUNABLES
    flat = tunables.flatten(module.TUNABLES)
    space = tunables.space(source)
    assert all(flat[key] in space[key] for key in flat), "current TUNABLES values must be among the choices"
    generated = module.config_source(module.TUNABLES)
    assert all(f"{key.rsplit('.', 1)[-1].upper()} = {value};" in generated for key, value in flat.items())


@pytest.mark.parametrize("path", MMA_SOLUTIONS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_source_check_accepts(path):
    assert check_file(path, PROBLEMS_DIR / f"{path.parent.name}.py") is None


@pytest.mark.skipif(os.environ.get("KSUITE_NVCC_CHECK") != "1" or shutil.which("nvcc") is None,
                    reason="set KSUITE_NVCC_CHECK=1 (and have nvcc) to compile the CUDA sources")
@pytest.mark.parametrize("path", MMA_SOLUTIONS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_cuda_source_compiles_for_sm90(path, tmp_path):
    cu = tmp_path / "kernels.cu"
    cu.write_text(solution_source(path))
    try:
        target, extra = solution_flags(path, 90)  # cuda_cutlass: sm_90a and CUTLASS's headers
    except RuntimeError as exc:
        pytest.skip(str(exc))
    command = nvcc_command(cu, tmp_path / "kernels.o", write_stub(tmp_path / "stub"), target, output="-c",
                           extra=tuple(extra))
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-4000:]
