"""Which call of a GPU MODE run was slow, and whose time was it? A wrapper submission that logs every call.

GPU MODE's eval.py reports a size's mean, best and worst, not which call was slow. In its leaderboard mode (H100,
2026-12-05 and -06) our mean at 52,428,800 floats carries one call of 0.85-2.1 ms in a hundred, and
scripts/host_path_probe.py --fresh, which replays that loop in one process, does not reproduce it (its slowest of
300 calls: 102 us). This writes a submission.py that eval.py runs in place of ours: it calls ours and logs, per
call, the size, the call's index at that size, the host's time around our call, and the GPU time between two
events recorded just before and just after ours. A slow call whose GPU time is long is the kernel's; one whose host
time is long is the host's; one where both are short lies outside our call (eval.py's window opens before it).
When the host's time is long, three counters taken around our call say what stalled it: Python's garbage
collections (gc.get_stats), this thread's page faults, and its involuntary context switches (getrusage: the
OS took the core away). On 2026-12-06 (H100) the slow call at 52,428,800 floats had host 1,783 us (then timed from
the wrapper's entry, its write of the previous record included) and GPU 1,727 us: the GPU waited for the launch,
so the stall was the host's. The host's time is now taken around our call alone. With the counters (the same
day) the two slowest timed calls each had a garbage collection inside ours, and no other timed call had one
(solutions/vectorsum_v2/NOTES.md, "What stalls the host").

Each record is written at the start of the next call (its events are complete by then: eval.py synchronizes after
every call), a few microseconds of host time inside the next window, so the log costs each timed call about that.
Usage: python3 scripts/gpumode_call_log.py OURS.py WRAPPER.py LOG.tsv, then
scripts/gpumode_official.sh DIR vectorsum_py WRAPPER.py leaderboard; the log is LOG.tsv (one line a call, the last
call of the run not written).
"""

import sys
from pathlib import Path

TEMPLATE = '''"""A logging wrapper around {inner!r} (scripts/gpumode_call_log.py)."""
import gc
import importlib.util
import os
import resource
import time

import torch

_spec = importlib.util.spec_from_file_location("ksuite_logged_submission", {inner!r})
_inner = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_inner)
_fd = os.open({log!r}, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
_state = {{"size": None, "index": 0, "pending": None}}
_WHO = getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF)


def _counters():
    usage = resource.getrusage(_WHO)
    return sum(g["collections"] for g in gc.get_stats()), usage.ru_minflt + usage.ru_majflt, usage.ru_nivcsw


def custom_kernel(data):
    pending = _state["pending"]
    if pending is not None:  # the previous call's record: eval.py synchronized after it
        size, index, host_ns, start, end, counts = pending
        gpu_us = start.elapsed_time(end) * 1000
        extra = "\\t".join(str(c) for c in counts)
        os.write(_fd, f"{{size}}\\t{{index}}\\t{{host_ns / 1000:.1f}}\\t{{gpu_us:.1f}}\\t{{extra}}\\n".encode())
    size = data[0].numel()
    _state["index"] = _state["index"] + 1 if size == _state["size"] else 0
    _state["size"] = size
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    before = _counters()
    entered = time.perf_counter_ns()
    start.record()
    output = _inner.custom_kernel(data)
    end.record()
    host_ns = time.perf_counter_ns() - entered
    counts = tuple(b - a for a, b in zip(before, _counters()))
    _state["pending"] = (size, _state["index"], host_ns, start, end, counts)
    return output
'''

HEADER = "size\tindex\thost_us\tgpu_us\tgc\tfaults\tpreempted\n"


def write_wrapper(inner: Path, wrapper: Path, log: Path) -> None:
    """The wrapper submission at `wrapper`, calling `inner` and appending to `log` (started with its header)."""
    log.write_text(HEADER)
    wrapper.write_text(TEMPLATE.format(inner=str(inner.resolve()), log=str(log.resolve())))


def slowest(log: Path, per_size: int = 3) -> list[str]:
    """Each size's slowest calls by GPU time and by host time, as lines to print; a log with the counters
    (gc, faults, preempted) shows them beside each call slowest by host time."""
    rows = [line.split("\t") for line in log.read_text().splitlines()[1:] if line.count("\t") in (3, 6)]
    out = []
    for size in dict.fromkeys(row[0] for row in rows):
        mine = [(int(r[1]), float(r[2]), float(r[3]), r[4:]) for r in rows if r[0] == size]
        by_gpu = sorted(mine, key=lambda r: -r[2])[:per_size]
        by_host = sorted(mine, key=lambda r: -r[1])[:per_size]
        gpu = sorted(r[2] for r in mine)
        out.append(f"{size}: {len(mine)} calls, GPU median {gpu[len(gpu) // 2]:.1f} us; slowest by GPU "
                   + ", ".join(f"#{i} {g:.1f} us (host {h:.1f})" for i, h, g, _ in by_gpu)
                   + "; by host " + ", ".join(f"#{i} {h:.1f} us (GPU {g:.1f}{_counts(c)})" for i, h, g, c in by_host))
    return out


def _counts(counts: list[str]) -> str:
    return f"; gc {counts[0]}, faults {counts[1]}, preempted {counts[2]}" if len(counts) == 3 else ""


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--summary":
        print("\n".join(slowest(Path(sys.argv[2]))))
    elif len(sys.argv) == 4:
        write_wrapper(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        sys.exit("usage: gpumode_call_log.py OURS.py WRAPPER.py LOG.tsv | --summary LOG.tsv")
