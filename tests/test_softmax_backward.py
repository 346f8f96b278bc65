"""BACKWARD in softmax's loop form: the second pass walks the row's blocks last to first, so what the first pass read
last is re-read first (from L2 while it is still there). The order may change where the bytes come from, never the
answer: under the interpreter the output is the same bit for bit either way, over several blocks a row, a ragged
last block, several rows a program with a masked row, and rows on and off 16-byte boundaries."""

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


def test_the_search_may_turn_it_and_seeds_it_on(monkeypatch):
    family = load_family(monkeypatch, "softmax", "ksuite_test_backward_choices")
    assert family.TUNABLE_CHOICES["BACKWARD"] == [False, True]
    assert family.TUNABLES["BACKWARD"] is False  # a table entry that does not name it keeps the forward pass
    assert any(seed.get("BACKWARD") and seed.get("VARIANT") == "loop" for seed in family.TUNABLE_SEEDS)
