"""ksuite profile on a trace in the layout torch.profiler gives on CUDA: kernels charged to the op that
launched them, units mapped to registry problems, Amdahl's arithmetic, and totals that reconcile."""

import json
import math

import pytest
from conftest import FIXTURES

from suite.profile import amdahl
from suite.profile.attribute import attribute
from suite.profile.profile_run import summarise

TRACE = FIXTURES / "profile" / "llama_layer_cuda_trace.json"
MODEL = {"name": "llama3-8b:1-layers", "slug": "llama3-8b-1-layers", "kind": "bundled", "batch": 4, "seq": 2048,
         "dtype": "bfloat16", "mode": "forward", "parameters": 1, "gpu": "NVIDIA H200", "torch": "2.11"}
TOTAL = 110 + 180 + 65 + 40 + 400 + 15 + 115 + 1203 + 160 + 5  # every kernel inside the step


@pytest.fixture(scope="module")
def att():
    return attribute(json.loads(TRACE.read_text())["traceEvents"], steps=1)


def by_module(att, module):
    return [g for g in att.groups if g.module == module]


def test_every_kernel_in_the_step_is_counted_once(att):
    assert att.device == "cuda"
    assert att.total_us == pytest.approx(TOTAL)
    assert sum(g.time_us for g in att.groups) + att.unattributed_us == pytest.approx(TOTAL)
    assert att.unattributed_us == pytest.approx(5)  # the kernel nothing points at
    assert att.outside_steps_us == pytest.approx(50)  # the copy before the step


@pytest.mark.parametrize("module, problem, shape, time_us", [
    ("layers.*.input_layernorm", "rmsnorm", {"batch_size": 8192, "dim": 4096}, 110),  # six eager kernels
    ("layers.*.self_attn.q_proj", "matmul", {"M": 8192, "K": 4096, "N": 4096}, 180),  # sm90 gemm under aten::mm
    ("layers.*.self_attn.rotary", "rotary", {"batch_size": 4, "num_heads": 40, "seq_len": 2048, "head_dim": 128},
     65),  # the neg kernel found through its runtime call's correlation
    ("layers.*.self_attn.attn", "attention_causal",
     {"batch_size": 4, "num_heads": 32, "seq_len": 2048, "head_dim": 128}, 400),  # flash kernel
    ("layers.*.mlp.act", "swiglu_act", {"rows": 8192, "cols": 14336}, 115),
    ("lm_head", "matmul", {"M": 8192, "K": 4096, "N": 128256}, 1203),  # nvjet gemm plus its memset
    ("loss", "cross_entropy", {"batch_size": 8192, "vocab_size": 128256}, 160),
])
def test_units_map_to_registry_problems(att, module, problem, shape, time_us):
    (group,) = by_module(att, module)
    assert (group.problem, group.shape, group.dtype) == (problem, shape, "bfloat16")
    assert group.time_us == pytest.approx(time_us)
    assert group.calls == 1


def test_ops_without_a_problem_keep_their_name(att):
    assert [(g.problem, g.op) for g in by_module(att, "layers.*.self_attn")] == [(None, "aten::repeat_interleave")]
    assert [(g.problem, g.op, dict(g.kernels)) for g in by_module(att, "layers.*")] == \
        [(None, "aten::add", {"triton_poi_fused_add_0": 15.0})]


def test_amdahl_arithmetic():
    assert amdahl.gain(0.5, 2.0) == pytest.approx(1 / 0.75)
    assert amdahl.gain(0.2, float("inf")) == pytest.approx(1.25)
    assert amdahl.gain(0.3, 1.0) == pytest.approx(1.0)
    assert amdahl.gain(0.3, None) is None
    assert amdahl.combined_gain([(0.2, 2.0), (0.3, 3.0)]) == pytest.approx(1 / (0.5 + 0.1 + 0.1))


def record(problem, solution, shape, median, correct=True, kind="solution"):
    return json.dumps({"problem": problem, "solution": solution, "kind": kind, "shape": shape, "dtype": "bfloat16",
                       "correct": correct, "median_us": median, "run_id": "r1"})


def test_k_from_results_and_speed_of_light(att, tmp_path):
    folder = tmp_path / "nvidia-h200"
    folder.mkdir()
    norm = {"batch_size": 8192, "dim": 4096}
    attn = {"batch_size": 4, "num_heads": 32, "seq_len": 2048, "head_dim": 128}
    (folder / "r1.jsonl").write_text("\n".join([
        record("rmsnorm", "triton_family", norm, 55.0),
        record("rmsnorm", "cheat", norm, 1.0, correct=False),  # wrong: never a k
        record("rmsnorm", "eager", norm, 90.0, kind="baseline"),  # a baseline is not ours
        record("extracted/llama3-8b-1-layers/attention_causal__4x32x2048x128_bf16", "cuda_flash_mma", attn, 320.0),
    ]) + "\n")
    calibration = {"copy_bandwidth_Bps": 4e12, "matmul_bf16_flops": 7e14, "matmul_flops": 7.5e14}
    profile = summarise(att, [2350.0, 2340.0, 2360.0], MODEL, folder, calibration)
    rows = {g["module"]: g for g in profile["groups"]}
    norm_row = rows["layers.*.input_layernorm"]
    f = 110 / TOTAL
    assert norm_row["share"] == pytest.approx(f)
    assert norm_row["measured"]["solution"] == "triton_family"
    assert norm_row["measured"]["k"] == pytest.approx(2.0)
    assert norm_row["measured"]["gain"] == pytest.approx(1 / ((1 - f) + f / 2))
    sol_us = (2 * 8192 * 4096 + 4096) * 2 / 4e12 * 1e6
    assert norm_row["sol"]["sol_us"] == pytest.approx(sol_us)
    assert norm_row["sol"]["k"] == pytest.approx(110 / sol_us)
    assert rows["layers.*.self_attn.attn"]["measured"]["k"] == pytest.approx(400 / 320)  # an extracted record
    attn_flops = 4 * 4 * 32 * 2048**2 * 128 // 2
    assert rows["layers.*.self_attn.attn"]["sol"]["sol_us"] == pytest.approx(attn_flops / 7e14 * 1e6)
    assert rows["lm_head"]["measured"] is None  # not measured
    ceilings = [g["ceiling"] for g in profile["groups"]]
    assert ceilings == sorted(ceilings, reverse=True)  # ranked by the Amdahl ceiling
    assert math.isclose(sum(g["share"] for g in profile["groups"]) + 5 / TOTAL, 1.0)


def test_totals_reconcile_or_say_why(att):
    profile = summarise(att, [2350.0], MODEL)
    assert profile["reconcile"]["ok"] and profile["coverage"] == pytest.approx(1 - 5 / TOTAL)
    assert profile["mapped_share"] == pytest.approx((TOTAL - 5 - 40 - 15) / TOTAL)
    slow = summarise(att, [4000.0], MODEL)
    assert not slow["reconcile"]["ok"] and "waits between kernels" in slow["reconcile"]["note"]
