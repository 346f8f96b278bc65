"""`ksuite optimize --gpus`: the problems' loops spread over the local GPUs, one loop per GPU at a time.

Why per problem: a loop's keep-or-revert is sequential (each candidate is timed side by side against
the best so far, on one GPU), so the parallel unit is a whole loop; candidates of different problems
are timed at once on different GPUs, never two on one GPU. Each loop runs as it does on one GPU
(suite/optimize/command.run_problems) in a worker pinned with CUDA_VISIBLE_DEVICES; its lines come back
prefixed with the GPU. A worker that dies ends that problem's loop only (its ledger keeps every row).
"""

from __future__ import annotations

from suite.distribute.local_gpus import Device, run_queue


def optimize_problem(item: tuple, device: Device, send) -> None:
    """In a worker pinned to `device`: one problem's loop, its lines and its result sent on."""
    from suite.optimize import command
    from suite.registry import Registry

    name, settings = item
    results = command.run_problems((name,), settings, Registry(),
                                   echo=lambda line: send("line", f"[GPU {device.index}] {line}"))
    send("results", results)


def run_spread(problems: tuple, settings, devices: list[Device], echo=print, job=optimize_problem) -> list:
    """Every problem's LoopResults, in the order they finished."""
    results: list = []

    def on_message(item, device: Device, kind: str, data) -> None:
        if kind == "line":
            echo(data)
        elif kind == "results":
            results.extend(data)

    def on_lost(item, cause: str) -> None:
        echo(f"{item[0]}: {cause}; that problem's loop stopped (its ledger keeps every row written)")

    run_queue([(name, settings) for name in problems], devices, job, on_message, None, on_lost)
    return results
