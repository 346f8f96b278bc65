"""vectorsum_v2's family under the interpreter: every layout sums odd sizes to the float64 answer, a second
call is bitwise the same (the ticket was reset), and "single" past its cap falls back to a grid."""

import importlib.util

import pytest
import torch
from conftest import SOLUTIONS_DIR


def load():
    path = SOLUTIONS_DIR / "vectorsum_v2" / "triton_family.py"
    spec = importlib.util.spec_from_file_location("ksuite_vectorsum_family", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("layout", ["slices", "stride", "tile", "single"])
@pytest.mark.parametrize("n", [1, 1000, 5121])
def test_every_layout_sums_to_the_float64_answer(monkeypatch, layout, n):
    family = load()
    monkeypatch.setattr(family, "DISPATCH", {})
    monkeypatch.setattr(family, "TUNABLES", {**family.TUNABLES, "LAYOUT": layout, "BLOCK_SIZE": 512,
                                            "NUM_STAGES": 2, "num_warps": 4})
    torch.manual_seed(n)
    x = torch.randn(n) * 3 + 50
    out = torch.empty(1)
    got = family.custom_kernel((x, out))
    assert got.shape == () and got.data_ptr() == out.data_ptr()  # written into GPU MODE's buffer
    assert abs(got.item() - x.double().sum().item()) <= 1e-5 * x.double().abs().sum().item()
    assert torch.equal(family.custom_kernel((x, out)), got)  # deterministic, the counter reset


def test_single_program_only_where_one_multiprocessor_keeps_up(monkeypatch):
    family = load()
    monkeypatch.setattr(family, "DISPATCH", {})
    monkeypatch.setattr(family, "TUNABLES", {**family.TUNABLES, "LAYOUT": "single"})
    small, _ = family.launch_config(family.SINGLE_MAX)
    large, _ = family.launch_config(family.SINGLE_MAX + 1)
    assert small["LAYOUT"] == "single" and family.grid_of(family.SINGLE_MAX, small, 528)[0] == 1
    assert large["LAYOUT"] == "slices"


def test_the_interpreter_keeps_the_jit_launch():
    """Triton's interpreter returns no compiled kernel: no launcher is cached, every call binds anew."""
    family = load()
    family.custom_kernel((torch.randn(300), torch.empty(1)))
    assert family._launchers == {}


def test_tile_takes_more_programs_than_one_wave_and_sums_them_all(monkeypatch):
    """"tile" keeps one tile a program past the old 2048-program cap (52,428,800 floats in 16384-float tiles are
    3,200 programs); the last ticket's holder sums every partial."""
    family = load()
    monkeypatch.setattr(family, "DISPATCH", {})
    monkeypatch.setattr(family, "TUNABLES", {**family.TUNABLES, "LAYOUT": "tile", "BLOCK_SIZE": 16, "num_warps": 1})
    n = 2500 * 16 - 3
    config, _ = family.launch_config(n)
    programs = family.grid_of(n, config, 528)[0]
    assert config["LAYOUT"] == "tile" and programs == 2500 and family.partials_width(programs) == 4096
    torch.manual_seed(0)
    x = torch.randn(n) + 1
    got = family.vector_sum(x)
    assert abs(got.item() - x.double().sum().item()) <= 1e-5 * x.double().abs().sum().item()
    big, _ = family.launch_config(52_428_800)
    assert family.grid_of(52_428_800, {**big, "LAYOUT": "tile", "BLOCK_SIZE": 16384}, 528)[0] == 3200


def test_the_final_sum_is_as_wide_as_the_grid():
    family = load()
    assert [family.partials_width(p) for p in (1, 16, 17, 528, 3200, 8192)] == [16, 16, 32, 1024, 4096, 8192]
    assert family.partials_width(family.MAX_PROGRAMS * 2) == family.MAX_PROGRAMS


def test_a_new_table_for_this_gpu_is_planned_anew(monkeypatch):
    """The plan and launcher caches key on the table this GPU runs: one written into DISPATCH_BY_GPU for it (a
    search's, a probe's) takes effect at the next call, though DISPATCH itself did not change."""
    family = load()
    x, out = torch.randn(5121), torch.empty(1)
    family.custom_kernel((x, out))
    bucket = family.bucket_of({"size": x.numel()})
    monkeypatch.setattr(family, "DISPATCH_BY_GPU", {family.this_gpu(): {bucket: {"LAYOUT": "single"}}})
    got = family.custom_kernel((x, out))
    layouts = {plan[0]["LAYOUT"] for plan in family._plans.values()}
    assert "single" in layouts and len(family._plans) == 2
    assert abs(got.item() - x.double().sum().item()) <= 1e-5 * x.double().abs().sum().item()


PROBE = """
import json, sys
import torch
sys.path.insert(0, sys.argv[1])
from harness.loader import import_file
from harness.machine_code.offline_compile import compiling_for
family = import_file(__import__('pathlib').Path(sys.argv[2]), 'ksuite_test_launch_tail')
compiled = []
family._compiled_launcher = lambda kernel, programs: compiled.append(kernel)  # no GPU: nothing to launch
with compiling_for(90):
    family.vector_sum(torch.randn(100000))
values = dict(partial_ptr='partials', ticket_ptr='ticket', n='n', slice_len='slice', iters='iters', stride_x=1,
              LAYOUT='layout', BLOCK_SIZE='block', NUM_STAGES='stages', PARTIALS='width')
print(json.dumps([list(compiled[0].src.signature), family.launch_tail(compiled[0], values)]))
"""


def test_the_compiled_launcher_gets_the_arguments_this_triton_passes_it():
    """Later calls go through the compiled kernel's launcher, which takes the parameters its compiled signature
    names: every one in Triton 3.6 (the constexprs it then skips), only those not declared constexpr in 3.2. A
    launcher given the other version's list fails on the second call, on a GPU only; here the kernel is compiled
    for sm_90 without one, in a process with the interpreter off, and the list read from it."""
    import json
    import os
    import subprocess
    import sys

    import triton

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, "-c", PROBE, str(SOLUTIONS_DIR.parent),
                           str(SOLUTIONS_DIR / "vectorsum_v2" / "triton_family.py")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    signature, tail = json.loads(done.stdout.splitlines()[-1])
    assert signature[:4] == ["x_ptr", "partial_ptr", "ticket_ptr", "out_ptr"]
    version = tuple(int(v) for v in triton.__version__.split(".")[:2])
    if version >= (3, 6):  # what the H100 and H200 runs launched with
        assert tail == ["partials", "ticket", "n", "slice", "iters", 1, "layout", "block", "stages", "width"]
    elif version <= (3, 2):  # the declared floor (scripts/floor_check.sh)
        assert tail == ["partials", "ticket", "n", "slice", "iters", 1]
    else:
        pytest.skip(f"the launcher's arguments are known for Triton 3.2 and 3.6, not {triton.__version__}")
