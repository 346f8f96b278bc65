"""ksuite verify on the tiny bundled models (CPU, Triton's interpreter): solutions swapped into the
model keep its output; one that breaks the check is reported and left out."""

import pytest
import torch
from conftest import FIXTURES

from suite.profile import swap
from suite.profile.model_spec import load_model
from suite.profile.verify import VerifyError, parse_use
from suite.profile.verify_run import render, run_verify

BROKEN = FIXTURES / "profile" / "broken_rmsnorm.py"


def test_sites_and_shapes_of_the_tiny_llama():
    loaded = load_model("tiny", 2, 8, "fp32", "cpu")
    sites = {(s.path, s.problem): s for s in swap.discover(loaded.module, lambda: loaded.run(0))}
    assert sites[("layers.0.input_layernorm", "rmsnorm")].shape == {"batch_size": 16, "dim": 64}
    assert sites[("layers.1.self_attn.rotary", "rotary")].shape == {"batch_size": 2, "num_heads": 6, "seq_len": 8,
                                                                    "head_dim": 16}
    assert sites[("layers.0.mlp", "fused_mlp")].shape == {"tokens": 16, "hidden": 64, "intermediate": 128}
    assert sites[("lm_head", "matmul")].shape == {"M": 16, "K": 64, "N": 256}
    assert sites[("loss", "cross_entropy")].shape == {"batch_size": 16, "vocab_size": 256}


def test_llama_with_starters_matches_and_a_broken_kernel_is_left_out():
    report = run_verify("tiny", ("rmsnorm=" + str(BROKEN), "rotary/triton_starter", "swiglu_act/triton_starter",
                                 "cross_entropy/triton_starter"), 2, 8, "fp32", inputs=1, rounds=1,
                        with_compile=False, device="cpu")
    verdicts = {v["problem"]: v for v in report["verdicts"]}
    assert report["reference"] == "float64"
    assert not verdicts["rmsnorm"]["ok"] and "logits_max" in verdicts["rmsnorm"]["why"]
    assert all(verdicts[p]["ok"] for p in ("rotary", "swiglu_act", "cross_entropy"))
    assert report["ok"] and report["swapped_modules"] == 2 + 2 + 1
    assert report["combined"]["errors"]["top1_disagree"] == 0.0
    assert report["combined"]["errors"]["logits_max"] < 1e-5
    text = render(report)
    assert "LEFT OUT rmsnorm/broken_rmsnorm" in text and "measured speedup" in text


def test_gpt2_with_the_layernorm_starter_matches():
    report = run_verify("gpt2-tiny:1-layers", ("layernorm/triton_starter",), 1, 8, "fp32", inputs=1, rounds=1,
                        with_compile=False, device="cpu")
    assert report["ok"] and [v["ok"] for v in report["verdicts"]] == [True]
    assert report["swapped_modules"] == 3  # ln_1, ln_2, ln_f


def test_swapped_module_keeps_the_weights():
    loaded = load_model("tiny:1-layers", 1, 4, "fp32", "cpu")
    from harness.loader import load_candidate_class
    from suite.registry import SOLUTIONS_DIR

    cls = load_candidate_class(SOLUTIONS_DIR / "rmsnorm" / "triton_starter.py", "ksuite_test_swap_rms")
    site = swap.Site("norm", "rmsnorm", {"batch_size": 4, "dim": 64}, "float32")
    with torch.no_grad():
        loaded.module.norm.weight.uniform_(0.5, 1.5)
    wrapper = swap.build(site, cls, loaded.module)
    x = torch.randn(1, 4, 64)
    torch.testing.assert_close(wrapper(x), loaded.module.norm(x), atol=1e-5, rtol=1e-5)


def test_bad_use_is_a_clear_error():
    with pytest.raises(VerifyError, match="PROBLEM/SOLUTION"):
        parse_use(("nonsense",))
    assert parse_use(("best",)) == "best"
    assert parse_use(("rmsnorm/triton_family",)) == {"rmsnorm": "triton_family"}
