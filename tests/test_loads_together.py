"""LOADS_TOGETHER in rmsnorm's, layernorm's, swiglu_act's and rotary's families: every load of a tile out before the
first is used (volatile loads, in an order that keeps ptxas from issuing the weight, the last u or a table row only
once x or g is back). Two things a user relies on: the answer is the same as without it, under the interpreter, at
shapes with a masked tail and several rows a program; and the machine code for sm_90, compiled here without a GPU,
really has one load round at the decode shapes it is for (`ksuite inspect`'s "load rounds"), where without it there
are two or three."""

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
import triton
from conftest import load_family, together

from harness.machine_code.offline_compile import compile_at_shapes
from harness.machine_code.sass import SassError, disassemble, memory_profile

ROOT = Path(__file__).resolve().parent.parent
FAMILIES = {"rmsnorm": ("batch_size", "dim"), "layernorm": ("batch_size", "dim"), "swiglu_act": ("rows", "cols"),
            "rotary": ("batch_size", "num_heads", "seq_len", "head_dim")}


def reference(problem: str, x: torch.Tensor, other: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    x32 = x.float()
    if problem == "rmsnorm":
        return x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + 1e-6) * other.float()
    if problem == "layernorm":
        return F.layer_norm(x32, (x.shape[-1],), other.float(), bias.float(), 1e-5)
    return F.silu(x32) * other.float()


def run(module, problem: str, x, other, bias):
    if problem == "rmsnorm":
        return module.rmsnorm(x, other, 1e-6)
    if problem == "layernorm":
        return module.layernorm(x, other, bias, 1e-5)
    return module.swiglu(x, other)


@pytest.mark.parametrize("problem", ["rmsnorm", "layernorm", "swiglu_act"])  # rotary's: tests/test_rotary_forms.py
@pytest.mark.parametrize("together", [False, True])
def test_the_answer_does_not_depend_on_the_load_order(monkeypatch, problem, together):
    extra = {"BLOCK_M": 4} if problem != "swiglu_act" else {"BLOCK_SIZE": 512, "BLOCK_N": 128}
    family = load_family(monkeypatch, problem, f"ksuite_test_loads_together_{problem}", LOADS_TOGETHER=together,
                         num_warps=2, **extra)
    for number, (rows, cols) in enumerate([(7, 100), (3, 257), (1, 64)]):
        generator = torch.Generator().manual_seed(number)
        x = torch.randn(rows, cols, generator=generator).half()
        other = (torch.randn(rows, cols, generator=generator) if problem == "swiglu_act"
                 else torch.randn(cols, generator=generator)).half()
        bias = torch.randn(cols, generator=generator).half()
        error = (run(family, problem, x, other, bias).float() - reference(problem, x, other, bias)).abs().max().item()
        assert error < 2e-2, (problem, together, rows, cols, error)


# decode shapes where each family's committed table issues some load only once an earlier one is back (swiglu_act's
# 127x3072 takes the flat form since 2026-12-05, one round without the switch: 127x8192 keeps the tiled one)
DECODE = {"rmsnorm": [(7, 1600), (127, 2304)], "layernorm": [(7, 1600), (127, 2304)], "swiglu_act": [(127, 8192)],
          "rotary": [(1, 16, 1, 256)]}


def rounds(path: Path, problem: str) -> list[int]:
    names = FAMILIES[problem]
    shapes = [dict(zip(names, shape)) for shape in DECODE[problem]]
    problem_path = ROOT / "problems" / f"{problem}.py"
    try:
        launches = compile_at_shapes(problem_path, path, shapes, "float16", 90)
        return [memory_profile(disassemble(launch.cubin)).load_rounds for per in launches for launch in per]
    except SassError as exc:  # pragma: no cover - a Triton without its bundled nvdisasm
        pytest.skip(str(exc))


def with_switch(tmp_path: Path, problem: str, on: bool) -> Path:
    """The family with LOADS_TOGETHER set in TUNABLES and in every entry of its table."""
    path = tmp_path / f"{problem}_{on}.py"
    path.write_text((ROOT / "solutions" / problem / "triton_family.py").read_text()
                    + f"\nTUNABLES['LOADS_TOGETHER'] = {on}\n"
                    f"DISPATCH = {{k: {{**v, 'LOADS_TOGETHER': {on}}} for k, v in DISPATCH.items()}}\n")
    return path


@pytest.mark.parametrize("problem", list(FAMILIES))
def test_for_sm_90_the_switch_puts_every_load_in_one_round(tmp_path, problem):
    on, off = together(lambda: rounds(with_switch(tmp_path, problem, True), problem),
                       lambda: rounds(with_switch(tmp_path, problem, False), problem))
    assert on == [1] * len(DECODE[problem])
    # what it is for: without it ptxas issues the weight (the last u) after x (the first g) is back. That is
    # Triton 3.6's code (the one the switch was searched with); Triton 3.2 already puts rotary's loads in one round
    if problem != "rotary" or tuple(int(v) for v in triton.__version__.split(".")[:2]) >= (3, 6):
        assert all(r > 1 for r in off)
