"""`ksuite inspect`: Triton kernels compiled for sm_90 on a machine without a GPU, and read from their
machine code (registers, occupancy, access widths, bytes in flight)."""

import os
import shutil
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl
from click.testing import CliRunner
from conftest import SCALE_ROWS

from harness.machine_code.cuda_offline import for_dtype
from harness.machine_code.kernel_inspect import InspectError, Target, inspect, inspect_cuda
from harness.machine_code.occupancy import occupancy
from harness.machine_code.sass import memory_profile, tensor_core_ops
from suite.cli import cli

HONEST = Path(__file__).parent / "fixtures" / "candidates" / "honest_triton.py"
NO_KERNEL = Path(__file__).parent / "fixtures" / "candidates" / "no_kernel.py"
H200 = Target(capability=90, sm_count=132, bandwidth_Bps=4.25e12)

# Four 16-byte loads issued back to back, then used: 64 bytes in flight per thread, at most
SASS = """
        /*0100*/                   LDG.E.128 R8, desc[UR4][R2.64] ;
        /*0110*/              @P0 LDG.E.128 R12, desc[UR4][R2.64+0x1000] ;
        /*0120*/                   LDG.E.128 R16, desc[UR4][R2.64+0x2000] ;
        /*0130*/              @!P1 LDG.E.128 R20, desc[UR4][R4.64] ;
        /*0140*/                   FADD R24, R9, R13 ;
        /*0150*/                   LDG.E R26, desc[UR4][R6.64] ;
        /*0160*/                   FADD R24, R24, R18 ;
        /*0170*/                   FFMA R24, R23, R26, R24 ;
        /*0180*/                   STG.E.64 desc[UR4][R30.64], R24 ;
        /*0190*/                   STG.E.U16 desc[UR4][R30.64+0x8], R24 ;
"""


def test_bytes_in_flight_count_loads_until_their_first_use():
    profile = memory_profile(SASS)
    assert profile.loads == {16: 4, 4: 1}
    assert profile.stores == {8: 1, 2: 1}
    # R9 and R13 free the first two loads (32 B left), then a 4-byte load joins: 36 < 64
    assert profile.max_bytes_in_flight == 64


def test_a_load_issued_after_a_wait_on_loaded_data_is_a_second_round():
    """The fifth load goes out after the FADD has waited on R9 and R13: two memory latencies in series."""
    assert memory_profile(SASS).load_rounds == 2
    late = "        /*0150*/                   LDG.E R26, desc[UR4][R6.64] ;\n"
    together = SASS.replace(late, "").replace("        /*0140*/", late + "        /*0140*/")  # before the FADD
    assert memory_profile(together).load_rounds == 1
    assert memory_profile("        /*0100*/                   FADD R1, R2, R3 ;\n").load_rounds == 0


@pytest.mark.parametrize("regs, warps, smem, blocks, limiter", [
    (64, 8, 0, 4, "registers"),  # 2048 registers per warp: 32 warps
    (32, 4, 0, 16, "threads"),  # registers would allow 16 too: the tie names threads
    (40, 4, 100 * 1024, 2, "shared memory"),
    (16, 1, 0, 32, "blocks"),
    (255, 4, 0, 2, "registers"),  # 255 rounds up to 8192 per warp: 8 warps
])
def test_occupancy_on_hopper(regs, warps, smem, blocks, limiter):
    occ = occupancy(90, regs, warps, smem)
    assert (occ.blocks, occ.limiter) == (blocks, limiter)


