"""scripts/gpumode_call_log.py: the wrapper submission calls ours unchanged and logs each call a call later."""

import gc
import importlib.util
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import gpumode_call_log  # noqa: E402


class FakeEvent:
    """A CUDA event stand-in: elapsed_time says which pair it was (ms), so the log's GPU column is checkable."""

    count = 0

    def __init__(self, enable_timing=False):
        FakeEvent.count += 1
        self.n = FakeEvent.count

    def record(self):
        pass

    def elapsed_time(self, end):
        return end.n / 1000  # ms -> the log's us: the end event's number


def wrapped(tmp_path, monkeypatch, source: str, name: str):
    """(the wrapper module around a submission with `source`, its log's path), CUDA events faked."""
    inner = tmp_path / "ours.py"
    inner.write_text(source)
    wrapper, log = tmp_path / "submission.py", tmp_path / "calls.tsv"
    gpumode_call_log.write_wrapper(inner, wrapper, log)
    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    spec = importlib.util.spec_from_file_location(name, wrapper)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, log


def test_wrapper_returns_ours_and_logs_each_call_with_its_index(tmp_path, monkeypatch):
    module, log = wrapped(tmp_path, monkeypatch, "def custom_kernel(data):\n    x, out = data\n"
                          "    out.copy_(x.sum().reshape(1))\n    return out\n", "ksuite_test_wrapper")
    sizes = [4, 4, 4, 8, 8]
    for n in sizes:
        x = torch.ones(n)
        assert module.custom_kernel((x, torch.empty(1))).item() == n  # ours, unchanged
    lines = log.read_text().splitlines()
    assert lines[0] == "size\tindex\thost_us\tgpu_us\tgc\tfaults\tpreempted"
    rows = [line.split("\t") for line in lines[1:]]
    assert all(len(r) == 7 and all(int(c) >= 0 for c in r[4:]) for r in rows)
    assert [(r[0], r[1]) for r in rows] == [("4", "0"), ("4", "1"), ("4", "2"), ("8", "0")]  # the last one unwritten
    ends = [float(r[3]) for r in rows]
    assert ends == sorted(ends) and len(set(ends)) == 4  # each call's own event pair
    summary = gpumode_call_log.slowest(log)
    assert summary[0].startswith("4: 3 calls") and "#2" in summary[0] and summary[1].startswith("8: 1 calls")


def test_a_collection_inside_our_call_is_counted_on_that_calls_row(tmp_path, monkeypatch):
    # ours collects on its third call, as a stall inside ours would
    module, log = wrapped(tmp_path, monkeypatch, "import gc\ncalls = []\n\ndef custom_kernel(data):\n"
                          "    calls.append(1)\n    if len(calls) == 3:\n        gc.collect()\n    return data[1]\n",
                          "ksuite_test_wrapper_gc")
    gc.disable()  # only the inner call's own collection, none triggered by the test's allocations
    try:
        for _ in range(5):
            module.custom_kernel((torch.ones(4), torch.empty(1)))
    finally:
        gc.enable()
    rows = [line.split("\t") for line in log.read_text().splitlines()[1:]]
    assert [int(r[4]) >= 1 for r in rows] == [False, False, True, False]
    assert "gc " in gpumode_call_log.slowest(log)[0]
