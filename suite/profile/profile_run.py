"""`ksuite profile`: a model's time per op group, mapped to problems and ranked by Amdahl's law.

summarise() works on trace events alone (a fixture in tests, a fresh capture otherwise), so the
attribution, the mapping and the arithmetic are tested without running anything on a GPU.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path

from suite.profile import amdahl
from suite.profile.attribute import Attribution, Group, attribute

RECONCILE_PCT = 5.0  # the profile's total and the measured step time agree within this


def group_row(g: Group, steps: int, total_us: float, results_dir: Path | None, calibration: dict | None) -> dict:
    per_step = g.time_us / steps
    calls = max(1, round(g.calls / steps))
    per_call = per_step / calls
    f = per_step / total_us if total_us else 0.0
    row = {"problem": g.problem, "op": g.op, "module": g.module, "module_class": g.module_class,
           "shape": g.shape, "dtype": g.dtype, "inputs": g.inputs, "calls": calls, "time_us": per_step,
           "per_call_us": per_call, "share": f,
           "kernels": [{"name": n, "time_us": t / steps} for n, t in g.kernels.most_common(3)],
           "measured": None, "sol": None}
    if g.problem and g.shape and g.dtype:
        found = amdahl.measured(results_dir, g.problem, g.shape, g.dtype) if results_dir else []
        if found:
            best = found[0]
            k = per_call / best["median_us"]
            row["measured"] = {**best, "k": k, "gain": amdahl.gain(f, k)}
        sol_us = amdahl.speed_of_light_us(g.problem, g.shape, g.dtype, calibration)
        if sol_us:
            k = max(1.0, per_call / sol_us)
            row["sol"] = {"sol_us": sol_us, "k": k, "gain": amdahl.gain(f, k)}
    row["ceiling"] = row["sol"]["gain"] if row["sol"] else amdahl.gain(f, float("inf"))
    return row


def reconcile(profiled_us: float, step_us: float, device: str) -> dict:
    diff = (profiled_us - step_us) / step_us * 100 if step_us else float("inf")
    ok = abs(diff) <= RECONCILE_PCT
    if ok:
        note = f"profiled time is within {RECONCILE_PCT:.0f} % of the measured step ({diff:+.1f} %)"
    elif device == "cpu":
        note = (f"profiled op time differs from the measured step by {diff:+.1f} %: on a CPU the profile counts "
                "op time with the profiler's own overhead, and not the Python between ops")
    elif diff < 0:
        note = (f"kernels cover {100 + diff:.0f} % of the measured step: the GPU waits between kernels "
                "(launch-bound: a bigger batch, CUDA graphs or torch.compile close the gap)")
    else:
        note = f"kernel time exceeds the measured step by {diff:+.1f} % (kernels overlapping on several streams?)"
    return {"ok": ok, "diff_pct": diff, "note": note}


def summarise(att: Attribution, step_us: list[float], model: dict, results_dir: Path | None = None,
              calibration: dict | None = None) -> dict:
    """The profile as JSON: model, totals and their reconciliation, and the ranked groups."""
    steps = att.steps
    total = att.total_us / steps
    rows = [group_row(g, steps, total, results_dir, calibration) for g in att.groups]
    rows.sort(key=lambda r: (-(r["ceiling"] or 1.0), -r["share"]))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    attributed = total - att.unattributed_us / steps
    measured_step = statistics.median(step_us) if step_us else 0.0
    mapped = sum(r["time_us"] for r in rows if r["problem"])
    return {
        "model": model,
        "device": att.device,
        "steps": steps,
        "step_us": measured_step,
        "step_us_runs": list(step_us),
        "profiled_us": total,
        "attributed_us": attributed,
        "coverage": attributed / total if total else 0.0,
        "mapped_share": mapped / total if total else 0.0,
        "outside_steps_us": att.outside_steps_us / steps,
        "reconcile": reconcile(total, measured_step, att.device),
        "results_dir": str(results_dir) if results_dir else None,
        "calibrated": bool(calibration),
        "groups": rows,
    }


def profile_model(spec: str, batch: int, seq: int, dtype: str, mode: str = "forward", steps: int = 3,
                  warmup: int = 2, timed: int = 5, device: str | None = None,
                  progress: Callable[[str], None] = lambda line: None, trace_out: Path | None = None) -> dict:
    """Load MODEL, capture it, and summarise against this GPU's results/ and calibration."""
    import json

    import torch

    from harness.environment import gpu_name, gpu_slug
    from suite.profile.capture import capture
    from suite.profile.model_spec import load_model
    from suite.results_store import RESULTS_DIR, load_calibration

    progress(f"loading {spec}")
    loaded = load_model(spec, batch, seq, dtype, device)
    cap = capture(loaded, mode, warmup, steps, timed, progress)
    if trace_out:
        Path(trace_out).write_text(json.dumps({"traceEvents": cap.events}))
    att = attribute(cap.events, cap.steps)
    cuda = loaded.device.type == "cuda"
    slug = gpu_slug() if cuda else None
    model = {"name": spec, "slug": loaded.slug, "kind": loaded.kind, "batch": loaded.batch, "seq": loaded.seq,
             "dtype": str(loaded.dtype).removeprefix("torch."), "mode": mode,
             "parameters": sum(p.numel() for p in loaded.module.parameters()),
             "gpu": gpu_name() if cuda else "cpu", "torch": torch.__version__}
    return summarise(att, cap.step_us, model, RESULTS_DIR / slug if slug else None,
                     load_calibration(slug) if slug else None)
