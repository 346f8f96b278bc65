"""The GPUs of this host, and one worker process per GPU taking jobs from one queue.

Why processes pinned with CUDA_VISIBLE_DEVICES: each worker (and every harness child it starts, which
inherits its environment) sees exactly one GPU as cuda:0, so two timings never share a device and the
harness needs no device argument. Why the driver hands out jobs (not a shared queue the workers read):
it always knows which job a worker holds, so a worker that dies has that job retried once, then the
job's `on_lost` writes failed records with the cause. Processes, not threads: Triton's interpreter and
the harness's worker pool are not thread-safe.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import wait

FAKE_GPUS_ENV = "KSUITE_FAKE_GPUS"  # tests only: pretend this host has N GPUs (the workers run on CPU)
JOIN_S = 5.0


class GpuChoiceError(Exception):
    """--gpus names a GPU this host does not have, or GPUs of different kinds; one line."""


@dataclass(frozen=True)
class Device:
    index: int  # as this process numbers it (cuda:<index>)
    name: str
    visible: str  # what CUDA_VISIBLE_DEVICES must say to show only this GPU

    @property
    def env(self) -> dict:
        return {"CUDA_VISIBLE_DEVICES": self.visible}


def local_devices() -> list[Device]:
    """This host's GPUs, read with nvidia-smi (no CUDA context in the driver), restricted and numbered
    by CUDA_VISIBLE_DEVICES if it is set."""
    fake = os.environ.get(FAKE_GPUS_ENV)
    if fake:
        return [Device(i, "fake-gpu", str(i)) for i in range(int(fake))]
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index,name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    physical = [(i.strip(), n.strip()) for i, n in (line.split(",", 1) for line in out.splitlines() if "," in line)]
    shown = os.environ.get("CUDA_VISIBLE_DEVICES")
    if shown is not None:
        wanted = [v.strip() for v in shown.split(",") if v.strip()]
        physical = [p for w in wanted for p in physical if p[0] == w]
    return [Device(i, name, phys) for i, (phys, name) in enumerate(physical)]


def choose(text: str, devices: list[Device] | None = None) -> list[Device]:
    """--gpus all | 0,1,...: the devices to use, all of one kind (one results/<gpu> folder per run)."""
    devices = local_devices() if devices is None else devices
    if not devices:
        raise GpuChoiceError("--gpus: no CUDA GPU is visible on this machine")
    if text.strip() == "all":
        chosen = devices
    else:
        try:
            wanted = [int(v) for v in text.split(",") if v.strip()]
        except ValueError:
            raise GpuChoiceError(f"--gpus {text}: give 'all' or GPU indices such as 0,1") from None
        by_index = {d.index: d for d in devices}
        missing = [i for i in wanted if i not in by_index]
        if missing or not wanted:
            raise GpuChoiceError(f"--gpus {text}: this machine has GPUs {', '.join(str(d.index) for d in devices)}")
        chosen = [by_index[i] for i in dict.fromkeys(wanted)]
    kinds = sorted({d.name for d in chosen})
    if len(kinds) > 1:
        raise GpuChoiceError(f"--gpus {text}: GPUs of different kinds ({', '.join(kinds)}); a run is timed on one "
                             "kind: run each kind with its own --gpus")
    return chosen


def pin_this_process(device: Device) -> None:
    """One GPU: this process (before CUDA starts) and its children see only it, as cuda:0."""
    os.environ["CUDA_VISIBLE_DEVICES"] = device.visible


def choose_and_pin(text: str) -> list[Device]:
    """choose(text); with one device chosen, this process is pinned to it (the plain one-GPU path)."""
    devices = choose(text)
    if len(devices) == 1:
        pin_this_process(devices[0])
    return devices


def _worker_main(conn, device: Device, job: Callable) -> None:
    pin_this_process(device)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's; it stops us
    while True:
        item = conn.recv()
        if item is None:
            return
        try:
            job(item, device, lambda kind, data: conn.send((kind, data)))
        except Exception as exc:  # noqa: BLE001 - a bug in the job costs its item, not the run
            conn.send(("broken", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))
            continue
        conn.send(("finished", None))


class _Lane:
    def __init__(self, ctx, device: Device, job: Callable):
        self.device = device
        self.conn, child_end = ctx.Pipe()
        self.process = ctx.Process(target=_worker_main, args=(child_end, device, job), daemon=True,
                                   name=f"ksuite-gpu-{device.index}")
        self.process.start()
        child_end.close()
        self.item = None  # the job it holds

    def stop(self) -> None:
        if self.process.is_alive():
            try:
                self.conn.send(None)
            except OSError:
                pass
            self.process.join(JOIN_S)
        if self.process.is_alive():
            self.process.kill()
        self.process.join()


def exit_cause(device: Device, exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            how = f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            how = f"killed by signal {-exitcode}"
    else:
        how = f"exited with code {exitcode}"
    return f"crashed: the worker for GPU {device.index} ({device.name}) {how} while running this job"


def run_queue(items: list, devices: list[Device], job: Callable, on_message: Callable,
              retry: Callable | None = None, on_lost: Callable | None = None) -> None:
    """Run `job(item, device, send)` for every item, at most one at a time per device, in a worker pinned
    to that device. `on_message(item, device, kind, data)` gets what a job sends, in order. A worker that
    dies costs its job: `retry(item)` gives the item to run once more (None: do not), and after that
    `on_lost(item, cause)` is told. A dead worker is replaced for the jobs left."""
    ctx = multiprocessing.get_context("spawn")
    queue = deque(items)
    lanes: list[_Lane] = []
    try:
        while queue or any(lane.item is not None for lane in lanes):
            for device in devices[len(lanes):len(lanes) + len(queue)]:  # start workers as work allows
                lanes.append(_Lane(ctx, device, job))
            for n, lane in enumerate(lanes):
                if lane.item is None and queue:
                    if isinstance(lane, _Idle):  # its worker died: a fresh one for the work left
                        lane = lanes[n] = _Lane(ctx, lane.device, job)
                    lane.item = queue.popleft()
                    lane.conn.send(lane.item)
            busy = [lane for lane in lanes if lane.item is not None]
            ready = wait([lane.conn for lane in busy] + [lane.process.sentinel for lane in busy])
            for lane in busy:
                gone = _drain(lane, on_message, on_lost) if (lane.conn in ready or lane.process.sentinel in ready) \
                    else False
                if gone or not lane.process.is_alive() and not lane.conn.poll():
                    lane.process.join()
                    if lane.item is not None:
                        _lost(lane, queue, retry, on_lost)
                    lanes[lanes.index(lane)] = _Idle(lane.device)
    finally:
        for lane in lanes:
            lane.stop()


def _lost(lane: _Lane, queue: deque, retry: Callable | None, on_lost: Callable | None) -> None:
    """The job of a worker that died: once more at the front of the queue, or told to `on_lost`."""
    again = retry(lane.item) if retry else None
    if again is not None:
        queue.appendleft(again)
    elif on_lost:
        on_lost(lane.item, exit_cause(lane.device, lane.process.exitcode))


def _drain(lane: _Lane, on_message: Callable, on_lost: Callable | None) -> bool:
    """Hand on what the worker sent; True when its end of the pipe is closed (it died)."""
    try:
        while lane.conn.poll():
            kind, data = lane.conn.recv()
            if kind in ("finished", "broken"):
                if kind == "broken" and on_lost:  # the job raised: the same again would too, so no retry
                    on_lost(lane.item, f"worker error: {data.strip().splitlines()[0]}")
                lane.item = None
                return False
            on_message(lane.item, lane.device, kind, data)
    except (EOFError, OSError):
        return True
    return False


class _Idle:
    """A dead worker's place once nothing is left to give it."""

    def __init__(self, device: Device):
        self.device, self.item = device, None

    def stop(self) -> None:
        pass
