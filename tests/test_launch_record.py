"""Which candidates the table search may skip: two calls get the same fingerprint only when they launch the same
Triton kernels (PTX, grid, options, runtime arguments) and the same torch operations. A constexpr the kernel never
reads is the same work; a different block, a different scalar argument or one more torch operation is not. The
kernels are compiled for sm_90 here (no GPU), in a child whose Triton has the interpreter off, where no launch
would be seen."""

import json
import os
import subprocess
import sys
from pathlib import Path

from harness.machine_code.launch_record import Recording, describe, recording

ROOT = Path(__file__).resolve().parent.parent

def run_compiled(tmp_path, name: str, text: str, *args: str) -> dict:
    """A script's last line of JSON, run in a child whose Triton has the interpreter off (kernels compiled for
    sm_90 there); Triton's JIT reads a kernel's source from its file, so the script is one."""
    script = tmp_path / name
    script.write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, str(script), *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


SCRIPT = '''
import json
import torch
import triton
import triton.language as tl
from harness.machine_code.launch_record import recording
from harness.machine_code.offline_compile import compiling_for


@triton.jit
def scale(x_ptr, y_ptr, n, factor, BLOCK: tl.constexpr, UNUSED: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


def call(block=64, unused=0, factor=2.0, extra=False):
    x = torch.ones(1000)
    with recording() as record:
        y = torch.empty_like(x)
        if extra:
            y.zero_()
        scale[(triton.cdiv(1000, block),)](x, y, 1000, factor, BLOCK=block, UNUSED=unused)
    return [record.fingerprint(), len(record.launches), len(record.ops)]


with compiling_for(90):
    out = {"base": call(), "unused": call(unused=1), "block": call(block=128), "factor": call(factor=3.0),
           "extra": call(extra=True)}
print(json.dumps(out))
'''


def test_same_work_has_one_fingerprint_and_any_difference_another(tmp_path):
    out = run_compiled(tmp_path, "record_launches.py", SCRIPT)
    base = out["base"]
    assert base[0] is not None and base[1] == 1 and base[2] >= 1  # one launch, the empty_like
    assert out["unused"][0] == base[0]  # a constexpr the kernel never reads: the same PTX, the same work
    assert out["block"][0] != base[0]  # another tile: other PTX and grid
    assert out["factor"][0] != base[0]  # another runtime argument
    assert out["extra"][0] != base[0] and out["extra"][2] == base[2] + 1  # one more torch operation


FAMILY_SCRIPT = '''
import json
import sys
from pathlib import Path

import torch
from harness.inputs import build_candidate, make_inputs
from harness.loader import load_candidate_class, load_problem
from harness.machine_code.launch_record import recording
from harness.machine_code.offline_compile import compiling_for

root = Path(sys.argv[1])
problem = load_problem(root / "problems" / "rmsnorm.py")
cls = load_candidate_class(root / "solutions" / "rmsnorm" / "triton_family.py", "launch_record_rmsnorm")
family = sys.modules[cls.__module__]
shape = {"batch_size": 7, "dim": 3584}
out = {}
with compiling_for(90):
    for label, step in (("entry", {}), ("BLOCK_N 8192", {"BLOCK_N": 8192}), ("num_warps 4", {"num_warps": 4})):
        family.DISPATCH.clear()
        family.TUNABLES.update({"num_warps": 8, "BLOCK_M": 1, "ONE_PASS": True, "BLOCK_N": 4096, **step})
        model = build_candidate(problem, cls, shape, "float16", 0, "cpu")
        inputs = make_inputs(problem, shape, "float16", 0, "cpu")
        with torch.no_grad():
            model(*inputs)
            with recording() as record:
                model(*inputs)
        out[label] = record.fingerprint()
print(json.dumps(out))
'''


def test_a_step_the_family_ignores_at_a_shape_is_the_same_work(tmp_path):
    """rmsnorm's one-pass form holds a 3584-column row whatever BLOCK_N says: the search need not time that step;
    fewer warps is other work."""
    out = run_compiled(tmp_path, "record_family.py", FAMILY_SCRIPT, str(ROOT))
    assert out["entry"] is not None
    assert out["BLOCK_N 8192"] == out["entry"] != out["num_warps 4"]


def test_no_triton_launch_means_no_fingerprint():
    import torch

    with recording() as record:  # this process runs Triton's interpreter, or no kernel at all
        torch.ones(4).add_(1)
    assert record.fingerprint() is None and record.ops  # the operation was seen, yet nothing is claimed equal
    assert Recording().fingerprint() is None


def test_arguments_are_described_without_addresses():
    import torch

    a, b = torch.zeros(2, 3), torch.zeros(2, 3)
    assert describe(a) == describe(b) != describe(torch.zeros(3, 2)) != describe(a.t())
    assert describe([1, 2.5, None]) == "[1,2.5,None]"


DIRECT_SCRIPT = '''
import json
import torch
import triton
import triton.language as tl
from triton.compiler.compiler import CompiledKernel
from harness.machine_code.launch_record import recording
from harness.machine_code.offline_compile import compiling_for


@triton.jit
def scale(x_ptr, y_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


CompiledKernel.__getitem__ = lambda self, grid: (lambda *args, **kwargs: None)  # no GPU here: launch nothing
x, y = torch.ones(1000), torch.empty(1000)
with compiling_for(90):
    compiled = scale.warmup(x, y, 1000, 2.0, BLOCK=64, grid=(16,))


def call(grid=(16, 1, 1), factor=2.0):
    with recording() as record:
        compiled[grid](x, y, 1000, factor)
    return [record.fingerprint(), len(record.launches)]


print(json.dumps({"base": call(), "again": call(), "grid": call(grid=(8, 1, 1)), "factor": call(factor=3.0)}))
'''


def test_a_precompiled_kernel_launched_directly_is_recorded(tmp_path):
    """`compiled[grid](...)` skips JITFunction.run: without its own record two files that differ only in such a
    launch (its grid, its arguments) would be called the same work."""
    out = run_compiled(tmp_path, "record_direct.py", DIRECT_SCRIPT)
    assert out["base"][0] is not None and out["base"][1] == 1
    assert out["again"] == out["base"]
    assert out["grid"][0] != out["base"][0] and out["factor"][0] != out["base"][0]
