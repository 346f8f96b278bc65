"""Softmax's loop form and L2: BACKWARD walks the second pass over the row's blocks last to first, so what the first
pass read last is re-read first; PERSISTENT launches k programs a multiprocessor that walk the row blocks, so the rows
in flight fit L2. Either may change where the bytes come from, never the answer: under the interpreter the output is
the same bit for bit, over several blocks a row, a ragged last block, several rows a program with a masked row, rows
on and off 16-byte boundaries, and (persistent) programs that walk more than one row block."""

import pytest
import torch
from conftest import load_family


@pytest.mark.parametrize("contiguous", [True, False])
def test_the_second_pass_order_does_not_change_the_answer(monkeypatch, contiguous):
    generator = torch.Generator().manual_seed(1)
    base = (torch.randn(3, 1001 + (0 if contiguous else 7), generator=generator) * 3).half()
    x = base if contiguous else base[:, :1001]  # a strided view: no aligned bodies (ALIGN 1), scalar loop bounds
    outputs = []
    for backward in (False, True):
        family = load_family(monkeypatch, "softmax", f"ksuite_test_backward_{contiguous}_{backward}",
                             VARIANT="loop", BLOCK_M=2, BLOCK_N=256, num_warps=4, BACKWARD=backward)
        config = family.launch_config(3, 1001)
        assert (config["VARIANT"], config["BACKWARD"]) == ("loop", backward)
        got = family.softmax(x)
        assert (got.float() - torch.softmax(x.float(), dim=-1)).abs().max().item() < 2e-3, backward
        outputs.append(got)
    assert torch.equal(outputs[0], outputs[1])


def test_the_search_may_turn_them_and_seeds_them_on(monkeypatch):
    family = load_family(monkeypatch, "softmax", "ksuite_test_backward_choices")
    assert family.TUNABLE_CHOICES["BACKWARD"] == [False, True]
    assert family.TUNABLE_CHOICES["PERSISTENT"] == [0, 1, 2]
    # a table entry that names neither keeps the forward pass and one program a row block
    assert family.TUNABLES["BACKWARD"] is False and family.TUNABLES["PERSISTENT"] == 0
    assert any(seed.get("BACKWARD") and seed.get("VARIANT") == "loop" for seed in family.TUNABLE_SEEDS)
    assert any(seed.get("PERSISTENT") and seed.get("VARIANT") == "loop" for seed in family.TUNABLE_SEEDS)


@pytest.mark.parametrize("contiguous", [True, False])
def test_persistent_programs_walk_every_row_block(monkeypatch, contiguous):
    generator = torch.Generator().manual_seed(2)
    base = (torch.randn(11, 1001 + (0 if contiguous else 7), generator=generator) * 3).half()
    x = base if contiguous else base[:, :1001]
    outputs = []
    for persistent in (0, 1):
        family = load_family(monkeypatch, "softmax", f"ksuite_test_persistent_{contiguous}_{persistent}",
                             VARIANT="loop", BLOCK_M=2, BLOCK_N=256, num_warps=4, BACKWARD=True,
                             PERSISTENT=persistent)
        assert family.launch_config(11, 1001)["PERSISTENT"] == persistent
        assert family.sm_count(x.device) * persistent < 6  # off a GPU 4 programs for 6 row blocks: some walk two
        got = family.softmax(x)
        assert (got.float() - torch.softmax(x.float(), dim=-1)).abs().max().item() < 2e-3, persistent
        outputs.append(got)
    assert torch.equal(outputs[0], outputs[1])
