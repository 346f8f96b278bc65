"""HINTS in the norms' row forms and in softmax's forms: x and y with or without evict_first. The answer does not
depend on it under the interpreter (several rows a program, a ragged row count), and for sm_90, compiled here without
a GPU, HINTS off keeps every global access and the weights' evict_last and drops evict_first: the switch a table
search turns (the H100 kept it off in five of rmsnorm's buckets and seven of rotary's, 2026-12-06)."""

import pytest
import torch
import torch.nn.functional as F
from conftest import global_accesses, load_family, sm90_ptx, together

ROW_FORMS = {"rmsnorm": {"ONE_PASS": True}, "layernorm": {"VARIANT": "rows"}}


@pytest.mark.parametrize("problem", list(ROW_FORMS))
def test_the_answer_does_not_depend_on_the_hints(monkeypatch, problem):
    outputs = []
    for hints in (True, False):
        family = load_family(monkeypatch, problem, f"ksuite_test_hints_{problem}_{hints}", HINTS=hints, BLOCK_M=2,
                             num_warps=2, **ROW_FORMS[problem])
        generator = torch.Generator().manual_seed(0)
        x = (torch.randn(5, 700, generator=generator) * 2 + 0.5).half()
        w, b = torch.randn(700, generator=generator).half(), torch.randn(700, generator=generator).half()
        if problem == "rmsnorm":
            got = family.rmsnorm(x, w, 1e-6)
            want = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()
        else:
            got = family.layernorm(x, w, b, 1e-5)
            want = F.layer_norm(x.float(), (700,), w.float(), b.float(), 1e-5)
        assert (got.float() - want).abs().max().item() < 3e-2, (problem, hints)
        outputs.append(got)
    assert torch.equal(outputs[0], outputs[1])


@pytest.mark.parametrize("problem", list(ROW_FORMS))
def test_for_sm_90_hints_off_drops_evict_first_only(tmp_path, problem):
    shape = {"batch_size": 64, "dim": 4096}
    def accesses(hints: bool) -> list[str]:
        return global_accesses(sm90_ptx(tmp_path, problem, shape, {**ROW_FORMS[problem], "HINTS": hints}))

    on, off = together(lambda: accesses(True), lambda: accesses(False))
    assert len(on) == len(off)
    assert sum("evict_first" in line for line in on) >= 2 and not any("evict_first" in line for line in off)
    assert sum("evict_last" in line for line in on) == sum("evict_last" in line for line in off) >= 1


SOFTMAX_FORMS = {"rows": {"VARIANT": "rows", "BLOCK_M": 2}, "loop": {"VARIANT": "loop", "BLOCK_N": 256},
                 "split": {"VARIANT": "split", "BLOCK_N": 256}}


@pytest.mark.parametrize("form", list(SOFTMAX_FORMS))
def test_softmax_answer_does_not_depend_on_the_hints(monkeypatch, form):
    generator = torch.Generator().manual_seed(0)
    x = (torch.randn(3, 1001, generator=generator) * 3).half()  # an odd row length: aligned bodies, head and tail
    outputs = []
    for hints in (True, False):
        family = load_family(monkeypatch, "softmax", f"ksuite_test_hints_softmax_{form}_{hints}", HINTS=hints,
                             num_warps=4, **SOFTMAX_FORMS[form])
        assert family.launch_config(3, 1001)["VARIANT"] == form
        got = family.softmax(x)
        assert (got.float() - torch.softmax(x.float(), dim=-1)).abs().max().item() < 2e-3, (form, hints)
        outputs.append(got)
    assert torch.equal(outputs[0], outputs[1])


@pytest.mark.parametrize("form", ["rows", "loop"])
def test_for_sm_90_softmax_hints_off_drops_evict_first_only(tmp_path, form):
    shape = {"batch_size": 64, "dim": 4096}
    def accesses(hints: bool) -> list[str]:
        return global_accesses(sm90_ptx(tmp_path, "softmax", shape, {**SOFTMAX_FORMS[form], "HINTS": hints}))

    on, off = together(lambda: accesses(True), lambda: accesses(False))
    assert len(on) == len(off)
    assert sum("evict_first" in line for line in on) >= 2 and not any("evict_first" in line for line in off)
