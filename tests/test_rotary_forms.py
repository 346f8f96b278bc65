"""rotary's family in every form its table may pick, not only the ones the committed table uses: the heads form on a
2-D grid and on a divided 1-D one, the flat form, the pieces form (CHUNKS), two of them with LOADS_TOGETHER, and the
pointwise form (POINTWISE; the flat form where x is not contiguous), two with HINTS off, on contiguous x, on x as a
[B, S, H, D] transpose and on x with a gap between batches, against the rotate-half formula, under the interpreter.
`ksuite check` covers only the forms DISPATCH names; a search may switch to any other."""

import importlib.util
import itertools
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
SHAPES = [(1, 32, 1, 128), (2, 4, 7, 96), (3, 2, 5, 256), (2, 5, 1, 80), (1, 1, 9, 6)]
LAYOUTS = ["contiguous", "bshd", "batch_gap"]
FORMS = {"heads": {"FLAT": False}, "heads_divided": {"FLAT": False}, "flat": {"FLAT": True},
         "chunks": {"CHUNKS": True}, "heads_together": {"FLAT": False, "LOADS_TOGETHER": True},
         "flat_together": {"FLAT": True, "LOADS_TOGETHER": True}, "pointwise": {"POINTWISE": True},
         "pointwise_lane": {"POINTWISE": True},  # at BLOCK_S 1: one element a lane, as torch.compile decodes
         "flat_no_hints": {"FLAT": True, "HINTS": False}, "pointwise_no_hints": {"POINTWISE": True, "HINTS": False}}


@pytest.fixture
def family(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # before the kernel is decorated: no GPU here
    path = ROOT / "solutions/rotary/triton_family.py"
    spec = importlib.util.spec_from_file_location("ksuite_test_rotary_forms", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rotate_half_reference(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x.float() * cos.float() + rotated.float() * sin.float()


def layout(shape, kind, generator):
    B, H, S, D = shape
    if kind == "bshd":
        return torch.randn(B, S, H, D, generator=generator).half().transpose(1, 2)
    if kind == "batch_gap":
        return torch.randn(B, H + 1, S, D, generator=generator).half()[:, :H]
    return torch.randn(B, H, S, D, generator=generator).half()


@pytest.mark.parametrize("form", list(FORMS))
def test_every_form_rotates_every_layout(family, form):
    family.DISPATCH.clear()
    family.TUNABLES.update(FORMS[form], BLOCK_S=1 if form == "pointwise_lane" else 8)
    if form == "heads_divided":
        family.MAX_GRID_Y = 0  # the 1-D grid CUDA's second-axis limit would force
    for number, (shape, kind) in enumerate(itertools.product(SHAPES, LAYOUTS)):
        generator = torch.Generator().manual_seed(number)
        x = layout(shape, kind, generator)
        cos, sin = (torch.randn(shape[2], shape[3], generator=generator).half() for _ in range(2))
        error = (family.rotary(x, cos, sin).float() - rotate_half_reference(x, cos, sin)).abs().max().item()
        assert error < 2e-2, (form, shape, kind, error)


def test_the_pieces_form_fills_every_lane_of_head_dim_96(family):
    """A half-row of 48 columns: six pieces of 8 (the flat form holds it in a 64-wide block)."""
    family.DISPATCH.clear()
    family.TUNABLES.update(CHUNKS=True, BLOCK_S=16)
    config = family.launch_config(1, 32, 8192, 96)
    assert (config["CHUNK"], config["UNITS"], config["BLOCK_HALF"]) == (8, 6, 8)
    assert config["BLOCK_S"] * config["CHUNK"] == 16 * 64  # the columns of 16 rows of the flat form's tile
    assert family.chunk_of(3) == 1 and family.chunk_of(40) == 8 and family.chunk_of(12) == 4


def test_the_pointwise_form_launches_torch_compiles_layout_where_x_is_contiguous(family):
    """One element a lane over the whole output: 1x32x1x128 in BLOCK_S rows of 128 a program, four warps of eight
    elements (16 bytes of fp16) a lane; the transposed layout takes the flat form instead."""
    family.DISPATCH.clear()
    family.TUNABLES.update(POINTWISE=True, BLOCK_S=8)
    config = family.pointwise_config(family.TUNABLES, 1 * 32 * 1 * 128, 128)
    assert config == {"POINTWISE": True, "XBLOCK": 1024, "num_warps": 4, "X_EVICTION": "evict_first"}
    assert family.pointwise_config(family.TUNABLES, 7 * 96, 96)["XBLOCK"] == 1024  # 8 rows of 96, rounded up
    assert family.pointwise_config(family.TUNABLES, 6, 6) == {"POINTWISE": True, "XBLOCK": 8, "num_warps": 1,
                                                              "X_EVICTION": "evict_first"}
    # torch.compile's decoding launch (the first seed): one row of 128 a program on four warps, one element a lane;
    # a 64-element block takes two warps, still one a lane
    family.TUNABLES.update(BLOCK_S=1)
    assert family.pointwise_config(family.TUNABLES, 1 * 32 * 1 * 128, 128) == {"POINTWISE": True, "XBLOCK": 128,
                                                                             "num_warps": 4,
                                                                             "X_EVICTION": "evict_first"}
    assert family.pointwise_config(family.TUNABLES, 1 * 25 * 1 * 64, 64)["num_warps"] == 2
    x = torch.randn(1, 4, 3, 8).half()
    cos = torch.randn(3, 8).half()
    assert family.pointwise_fits(x, cos, cos) and not family.pointwise_fits(x.transpose(1, 2), cos, cos)
    assert family.launch_config(1, 4, 3, 8)["FLAT"]  # what a layout it cannot take runs


@pytest.mark.parametrize("form", [{"FLAT": True}, {"FLAT": False}, {"POINTWISE": True, "BLOCK_S": 8}])
def test_for_sm_90_hints_off_drops_evict_first_from_x_and_out_only(tmp_path, form):
    """HINTS off is a search step (and the first seed): compiled for sm_90 here without a GPU, x's loads and out's
    stores lose their evict_first policy, the same number of global accesses stay, and the tables keep evict_last."""
    from conftest import global_accesses, sm90_ptx, together

    def accesses(hints: bool) -> list[str]:
        shape = {"batch_size": 1, "num_heads": 32, "seq_len": 64, "head_dim": 128}
        return global_accesses(sm90_ptx(tmp_path, "rotary", shape, {**form, "HINTS": hints}))

    on, off = together(lambda: accesses(True), lambda: accesses(False))
    assert len(on) == len(off)
    assert sum("evict_first" in line for line in on) >= 3 and not any("evict_first" in line for line in off)
    assert sum("evict_last" in line for line in on) == sum("evict_last" in line for line in off) >= 2
