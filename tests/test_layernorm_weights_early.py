"""layernorm's WEIGHTS_EARLY: Liger's schedule, weight and bias by plain (weak) loads before the reductions. What a
user relies on: the same answer under the interpreter, and in the sm_90 machine code (compiled here without a GPU)
every load out before the first barrier with no system-scope load, where the committed decode entries issue the
weight and bias after the reductions and LOADS_TOGETHER's volatile loads are system-scope."""

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from conftest import together

from harness.loader import import_file
from harness.machine_code.offline_compile import compile_at_shapes
from harness.machine_code.sass import SassError, disassemble

ROOT = Path(__file__).resolve().parent.parent
FAMILY = ROOT / "solutions" / "layernorm" / "triton_family.py"


def with_entry(tmp_path: Path, name: str, **entry) -> Path:
    """The family with every table entry replaced by one launch (tmp_path/<name>.py)."""
    path = tmp_path / f"{name}.py"
    path.write_text(FAMILY.read_text() + f"\nDISPATCH = {{k: {entry!r} for k in DISPATCH}}\n")
    return path


def sass_at(path: Path, rows: int, cols: int) -> str:
    try:
        [[launch]] = compile_at_shapes(ROOT / "problems" / "layernorm.py", path,
                                       [{"batch_size": rows, "dim": cols}], "bfloat16", 90)
        return disassemble(launch.cubin)
    except SassError as exc:  # pragma: no cover - a Triton without its bundled nvdisasm
        pytest.skip(str(exc))


def loads_before_first_barrier(sass: str) -> tuple[int, int]:
    lines = [line for line in sass.splitlines() if "LDG" in line or "BAR.SYNC" in line]
    first_bar = next(i for i, line in enumerate(lines) if "BAR.SYNC" in line)
    return first_bar, sum("LDG" in line for line in lines)


@pytest.mark.parametrize("rows, cols", [(1, 4096), (7, 1600)])
def test_liger_s_schedule_issues_every_load_before_the_reductions(tmp_path, rows, cols):
    liger = {"VARIANT": "rows", "BLOCK_M": 1, "num_warps": 8, "WEIGHTS_EARLY": True}
    forms = {"early": liger, "late": {**liger, "WEIGHTS_EARLY": False},
             "together": {**liger, "WEIGHTS_EARLY": False, "LOADS_TOGETHER": True}}
    early, late, loads_together = together(
        *(lambda name=name, entry=entry: sass_at(with_entry(tmp_path, name, **entry), rows, cols)
          for name, entry in forms.items()))
    before, total = loads_before_first_barrier(early)
    assert before == total and "STRONG.SYS" not in early
    before, total = loads_before_first_barrier(late)
    assert before < total  # without it: the weight and bias after the reductions
    assert "LDG.E.128.STRONG.SYS" in loads_together


def test_the_answer_is_the_same_with_the_weights_early(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # before the kernel is decorated: no GPU here
    family = import_file(FAMILY, "ksuite_test_layernorm_weights_early")
    family.DISPATCH.clear()
    family.TUNABLES.update(WEIGHTS_EARLY=True, BLOCK_M=4, num_warps=2)
    assert family.launch_config(7, 100)["WEIGHTS_EARLY"]
    for number, (rows, cols) in enumerate([(7, 100), (3, 257), (1, 64)]):
        generator = torch.Generator().manual_seed(number)
        x = torch.randn(rows, cols, generator=generator).half()
        w, b = (torch.randn(cols, generator=generator).half() for _ in range(2))
        expected = F.layer_norm(x.float(), (cols,), w.float(), b.float(), 1e-5)
        error = (family.layernorm(x, w, b, 1e-5).float() - expected).abs().max().item()
        assert error < 2e-2, (rows, cols, error)
