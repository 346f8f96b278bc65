"""swiglu_act's flat form at torch.compile's decoding launch (the family's seed): 256 elements a program on four
warps, one or two a lane, where the tiled form still caps its warps at eight elements a lane. Launch and answer,
under the interpreter, at shapes with a masked tail."""

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from harness.loader import import_file

PATH = Path(__file__).resolve().parent.parent / "solutions" / "swiglu_act" / "triton_family.py"


@pytest.fixture
def family(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # before the kernel is decorated: no GPU here
    module = import_file(PATH, "ksuite_test_swiglu_flat_lanes")
    module.DISPATCH.clear()
    return module


def test_the_flat_form_keeps_its_warps_on_small_programs(family):
    family.TUNABLES.update(FLAT=True, BLOCK_SIZE=256, num_warps=4)
    assert family.launch_config(7, 11008) == {"BLOCK_M": 1, "BLOCK_N": 256, "FLAT": True, "EVICTION": "",
                                              "LOADS_TOGETHER": False, "num_warps": 4}
    family.TUNABLES.update(BLOCK_SIZE=64)  # fewer elements than lanes: one warp a 32-element step, never zero
    assert family.launch_config(7, 11008)["num_warps"] == 2
    family.TUNABLES.update(FLAT=False, BLOCK_SIZE=256, BLOCK_N=256)  # the tiled form: eight a lane, one warp
    assert family.launch_config(7, 11008)["num_warps"] == 1


@pytest.mark.parametrize("block", [128, 256])
def test_the_flat_form_at_one_element_a_lane_computes_silu_times_up(family, block):
    family.TUNABLES.update(FLAT=True, BLOCK_SIZE=block, num_warps=4)
    for number, (rows, cols) in enumerate([(7, 100), (3, 257), (1, 64)]):
        generator = torch.Generator().manual_seed(number)
        g, u = (torch.randn(rows, cols, generator=generator).half() for _ in range(2))
        error = (family.swiglu(g, u).float() - F.silu(g.float()) * u.float()).abs().max().item()
        assert error < 2e-2, (block, rows, cols, error)
