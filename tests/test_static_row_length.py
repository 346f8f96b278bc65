"""STATIC_N and EVEN_M in rmsnorm's and layernorm's families: the row length compiled in (the column loops unrolled,
full blocks unmasked) and no row predicate where the rows divide into programs. What a user relies on: the answer
is the same either way under the interpreter, at ragged last blocks, several rows a program and row counts that do
not divide; and the sm_90 machine code, compiled here without a GPU, is what the switch is for: at a row length that
whole blocks cover and a row count the programs divide, the static two-pass launch has no loop and no predicated
global access (a ragged last block keeps its mask), the runtime-length one loops."""

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from conftest import global_accesses, load_family, sm90_ptx, together

BLOCK_FORMS = {"rmsnorm": [{"ONE_PASS": False}, {"ONE_PASS": True}],
               "layernorm": [{"VARIANT": "two_pass"}, {"VARIANT": "loop"}, {"VARIANT": "rows"}]}


@pytest.mark.parametrize("problem", list(BLOCK_FORMS))
@pytest.mark.parametrize("static", [False, True])
def test_the_answer_does_not_depend_on_a_static_row_length(monkeypatch, problem, static):
    for form in BLOCK_FORMS[problem]:
        family = load_family(monkeypatch, problem, f"ksuite_test_static_row_length_{problem}", STATIC_N=static,
                             BLOCK_N=1024, BLOCK_M=2, num_warps=2, **form)
        for number, (rows, cols) in enumerate([(5, 2500), (4, 2048), (1, 700)]):  # ragged, whole blocks, one short
            generator = torch.Generator().manual_seed(number)
            x = (torch.randn(rows, cols, generator=generator) * 2 + 0.5).half()
            w, b = torch.randn(cols, generator=generator).half(), torch.randn(cols, generator=generator).half()
            x32 = x.float()
            if problem == "rmsnorm":
                got = family.rmsnorm(x, w, 1e-6)
                want = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()
            else:
                got = family.layernorm(x, w, b, 1e-5)
                want = F.layer_norm(x32, (cols,), w.float(), b.float(), 1e-5)
            error = (got.float() - want).abs().max().item()
            assert error < 3e-2, (problem, form, static, rows, cols, error)


def compiled(tmp_path: Path, problem: str, shape: dict, tunables: dict):
    ptx = sm90_ptx(tmp_path, problem, shape, tunables)
    lines = [line.strip() for line in ptx.splitlines() if line.strip()]
    global_access = global_accesses(ptx)
    return {"branches": sum(line.split()[0] == "bra" or line.startswith("@") and " bra " in line for line in lines),
            "predicated": sum(line.startswith("@") for line in global_access), "accesses": len(global_access)}


@pytest.mark.parametrize("problem, shape, form", [
    ("rmsnorm", {"batch_size": 2048, "dim": 12288}, {"ONE_PASS": False, "BLOCK_N": 4096, "num_warps": 16}),
    ("layernorm", {"batch_size": 64, "dim": 6144}, {"VARIANT": "two_pass", "BLOCK_N": 2048, "num_warps": 8}),
])
def test_for_sm_90_the_static_two_pass_launch_is_unrolled_and_unpredicated(tmp_path, problem, shape, form):
    static, runtime = together(lambda: compiled(tmp_path, problem, shape, {**form, "STATIC_N": True}),
                               lambda: compiled(tmp_path, problem, shape, {**form, "STATIC_N": False}))
    assert static["branches"] == 0 and static["predicated"] == 0 and static["accesses"] > runtime["accesses"]
    assert runtime["branches"] > 0  # a loop over the column blocks, each access masked by the runtime length
