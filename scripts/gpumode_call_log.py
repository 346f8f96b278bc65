"""Which call of a GPU MODE run was slow, and whose time was it? A wrapper submission that logs every call.

GPU MODE's eval.py reports a size's mean, best and worst, not which call was slow. In its leaderboard mode (H100,
2026-12-05 and -06) our mean at 52,428,800 floats carries one call of 0.85-2.1 ms in a hundred, and
scripts/host_path_probe.py --fresh, which replays that loop in one process, does not reproduce it (its slowest of
300 calls: 102 us). This writes a submission.py that eval.py runs in place of ours: it calls ours and logs, per
call, the size, the call's index at that size, the host's time from entry to return, and the GPU time between two
events recorded just before and just after ours. A slow call whose GPU time is long is the kernel's; one whose host
time is long is the host's; one where both are short lies outside our call (eval.py's window opens before it).

Each record is written at the start of the next call (its events are complete by then: eval.py synchronizes after
every call), a few microseconds of host time inside the next window, so the log costs each timed call about that.
Usage: python3 scripts/gpumode_call_log.py OURS.py WRAPPER.py LOG.tsv, then
scripts/gpumode_official.sh DIR vectorsum_py WRAPPER.py leaderboard; the log is LOG.tsv (one line a call, the last
call of the run not written).
"""

import sys
from pathlib import Path

TEMPLATE = '''"""A logging wrapper around {inner!r} (scripts/gpumode_call_log.py)."""
import importlib.util
import os
import time

import torch

_spec = importlib.util.spec_from_file_location("ksuite_logged_submission", {inner!r})
_inner = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_inner)
_fd = os.open({log!r}, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
_state = {{"size": None, "index": 0, "pending": None}}


def custom_kernel(data):
    entered = time.perf_counter_ns()
    pending = _state["pending"]
    if pending is not None:  # the previous call's record: eval.py synchronized after it
        size, index, host_ns, start, end = pending
        gpu_us = start.elapsed_time(end) * 1000
        os.write(_fd, f"{{size}}\\t{{index}}\\t{{host_ns / 1000:.1f}}\\t{{gpu_us:.1f}}\\n".encode())
    size = data[0].numel()
    _state["index"] = _state["index"] + 1 if size == _state["size"] else 0
    _state["size"] = size
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    output = _inner.custom_kernel(data)
    end.record()
    _state["pending"] = (size, _state["index"], time.perf_counter_ns() - entered, start, end)
    return output
'''

HEADER = "size\tindex\thost_us\tgpu_us\n"


def write_wrapper(inner: Path, wrapper: Path, log: Path) -> None:
    """The wrapper submission at `wrapper`, calling `inner` and appending to `log` (started with its header)."""
    log.write_text(HEADER)
    wrapper.write_text(TEMPLATE.format(inner=str(inner.resolve()), log=str(log.resolve())))


def slowest(log: Path, per_size: int = 3) -> list[str]:
    """Each size's slowest calls by GPU time and by host time, as lines to print."""
    rows = [line.split("\t") for line in log.read_text().splitlines()[1:] if line.count("\t") == 3]
    out = []
    for size in dict.fromkeys(row[0] for row in rows):
        mine = [(int(r[1]), float(r[2]), float(r[3])) for r in rows if r[0] == size]
        by_gpu = sorted(mine, key=lambda r: -r[2])[:per_size]
        by_host = sorted(mine, key=lambda r: -r[1])[:per_size]
        gpu = sorted(r[2] for r in mine)
        out.append(f"{size}: {len(mine)} calls, GPU median {gpu[len(gpu) // 2]:.1f} us; slowest by GPU "
                   + ", ".join(f"#{i} {g:.1f} us (host {h:.1f})" for i, h, g in by_gpu)
                   + "; by host " + ", ".join(f"#{i} {h:.1f} us (GPU {g:.1f})" for i, h, g in by_host))
    return out


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--summary":
        print("\n".join(slowest(Path(sys.argv[2]))))
    elif len(sys.argv) == 4:
        write_wrapper(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        sys.exit("usage: gpumode_call_log.py OURS.py WRAPPER.py LOG.tsv | --summary LOG.tsv")
