"""Softmax's "coop" form: the split form's chunks in one kernel, each program waiting at its row's barrier for the
others' (max, sum) pairs. It is safe only where every program is resident at once, and it cannot run under the
interpreter (programs one after another: the first would wait for ever), so launch_config takes it only with at most
one program a multiprocessor and off the interpreter, and runs the same chunks as "split" elsewhere. On the CPU the
answer is checked through that fallback; the barrier's machine code is checked for sm_90, compiled here."""

import re

from conftest import load_family, sm90_ptx


def coop_family(monkeypatch, name):
    return load_family(monkeypatch, "softmax", name, VARIANT="coop", BLOCK_N=4096, num_warps=8)


def test_coop_only_where_every_program_fits_one_a_multiprocessor_and_off_the_interpreter(monkeypatch):
    family = coop_family(monkeypatch, "ksuite_test_coop_config")
    monkeypatch.setattr(family, "interpreting", lambda: False)
    config = family.launch_config(7, 32000, sms=132)  # 8 chunks of 4032 columns a row: 56 programs
    assert (config["VARIANT"], config["N_CHUNKS"], config["chunk"]) == ("coop", 8, 4032)
    assert family.launch_config(16, 50257, sms=132)["VARIANT"] == "split"  # 13 chunks x 16 rows: 208 programs
    assert family.launch_config(7, 32000, sms=55)["VARIANT"] == "split"
    assert family.launch_config(7, 4096, sms=132)["VARIANT"] == "loop"  # one chunk: no barrier to wait at
    monkeypatch.setattr(family, "interpreting", lambda: True)
    assert family.launch_config(7, 32000, sms=132)["VARIANT"] == "split"


def test_a_coop_table_entry_gives_the_right_answer_on_the_cpu_through_the_split_form(monkeypatch):
    import torch

    family = coop_family(monkeypatch, "ksuite_test_coop_answer")
    family.TUNABLES["BLOCK_N"] = 256
    x = (torch.randn(3, 1001, generator=torch.Generator().manual_seed(3)) * 3).half()
    assert family.launch_config(3, 1001)["VARIANT"] == "split"  # the interpreter is on
    got = family.softmax(x)
    assert (got.float() - torch.softmax(x.float(), dim=-1)).abs().max().item() < 2e-3


def test_for_sm_90_the_barrier_publishes_with_release_and_reads_after_acquire(tmp_path):
    # off a GPU the compile sees 4 multiprocessors: one row of 16384 columns in 4 chunks runs "coop"
    ptx = sm90_ptx(tmp_path, "softmax", {"batch_size": 1, "dim": 16384},
                   {"VARIANT": "coop", "BLOCK_N": 4096, "num_warps": 8})
    assert re.findall(r"\.entry\s+(\w+)", ptx) == ["softmax_coop_kernel"]  # one launch
    body = ptx[ptx.index(".entry"):]
    release = body.index("atom.global.gpu.release.add")  # the arrival, after the pair's two exchanges
    assert body.count("atom.global.gpu.acq_rel.exch", 0, release) == 2
    spin = body.index("ld.global.gpu.acquire", release)  # the wait reads the count with acquire
    assert body.index("ld.volatile.global", spin) > spin  # the row's pairs read past L1, after the wait
