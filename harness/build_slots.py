"""A limit on CUDA extension builds running at once on this machine, sized by its free memory.

`bench` builds every CUDA C++ solution in parallel children, and a CUTLASS solution builds its variants in
parallel threads (attention: six), so a cold suite starts a dozen or more nvcc processes together. One nvcc
of a CUTLASS attention variant peaked at 5.0 GB resident (2026-12-04), with the host compiler of its torch
binding beside it: a workstation of 32 GB would run out of memory, where the builds' time matters far less
than the suite's life. So each build (one load_inline or load call) first takes one of SLOTS lock files
under the cache root; the lock is an flock, which the kernel drops when its holder exits, so a killed build
never leaves a slot taken. Every process of every run on the machine shares the slots.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.cache_dirs import cache_root

SLOTS_ENV = "KSUITE_BUILD_SLOTS"  # builds at once; unset: slot_count() of this machine
PEAK_BYTES = 6 << 30  # one build: nvcc of a CUTLASS variant (5.0 GB measured) and its binding's host compiler
FOLDER = "build-slots"


def available_memory(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """Bytes the kernel says a new process can have without swapping (MemAvailable), or None off Linux."""
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def slot_count(cpus: int | None = None, memory: int | None = None) -> int:
    """Builds at once: one per core, and no more than free memory holds at PEAK_BYTES each (at least one)."""
    cpus = cpus or os.cpu_count() or 1
    return max(1, min(cpus, memory // PEAK_BYTES) if memory is not None else cpus)


def configured_count(env: dict | None = None) -> int:
    """SLOTS_ENV when it holds a positive number, else this machine's slot_count()."""
    value = (os.environ if env is None else env).get(SLOTS_ENV, "")
    return int(value) if value.isdigit() and int(value) > 0 else slot_count(memory=available_memory())


@contextmanager
def build_slot(count: int, folder: Path | None = None, poll_s: float = 0.5,
               sleep: Callable[[float], None] = time.sleep) -> Iterator[int | None]:
    """Hold one of `count` slots while the body runs (waiting, polling every poll_s, while all are held);
    yields the slot's number, or None where file locks are not available (no limit there)."""
    try:
        import fcntl
    except ImportError:  # not a POSIX system: build without a limit
        yield None
        return
    folder = Path(folder) if folder else cache_root() / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    while True:
        for number in range(count):
            handle = open(folder / f"slot{number}.lock", "a")  # noqa: SIM115 - held across the yield
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.close()
                continue
            try:
                yield number
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
                handle.close()
            return
        sleep(poll_s)
