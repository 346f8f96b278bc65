"""ksuite profile on a trace recorded on the H200 (llama3-8b:4-layers, bf16, 4 x 2048, forward): the
fixture is layer 0 of one profiled step plus the embedding, final norm, LM head and loss, cut from the
committed trace by suite/profile/trace_cut.py. Real kernel names (nvjet sm90 gemms, cuDNN's flash
attention, ATen's elementwise and reduce kernels), real links from kernels to the ops that launched them."""

import json
from pathlib import Path

import pytest
from conftest import FIXTURES

from suite.profile.attribute import attribute
from suite.profile.profile_run import summarise
from suite.profile.trace_cut import cut, layer_index, read_trace

ROOT = Path(__file__).resolve().parent.parent
RECORDED = ROOT / "results" / "nvidia-h200" / "profile"
TRACE = RECORDED / "20261201-0958-llama3-8b-4-layers-trace.json.gz"
PROFILE = RECORDED / "20261201-0958-llama3-8b-4-layers-profile.json"  # written from TRACE in the same run
FIXTURE = FIXTURES / "profile" / "llama3_h200_layer0_trace.json"
DEVICE = ("kernel", "gpu_memset", "gpu_memcpy")


@pytest.fixture(scope="module")
def events():
    return json.loads(FIXTURE.read_text())["traceEvents"]


@pytest.fixture(scope="module")
def att(events):
    return attribute(events, steps=1)


def one(att, module):
    (group,) = [g for g in att.groups if g.module == module]
    return group


def test_the_fixture_is_the_cut_of_the_recorded_trace(events):
    assert cut(read_trace(TRACE), step=-1, layers=(0,)) == events
    assert FIXTURE.stat().st_size < 200_000


def test_layer_ranges_are_found_by_their_module_path():
    assert layer_index("ksuite.module::layers.3::DecoderLayer::4x2048x4096:bfloat16") == 3
    assert layer_index("ksuite.module::model.layers.12::Qwen2DecoderLayer::") == 12
    assert layer_index("ksuite.module::h.0::Block::") == 0
    assert layer_index("ksuite.module::layers.3.mlp::GatedMLP::") is None  # inside a layer, not the layer
    assert layer_index("ksuite.module::lm_head::Linear::") is None
    assert layer_index("aten::linear") is None


def test_every_kernel_is_charged_once_to_its_launcher(events, att):
    device_us = sum(e["dur"] for e in events if e["cat"] in DEVICE)
    assert att.device == "cuda" and att.steps == 1
    assert att.total_us == pytest.approx(device_us)
    assert att.unattributed_us == 0 and att.outside_steps_us == 0
    assert sum(g.time_us for g in att.groups) == pytest.approx(device_us)
    counted = sum(sum(g.kernels.values()) for g in att.groups)
    assert counted == pytest.approx(device_us)


@pytest.mark.parametrize("module, problem, shape, kernel", [
    ("layers.*.input_layernorm", "rmsnorm", {"batch_size": 8192, "dim": 4096}, "MeanOps"),
    ("layers.*.post_attention_layernorm", "rmsnorm", {"batch_size": 8192, "dim": 4096}, "rsqrt_kernel"),
    ("norm", "rmsnorm", {"batch_size": 8192, "dim": 4096}, "pow_tensor_scalar"),
    ("layers.*.self_attn.q_proj", "matmul", {"M": 8192, "K": 4096, "N": 4096}, "nvjet_sm90"),
    ("layers.*.self_attn.k_proj", "matmul", {"M": 8192, "K": 4096, "N": 1024}, "nvjet_sm90"),
    ("layers.*.mlp.down_proj", "matmul", {"M": 8192, "K": 14336, "N": 4096}, "nvjet_sm90"),
    ("lm_head", "matmul", {"M": 8192, "K": 4096, "N": 128256}, "nvjet_sm90"),
    ("layers.*.self_attn.rotary", "rotary", {"batch_size": 4, "num_heads": 40, "seq_len": 2048, "head_dim": 128},
     "CatArrayBatchedCopy"),
    ("layers.*.self_attn.attn", "attention_causal",
     {"batch_size": 4, "num_heads": 32, "seq_len": 2048, "head_dim": 128}, "sdpa_sm90_flash_fprop"),
    ("layers.*.mlp.act", "swiglu_act", {"rows": 8192, "cols": 14336}, "silu_kernel"),
    ("loss", "cross_entropy", {"batch_size": 8192, "vocab_size": 128256}, "nll_loss_forward"),
])
def test_units_map_to_problems_with_their_real_kernels(att, module, problem, shape, kernel):
    group = one(att, module)
    assert (group.problem, group.shape, group.dtype, group.calls) == (problem, shape, "bfloat16", 1)
    assert any(kernel in name for name in group.kernels)