def test_a_triton_candidate_compiles_for_hopper_without_a_gpu():
    reports = inspect(SCALE_ROWS, HONEST, {"batch_size": 64, "dim": 1024}, "float16", H200)
    assert len(reports) == 1
    rep = reports[0]
    assert rep.launch.kernel == "scale_rows_kernel"
    assert rep.launch.grid == (64, 1024 // 16)
    assert ".target sm_90" in rep.launch.ptx
    assert rep.resources.registers > 0 and rep.resources.spill_bytes == 0
    assert sum(rep.memory.loads.values()) >= 2 and sum(rep.memory.stores.values()) >= 1
    assert rep.memory.max_bytes_in_flight > 0
    assert rep.bytes_in_flight_per_sm(H200) == rep.occupancy.blocks * rep.threads * rep.memory.max_bytes_in_flight


def test_the_interpreter_is_back_after_an_offline_compile():
    inspect(SCALE_ROWS, HONEST, {"batch_size": 8, "dim": 32}, "float32", H200)
    assert os.environ.get("TRITON_INTERPRET") == "1"

    @triton.jit
    def add_one(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

    x = torch.zeros(8)
    add_one[(1,)](x, 8, BLOCK=8)
    assert torch.equal(x, torch.ones(8))


def test_a_candidate_without_a_kernel_is_a_clear_error():
    with pytest.raises(InspectError, match="no_kernel.py: launched no Triton kernel"):
        inspect(SCALE_ROWS, NO_KERNEL, {"batch_size": 8, "dim": 32}, "float32", H200)


def test_cli_inspects_a_triton_solution_at_each_shape():
    result = CliRunner().invoke(cli, ["inspect", "rmsnorm", "triton_starter", "--shapes", "small",
                                      "--capability", "90", "--sms", "132"])
    assert result.exit_code == 0, result.output
    assert "compiled for sm_90 with 132 SMs" in result.output
    assert "rmsnorm_kernel" in result.output and "64x256" in result.output


def test_cli_inspects_the_shapes_asked_for_and_names_a_bad_one():
    """--shape, as in check and bench: a decode shape no set holds, and a wrong one as a one-line usage error."""
    result = CliRunner().invoke(cli, ["inspect", "rmsnorm", "triton_starter", "--shape", "7x1600", "--shape",
                                      "batch_size=3,dim=96", "--capability", "90", "--sms", "132"])
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("triton_starter")]
    assert [row.split()[1] for row in rows] == ["7x1600", "3x96"]
    assert "load rounds" in result.output and "Load rounds: the first global load opens one" in result.output
    result = CliRunner().invoke(cli, ["inspect", "rmsnorm", "triton_starter", "--shape", "7x1600x3",
                                      "--capability", "90", "--sms", "132"])
    assert result.exit_code == 2 and "rmsnorm.py: --shape: shape '7x1600x3'" in result.output


def test_cli_without_a_calibrated_gpu_or_flags_says_what_to_pass(tmp_path, monkeypatch):
    monkeypatch.setattr("suite.inspect_cli.RESULTS_DIR", tmp_path)
    result = CliRunner().invoke(cli, ["inspect", "rmsnorm", "triton_starter", "--shapes", "small"])
    assert result.exit_code == 2  # cannot run as asked: a usage error (suite/exit_codes.py)
    assert "pass --capability and --sms" in result.output


# A three-stage cp.async pipeline: three committed groups of two 16-byte copies, then a wait for all but two
ASYNC_SASS = """
        /*0100*/                   LDGSTS.E.BYPASS.128 [R9], desc[UR4][R4.64], P3 ;
        /*0110*/                   LDGSTS.E.BYPASS.128 [R9+0x1000], desc[UR4][R6.64], P3 ;
        /*0120*/                   LDGDEPBAR ;
        /*0130*/                   LDGSTS.E.BYPASS.128 [R9+0x2000], desc[UR4][R4.64], P3 ;
        /*0140*/                   LDGSTS.E.BYPASS.128 [R9+0x3000], desc[UR4][R6.64], P3 ;
        /*0150*/                   LDGDEPBAR ;
        /*0160*/                   LDGSTS.E.BYPASS.128 [R9+0x4000], desc[UR4][R4.64], P3 ;
        /*0170*/                   LDGSTS.E.BYPASS.128 [R9+0x5000], desc[UR4][R6.64], P3 ;
        /*0180*/                   LDGDEPBAR ;
        /*0190*/                   DEPBAR.LE SB0, 0x2 ;
        /*01a0*/                   LDG.E R12, desc[UR4][R2.64] ;
"""


def test_async_copies_stay_in_flight_until_a_wait_retires_their_group():
    profile = memory_profile(ASYNC_SASS)
    assert profile.async_copies == {16: 6} and profile.loads == {4: 1}
    assert profile.max_bytes_in_flight == 96  # three groups; after the wait two (64 B) plus the 4-byte load


TINY_CUDA = Path(__file__).parent / "fixtures" / "cuda" / "tiny_cuda.py"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="compiling CUDA C++ for inspection needs nvcc on PATH")
def test_cuda_kernels_compile_for_hopper_with_their_launch_bounds():
    reports = {r.name: r for r in inspect_cuda(TINY_CUDA, H200)}
    assert set(reports) == {"twice_kernel<float>", "unbounded_kernel"}
    twice = reports["twice_kernel<float>"]
    assert twice.threads == 128 and twice.occupancy.blocks == 16 and twice.occupancy.limiter == "threads"
    assert twice.memory.loads == {16: 1} and twice.memory.stores == {16: 1}
    assert twice.memory.max_bytes_in_flight == 16
    assert twice.bytes_in_flight_per_sm() == 16 * 128 * 16
    unbounded = reports["unbounded_kernel"]
    assert unbounded.threads is None and unbounded.occupancy is None and unbounded.bytes_in_flight_per_sm() is None


def test_a_cuda_file_without_the_load_inline_layout_is_a_clear_error():
    with pytest.raises(InspectError, match="honest_triton.py: no CUDA_SOURCE"):
        inspect_cuda(HONEST, H200)


