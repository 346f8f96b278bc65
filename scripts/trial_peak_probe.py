"""Which phase of one record sets its peak memory: a trial, the timed call, the timing loop, the re-check.

A record's peak_mem_bytes is the most of its phases; this replays them the way harness/jobs/worker.py runs
them for one (problem, shape, dtype, implementation) and prints each phase's peak as a multiple of inputs +
outputs, beside the memory plan's cap (harness/memory.trial_cap). On a GPU the peaks are torch.cuda's; on a
CPU machine they are counted storage by storage (memory.StorageWatch), without the timer. On a GPU each
phase also lists the blocks alive at its peak (1 MB and more) with the line of this repository that made each,
from torch's allocator history.
With --job PROBLEM SOLUTION_FILE DTYPE (a GPU only) it runs the worker's whole job for that solution instead
(integrity probe, the five stages, timing, the re-check: harness/jobs/worker.JobRunner) and lists the blocks
alive at the top of the windows between resets of the peak counter that hold the most (the windows a record's
peak is taken over), for a peak no replayed phase shows.
Usage: python3 scripts/trial_peak_probe.py PROBLEM 4096x4096 float16 [eager|fused|compile|SOLUTION_FILE] ...
(several "PROBLEM SHAPE DTYPE IMPL" groups may follow one another)
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from harness import memory  # noqa: E402
from harness.baselines import COMPILE_MODES, make_baseline  # noqa: E402
from harness.compare import as_tensor_list  # noqa: E402
from harness.correctness import Checker  # noqa: E402
from harness.inputs import build_candidate, make_inputs  # noqa: E402
from harness.loader import load_candidate_class, load_problem  # noqa: E402

OURS = ("/harness/", "/problems/", "/solutions/", "/scripts/")


def where_made(frames: list) -> str:
    """The innermost frame in this repository's code, else the innermost frame."""
    ours = [f for f in frames if any(part in f.get("filename", "") for part in OURS)]
    f = (ours or frames or [{}])[0]
    short = "/".join(f.get("filename", "?").split("/")[-2:])
    return f"{short}:{f.get('line', '?')} {f.get('name', '')}"


def blocks_at_peak(start: int) -> tuple[int, list, int]:
    """Replay the allocator's history: the events from `start` on, the bytes alive at their peak beyond those
    alive at `start`, the blocks alive then ((size, where made), largest first), and the events so far."""
    trace = torch.cuda.memory._snapshot()["device_traces"][torch.cuda.current_device()]
    live: dict = {}
    base = top = now = 0
    at_top: dict = {}
    for k, event in enumerate(trace):
        action, addr, size = event.get("action"), event.get("addr"), event.get("size", 0)
        if action == "alloc":
            live[addr] = (size, where_made(event.get("frames", [])))
            now += size
        elif action == "free_requested" and addr in live:
            now -= live.pop(addr)[0]
        if k + 1 == start:
            base = top = now
            at_top = dict(live)
        elif k >= start and now > top:
            top, at_top = now, dict(live)
    return top - base, sorted(at_top.values(), reverse=True), len(trace)


def maker(problem, impl: str, device: str):
    if impl in ("eager", "fused", "liger") or impl in COMPILE_MODES:
        return lambda s, d: make_baseline(problem, impl, s, d, 0, device)
    cls = load_candidate_class(Path(impl), f"ksuite_peak_probe_{Path(impl).stem}")
    return lambda s, d: build_candidate(problem, cls, s, d, 0, device)


@torch.no_grad()
def probe(name: str, shape_text: str, dtype: str, impl: str) -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    problem = load_problem(ROOT / "problems" / f"{name}.py", f"ksuite_peak_probe_{name}")
    shape = dict(zip(problem.meta.shapes[0].keys(), map(int, shape_text.split("x"))))
    free = None if device == "cuda" else (lambda d: int(139e9))  # a CPU run plans as on an H200
    checker = Checker(problem, maker(problem, impl, device), device, 0, free_fn=free)
    watch = memory.StorageWatch() if device == "cpu" else None
    if watch:  # the harness's own peak calls, counted on the host
        memory.reset_peak, memory.peak = watch.reset_peak, watch.peak_bytes
        watch.__enter__()
    timer = None
    if device == "cuda":
        from harness.timing import CudaTimer
        timer = CudaTimer(max_runs=50, budget_s=0.2)
    held = timer.held_bytes + memory.library_workspace_bytes() if timer else 0  # the worker's, as own_bytes
    setup = checker.setup(shape, dtype)
    phases = []

    events = [0]

    def note(phase: str) -> None:
        blocks = []
        if device == "cuda":
            _, blocks, events[0] = blocks_at_peak(events[0])
        phases.append((phase, (memory.peak(device) or 0) - held, blocks))
        memory.reset_peak(device)

    if device == "cuda":
        torch.cuda.memory._record_memory_history(max_entries=1_000_000, stacks="python")

    memory.reset_peak(device)
    checker.trial(shape, dtype)
    note("trial")
    inputs = make_inputs(problem, shape, dtype, 11, device)
    memory.reset_peak(device)
    outputs = as_tensor_list(setup.candidate(*inputs))
    io = memory.nbytes(inputs) + memory.nbytes(outputs)
    note("timed call")
    if timer:
        timer.measure(lambda: setup.candidate(*inputs))
        note("timing")
    after = checker.recheck_in_place(shape, dtype, inputs, outputs)
    note("re-check")
    if watch:
        watch.__exit__(None, None, None)
    cap = memory.trial_cap(io, 0)
    print(f"{name} {shape_text} {dtype} {Path(impl).stem} on {device}: inputs + outputs {io / 1e6:.1f} MB, "
          f"plan {setup.plan.reference}"
          f"{' x' + str(setup.reference64.slices) if hasattr(setup.reference64, 'slices') else ''}, "
          f"cap {cap / io:.2f}x, re-check {'passed' if after.passed else after.detail}")
    for phase, peak, blocks in phases:
        print(f"  {phase:11s} {peak / io:5.2f}x  {peak / 1e6:9.1f} MB{'  past the cap' if peak > cap else ''}")
        for size, made in [b for b in blocks if b[0] >= 1 << 20][:12]:
            print(f"      {size / 1e6:8.1f} MB  {made}")
    if device == "cuda":
        torch.cuda.memory._record_memory_history(enabled=None)