def test_a_module_unit_holds_all_its_eager_kernels(att):
    norm = one(att, "layers.*.input_layernorm")
    assert len(norm.kernels) >= 6  # to(float32), pow, mean, add eps, rsqrt, two muls, to(bf16)
    assert any("reduce_kernel" in k for k in norm.kernels) and any("elementwise" in k for k in norm.kernels)
    loss = one(att, "loss")
    assert any("cunn_SoftMaxForward" in k for k in loss.kernels)


def test_ops_without_a_problem_keep_their_name(att):
    unmapped = {(g.module, g.op) for g in att.groups if g.problem is None}
    assert unmapped == {("layers.*.self_attn", "aten::repeat_interleave"), ("layers.*", "aten::add"),
                        ("embed_tokens", "aten::embedding")}
    assert one(att, "layers.*.self_attn").calls == 2  # k and v repeated for the grouped heads


def test_the_committed_profile_is_what_its_trace_gives():
    """The profile's totals and groups, recomputed from the recorded trace of the same run."""
    profile = json.loads(PROFILE.read_text())
    again = summarise(attribute(read_trace(TRACE), profile["steps"]), profile["step_us_runs"], profile["model"])
    for key in ("profiled_us", "attributed_us", "coverage", "mapped_share", "step_us"):
        assert again[key] == pytest.approx(profile[key]), key
    assert again["reconcile"] == profile["reconcile"]

    def rows(p):
        return {(g["module"], g["op"]): (g["problem"], g["shape"], g["dtype"], g["calls"], g["time_us"], g["share"])
                for g in p["groups"]}
    assert rows(again).keys() == rows(profile).keys()
    for key, (problem, shape, dtype, calls, time_us, share) in rows(profile).items():
        got = rows(again)[key]
        assert got[:4] == (problem, shape, dtype, calls), key
        assert got[4:] == pytest.approx((time_us, share)), key


def test_a_tensor_list_input_reads_as_shapes(events):
    from suite.profile.attribute import Node
    from suite.profile.mapping import classify

    cat = next(e for e in events if e["name"] == "aten::cat")
    dims = cat["args"]["Input Dims"][0]  # a list of tensors: [[4, 32, 2048, 64], [4, 32, 2048, 64]]
    _, unit = classify(None, Node(cat["name"], cat["cat"], cat["ts"], cat["dur"], cat["tid"], cat["args"]))
    assert unit.problem is None
    assert unit.inputs == "[" + ",".join("x".join(map(str, d)) for d in dims) + "]:TensorList"


H200_PROFILE = RECORDED / "20261201-1006-llama3-8b-4-layers-profile.json"
H200_VERIFY = RECORDED / "20261201-1000-llama3-8b-4-layers-verify.json"


def test_the_table_accounts_for_every_group(tmp_path):
    from suite.profile.render import plot, table, totals

    profile = json.loads(H200_PROFILE.read_text())
    text = table(profile, 10)
    below = profile["groups"][10:]
    assert below and all(g["problem"] == "matmul" for g in below)
    share = sum(g["share"] for g in below) * 100
    assert f"the other {len(below)} groups: {share:.1f} % of the time (matmul {share:.1f} %)" in text
    unmapped = [g for g in profile["groups"][:10] if g["problem"] is None]
    assert unmapped and all(f"({g['ceiling']:.3f}x)" in text for g in unmapped)  # what ranks them, shown
    assert "in results/nvidia-h200" in totals(profile)  # not the absolute path of the machine that ran it
    assert plot(profile, tmp_path / "chart.png", 10).read_bytes()[:4] == b"\x89PNG"


def test_verify_says_one_group():
    from suite.profile.verify_run import render

    report = json.loads(H200_VERIFY.read_text())
    assert report["predicted"]["parts"] == 1
    assert "from 1 group (" in render(report)