@pytest.mark.parametrize("name, dtype, kept", [
    ("rmsnorm_vec_kernel<c10::Half, 2>", "float16", True),
    ("rmsnorm_vec_kernel<c10::Half, 2>", "bfloat16", False),
    ("rmsnorm_vec_kernel<float, 2>", "float16", False),
    ("rmsnorm_vec_kernel<float, 2>", "float32", True),
    ("gemm_kernel<Tiles<128, 128>>", "float16", True),  # not an element type: kept
    ("plain_kernel", "bfloat16", True),
])
def test_cuda_templates_for_other_element_types_are_left_out(name, dtype, kept):
    assert for_dtype(name, dtype) is kept


# A CUTLASS SM90 GEMM's mangled name, cut down (the real ones run to 1,200 characters, which c++filt gives back as
# they are): the stages, the schedule, the element type and the warpgroup MMA, with the epilogue's half_t that a
# bfloat16 kernel's name also holds
CUTLASS_BF16 = ("_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalIN4cute5tupleIJiiiiEEENS1_10collective13Col"
                "lectiveMmaINS1_34MainloopSm90TmaGmmaWarpSpecializedILi12ENS5_IJNS4_1CILi1EEESB_SB_EEENS1_35KernelTmaWarp"
                "SpecializedCooperativeEEENS_10bfloat16_tENS4_4SM904GMMA27MMA_64x16x16_F32BF16BF16_SSILNSP_5MajorE1E"
                "NS4_17SM90_U32x4_STSM_NENS_6half_tEEEEvNT_6ParamsE")


def test_a_cutlass_gemm_is_named_by_what_tells_its_builds_apart():
    from harness.machine_code.cuda_offline import demangle

    name = demangle([CUTLASS_BF16])[CUTLASS_BF16]
    assert name == "cutlass GEMM, TmaWarpSpecializedCooperative, 12 stages, MMA_64x16x16_F32BF16BF16_SS"
    assert for_dtype(name, "bfloat16") and not for_dtype(name, "float16")  # the epilogue's half_t is not its type
    fp16 = CUTLASS_BF16.replace("F32BF16BF16", "F32F16F16").replace("Cooperative", "Pingpong")
    assert demangle([fp16])[fp16].endswith("TmaWarpSpecializedPingpong, 12 stages, MMA_64x16x16_F32F16F16_SS")
    assert for_dtype(demangle([fp16])[fp16], "float16") and not for_dtype(fp16, "bfloat16")


def test_tensor_core_instructions_are_told_apart():
    sass = """
        /*0100*/                   HGMMA.64x128x16.F32 R24, gdesc[UR4], R24 ;
        /*0110*/                   HGMMA.64x128x16.F32 R24, gdesc[UR8], R24 ;
        /*0120*/                   HMMA.16816.F32 R4, R8, R12, R4 ;
    """
    assert tensor_core_ops(sass) == {"HGMMA.64x128x16": 2, "HMMA.16816": 1}


def test_a_gpu_without_known_sm_limits_is_a_clear_error():
    with pytest.raises(InspectError, match="no SM limits for compute capability 75"):
        inspect(SCALE_ROWS, HONEST, {"batch_size": 8, "dim": 32}, "float32", Target(75, 40))


def test_a_problem_s_liger_baseline_compiles_and_reads_like_a_solution(tmp_path):
    """`--baseline liger`: the problem's ModelLiger (here the honest Triton candidate standing in for Liger's)."""
    problem = tmp_path / "scale_rows.py"
    problem.write_text(SCALE_ROWS.read_text() + "\n" + HONEST.read_text() + "\nModelLiger = ModelNew\n")
    reports = inspect(problem, None, {"batch_size": 64, "dim": 1024}, "float16", H200, baseline="liger")
    assert [rep.launch.kernel for rep in reports] == ["scale_rows_kernel"]
    assert reports[0].memory.load_rounds == 1 and reports[0].resources.spill_bytes == 0
    with pytest.raises(InspectError, match=r"scale_rows.py \(liger\): .*names no Liger op"):
        inspect(SCALE_ROWS, None, {"batch_size": 8, "dim": 32}, "float16", H200, baseline="liger")


def test_cli_says_in_one_line_why_liger_is_not_read_and_reads_the_rest(monkeypatch):
    monkeypatch.setattr("suite.inspect_cli.liger_installed", lambda: False)
    result = CliRunner().invoke(cli, ["inspect", "rmsnorm", "triton_starter", "--shape", "7x1600", "--baseline",
                                      "liger", "--capability", "90", "--sms", "132"])
    assert result.exit_code == 0, result.output
    assert any(line.startswith("triton_starter") for line in result.output.splitlines())
    assert "not inspected: liger: liger-kernel is not installed (pip install liger-kernel)" in result.output
    result = CliRunner().invoke(cli, ["inspect", "reduce_rows", "triton_starter", "--shape", "7x1600", "--baseline",
                                      "liger", "--capability", "90", "--sms", "132"])
    assert "not inspected: liger: " in result.output and "reduce_rows.py: names no Liger op" in result.output