MARK_BYTES = 512 * 37  # an allocation no job makes: the job probe allocates one at each reset of the peak


def window_tops(trace: list) -> list[tuple[int, int, list]]:
    """The allocator's history cut at the probe's marks (one per reset of the peak counter): for each
    window, its index, the most bytes alive in it, and the blocks alive then ((size, where made), largest
    first). The windows are what the records' peaks are taken over."""
    live: dict = {}
    now, window, tops = 0, -1, []
    for event in trace:
        action, addr, size = event.get("action"), event.get("addr"), event.get("size", 0)
        if action == "alloc":
            made = where_made(event.get("frames", []))
            if size == MARK_BYTES and "trial_peak_probe" in made:
                window += 1
                tops.append([window, now, dict(live)])
                continue
            live[addr] = (size, made)
            now += size
            if window >= 0 and now > tops[window][1]:
                tops[window][1], tops[window][2] = now, dict(live)
        elif action == "free_requested" and addr in live:
            now -= live.pop(addr)[0]
    return [(w, top, sorted(blocks.values(), reverse=True)) for w, top, blocks in tops]


def job_probe(name: str, solution: str, dtype: str) -> None:
    """The worker's job for one solution under the allocator's history: each record's peak, and, for the
    windows between resets of the peak counter with the most bytes alive, the phase that reset it and the
    blocks alive at the window's top (a record's peak is the most of its windows)."""
    import json
    import tempfile
    import traceback

    from harness.jobs.worker import Events, JobRunner
    from harness.spec import SolutionRef

    if not torch.cuda.is_available():
        print("--job needs a GPU: it reads torch's allocator history")
        return
    labels: list[str] = []
    reset = memory.reset_peak

    def marked_reset(device=None) -> None:
        reset(device)
        if device == "cuda":
            calls = [f"{Path(f.filename).stem}.{f.name}" for f in traceback.extract_stack()[:-1]
                     if "/harness/" in f.filename]
            labels.append(" > ".join(calls[-3:]))
            torch.empty(MARK_BYTES, dtype=torch.uint8, device="cuda")

    events_path = Path(tempfile.mkdtemp()) / "events.jsonl"
    job = {"problem_name": name, "problem_path": str(ROOT / "problems" / f"{name}.py"), "impls": [],
           "options": {"done": [], "dtypes": [dtype]}}
    torch.cuda.memory._record_memory_history(max_entries=4_000_000, stacks="python")
    memory.reset_peak = marked_reset
    try:
        runner = JobRunner(job, Events(str(events_path)))
        runner.run_solution(SolutionRef(Path(solution).stem, Path(solution).resolve()))
    finally:
        memory.reset_peak = reset
    trace = torch.cuda.memory._snapshot()["device_traces"][torch.cuda.current_device()]
    torch.cuda.memory._record_memory_history(enabled=None)
    for line in events_path.read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "measurement":
            peak = event.get("peak_mem_bytes") or 0
            print(f"{name} {event['shape']} {dtype} {Path(solution).stem}: record peak {peak / 1e9:.3f} GB, "
                  f"inputs + outputs {(event.get('bytes') or 0) / 1e9:.3f} GB (the worker's fixed buffers, "
                  f"{runner.fixed_bytes / 1e9:.3f} GB, left out)")
        elif event["event"] == "stage" and not event.get("passed", True):
            print(f"  stage {event.get('stage')} failed: {event.get('detail')}")
    windows = window_tops(trace)
    print(f"  {len(windows)} windows between resets of the peak ({len(labels)} resets, {len(trace)} events)")
    for w, top, blocks in sorted(windows, key=lambda x: -x[1])[:3]:
        label = labels[w] if w < len(labels) else "?"
        print(f"  window {w} after {label}: {top / 1e9:.3f} GB allocated at its top "
              f"({(top - runner.fixed_bytes) / 1e9:.3f} GB without the fixed buffers); blocks alive then:")
        for size, made in [b for b in blocks if b[0] >= 1 << 20][:16]:
            print(f"      {size / 1e6:8.1f} MB  {made}")


def main(args: list[str]) -> int:
    if args[:1] == ["--job"] and len(args) == 4:
        job_probe(*args[1:])
        return 0
    if len(args) < 4 or len(args) % 4:
        print(__doc__.strip().splitlines()[-2])
        return 2
    for k in range(0, len(args), 4):
        probe(*args[k:k + 4])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
