"""The whole `ksuite verify`: load, discover, choose, check, time, compare with the prediction."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import torch

from suite.profile import verify as v
from suite.profile.model_spec import load_model
from suite.profile.swap import discover

PREDICTION_PCT = 10.0  # measured within this of predicted: the profile told the truth


def run_verify(spec: str, use: tuple[str, ...], batch: int, seq: int, dtype: str = "bf16",
               profile_path: Path | None = None, inputs: int = 2, rounds: int = 10, with_compile: bool = True,
               device: str | None = None, progress: Callable[[str], None] = lambda line: None) -> dict:
    from harness.environment import gpu_slug
    from suite.registry import Registry
    from suite.results_store import RESULTS_DIR

    choice = v.parse_use(use)
    profile = json.loads(Path(profile_path).read_text()) if profile_path else None
    progress(f"loading {spec}")
    loaded = load_model(spec, batch, seq, dtype, device)
    cuda = loaded.device.type == "cuda"
    results_dir = RESULTS_DIR / gpu_slug() if cuda else None
    sites = discover(loaded.module, lambda: loaded.run(0))
    plan, skipped = v.choose(sites, choice, Registry(), results_dir, profile)
    seeds = list(range(1, inputs + 1))
    progress(f"reference: the unmodified model in float64 on {inputs} inputs")
    ref = v.reference(loaded, seeds)
    bar = v.errors(loaded.module, loaded, ref, seeds)
    kept, verdicts = v.check_each(loaded, plan, ref, bar, seeds, progress)
    report = {"model": spec, "dtype": str(loaded.dtype).removeprefix("torch."), "batch": batch, "seq": seq,
              "device": loaded.device.type, "reference": ref.dtype, "reference_note": ref.note,
              "unmodified_errors": bar.__dict__, "verdicts": verdicts,
              "skipped": [{"what": w, "why": y} for w, y in skipped], "swapped_modules": len(kept)}
    if not kept:
        report.update(ok=True, combined=None, times_us=None, note="nothing swapped in: no solution was chosen "
                      "or every chosen one broke the check")
        return report
    swapped = copy.deepcopy(loaded.module)
    v.apply_plan(swapped, kept)
    progress(f"checking all {len(kept)} swaps together")
    combined = v.errors(swapped, loaded, ref, seeds)
    ok, why = combined.within(bar, report["dtype"])
    report.update(ok=ok, combined={"errors": combined.__dict__, "why": why})
    if not ok:
        report["note"] = "the swaps pass alone but not together: not timed"
        return report
    args, kwargs = loaded.make_inputs(0)
    models = {"eager": loaded.module, "ours": swapped}
    if with_compile:
        progress("torch.compile of the unmodified model (first call compiles)")
        models["compile"] = torch.compile(loaded.module)
    calls = {}
    for name, module in models.items():
        def call(module=module):
            with torch.no_grad():
                module(*args, **kwargs)
        calls[name] = call
        call()  # warm-up (and compilation)
    progress(f"timing {rounds} rounds, interleaved")
    times = v.time_models(calls, rounds, cuda)
    report["times_us"] = times
    report["speedup_vs_eager"] = times["eager"] / times["ours"]
    report["speedup_vs_compile"] = times["compile"] / times["ours"] if "compile" in times else None
    pred = v.predicted(kept, profile)
    report["predicted"] = pred
    if pred and pred.get("speedup"):
        diff = (report["speedup_vs_eager"] - pred["speedup"]) / pred["speedup"] * 100
        report["prediction_diff_pct"] = diff
        report["prediction_ok"] = abs(diff) <= PREDICTION_PCT
    return report


def render(report: dict) -> str:
    lines = [f"verify {report['model']} {report['dtype']} batch {report['batch']} x {report['seq']} on "
             f"{report['device']}; reference: the unmodified model in {report['reference']}"
             + (f" ({report['reference_note']})" if report["reference_note"] else "")]
    e = report["unmodified_errors"]
    lines.append(f"  unmodified {report['dtype']} vs reference: " + _errs(e))
    for verdict in report["verdicts"]:
        status = "ok  " if verdict["ok"] else "LEFT OUT"
        lines.append(f"  {status} {verdict['problem']}/{verdict['solution']} at {len(verdict['modules'])} module(s)"
                     + (f": {_errs(verdict['errors'])}" if verdict["errors"] else "")
                     + (f" ({verdict['why']})" if verdict["why"] else ""))
    skipped: dict = {}
    for s in report["skipped"]:  # one line per reason and problem, not per module
        problem = s["what"].rsplit("(", 1)[-1].rstrip(")")
        skipped.setdefault((problem, s["why"]), []).append(s["what"].split(" (")[0])
    for (problem, why), paths in skipped.items():
        lines.append(f"  not swapped: {problem} at {len(paths)} module(s) ({paths[0]}"
                     + (", ..." if len(paths) > 1 else "") + f"): {why}")
    if report.get("combined"):
        lines.append(f"  all {report['swapped_modules']} swaps together: " + _errs(report["combined"]["errors"])
                     + ("" if report["ok"] else f"  FAIL ({report['combined']['why']})"))
    if report.get("note"):
        lines.append(f"  {report['note']}")
    times = report.get("times_us")
    if times:
        lines.append("  time per forward (median): " + ", ".join(f"{k} {t / 1e3:.3f} ms" for k, t in times.items()))
        line = f"  measured speedup: {report['speedup_vs_eager']:.3f}x vs eager"
        if report.get("speedup_vs_compile") is not None:
            sc = report["speedup_vs_compile"]
            line += f", {sc:.3f}x vs torch.compile" + (" (compile wins)" if sc < 1 else "")
        lines.append(line)
        pred = report.get("predicted")
        if pred and pred.get("speedup"):
            lines.append(f"  predicted by the profile: {pred['speedup']:.3f}x from {pred['parts']} "
                         f"group{'' if pred['parts'] == 1 else 's'} "
                         f"({pred['share'] * 100:.1f} % of the step); measured is "
                         f"{report['prediction_diff_pct']:+.1f} %"
                         + (" (within 10 %)" if report["prediction_ok"] else " (NOT within 10 %)"))
        elif pred is not None:
            lines.append("  predicted: unknown (the swapped solutions are not measured at these shapes)")
        else:
            lines.append("  predicted: pass --profile PROFILE.json for the profile's prediction")
    return "\n".join(lines)


def _errs(e: dict) -> str:
    parts = []
    if e.get("logits_max") is not None:
        parts.append(f"logits max err {e['logits_max']:.3g}, top-1 disagree {e['top1_disagree']:.2%}")
    if e.get("loss_abs") is not None:
        parts.append(f"loss err {e['loss_abs']:.3g}")
    return ", ".join(parts) or "-"
