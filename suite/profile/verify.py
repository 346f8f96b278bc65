"""`ksuite verify MODEL --use best|PROBLEM/SOLUTION...`: the model with our kernels swapped in, checked
against the unmodified model and timed beside it and beside torch.compile.

Check: the unmodified model in float64 (same weights, same tokens) is the reference; where float64 does
not fit on the device, float32 is (and the output says so). The unmodified model in its own dtype sets
the bar: with a solution swapped in, the logits' max error, the top-1 disagreement and the loss error
against the reference may be at most CHECK_FACTOR times the unmodified model's, plus a small floor.
Each (problem, solution) is checked alone first; one that breaks the check, or raises, is reported and
left out. Timing: CUDA events around each forward (the wall clock on a CPU), the three models in turn
on the same inputs, round after round, medians compared.
"""

from __future__ import annotations

import copy
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from suite.profile import amdahl, swap
from suite.profile.capture import time_steps
from suite.profile.model_spec import LoadedModel, split_outputs

CHECK_FACTOR = 2.0
FLOORS = {"float64": 1e-9, "float32": 1e-4, "bfloat16": 2e-2, "float16": 5e-3}  # added to each error bar
TOP1_SLACK = 0.005  # top-1 disagreement may exceed the unmodified model's by this share of positions


class VerifyError(Exception):
    """A --use request that cannot be honoured (unknown problem or solution); the message says which."""


@dataclass
class Errors:
    logits_max: float | None
    top1_disagree: float | None
    loss_abs: float | None

    def within(self, bar: Errors, dtype: str) -> tuple[bool, str]:
        floor = FLOORS.get(dtype, 1e-4)
        worse = []
        for name in ("logits_max", "loss_abs"):
            mine, base = getattr(self, name), getattr(bar, name)
            if mine is not None and base is not None and mine > CHECK_FACTOR * base + floor:
                worse.append(f"{name} {mine:.3g} > {CHECK_FACTOR:g} x {base:.3g} + {floor:g}")
        if self.top1_disagree is not None and bar.top1_disagree is not None \
                and self.top1_disagree > bar.top1_disagree + TOP1_SLACK:
            worse.append(f"top-1 disagreement {self.top1_disagree:.2%} > {bar.top1_disagree:.2%} + {TOP1_SLACK:.1%}")
        return not worse, "; ".join(worse)


@dataclass
class Reference:
    dtype: str
    note: str
    outputs: list = field(default_factory=list)  # per input: (logits as float32 or None, argmax, loss float)


def parse_use(use: tuple[str, ...]) -> dict | str:
    """"best", or {problem: solution name or file}: PROBLEM/NAME or PROBLEM=path/file.py."""
    if list(use) == ["best"]:
        return "best"
    chosen = {}
    for item in use:
        sep = "=" if "=" in item else "/"
        problem, _, solution = item.partition(sep)
        if not problem or not solution or problem not in swap.RULE_OF:
            raise VerifyError(f"--use {item}: expected PROBLEM/SOLUTION or PROBLEM=file.py with PROBLEM one of "
                              f"{', '.join(swap.RULE_OF)} (or --use best alone)")
        chosen[problem] = solution
    return chosen


def _profile_groups(profile: dict | None) -> dict:
    out = {}
    for g in (profile or {}).get("groups", []):
        if g.get("problem") and g.get("shape"):
            key = (g["problem"], tuple(sorted(g["shape"].items())), g["dtype"])
            out.setdefault(key, []).append(g)
    return out


def choose(sites: list[swap.Site], use, registry, results_dir: Path | None, profile: dict | None) -> tuple:
    """(plan: [(site, SolutionRef, measured median us or None)], skipped: [(what, why)])."""
    groups = _profile_groups(profile)
    plan, skipped = [], []
    for site in sites:
        key = (site.problem, tuple(sorted(site.shape.items())), site.dtype)
        problem_ref = registry.problem(site.problem)
        if use == "best":
            if site.problem not in (g[0] for g in groups) and profile is not None:
                continue  # not a group of the profile: its own problem's op is not what the model runs
            found = amdahl.measured(results_dir, site.problem, site.shape, site.dtype) if results_dir else []
            if not found:
                skipped.append((f"{site.path} ({site.problem})", "not measured at this shape and dtype"))
                continue
            best = found[0]
            per_call = groups[key][0]["per_call_us"] if key in groups else None
            if per_call is not None and best["median_us"] >= per_call:
                skipped.append((f"{site.path} ({site.problem})", f"our best ({best['solution']}, "
                                f"{best['median_us']:.1f} us) is not faster than the model's op ({per_call:.1f} us)"))
                continue
            plan.append((site, registry.solution(problem_ref, best["solution"]), best["median_us"]))
        elif site.problem in use:
            sol = registry.solution(problem_ref, use[site.problem])
            found = amdahl.measured(results_dir, site.problem, site.shape, site.dtype) if results_dir else []
            median = next((r["median_us"] for r in found if r["solution"] == sol.name), None)
            plan.append((site, sol, median))
    mlp_paths = [s.path for s, _, _ in plan if s.problem == "fused_mlp"]
    plan = [p for p in plan if p[0].problem == "fused_mlp" or not any(p[0].path.startswith(m + ".")
                                                                       for m in mlp_paths)]
    return plan, skipped


def _forward(module, loaded: LoadedModel, seed: int):
    args, kwargs = loaded.make_inputs(seed)
    with torch.no_grad():
        return split_outputs(module(*args, **kwargs))


def reference(loaded: LoadedModel, seeds: list[int]) -> Reference:
    """The unmodified model in float64 (float32 where float64 does not fit), on each input."""
    for dtype in (torch.float64, torch.float32):
        ref_model = None
        try:
            ref_model = copy.deepcopy(loaded.module).to(dtype)
            ref = Reference(str(dtype).removeprefix("torch."), "")
            for seed in seeds:
                logits, loss = _forward(ref_model, loaded, seed)
                ref.outputs.append((None if logits is None else logits.float(),
                                    None if logits is None else logits.argmax(-1),
                                    None if loss is None else float(loss)))
            if dtype != torch.float64:
                ref.note = "reduced check: float64 did not fit on the device, the reference is float32"
            return ref
        except torch.cuda.OutOfMemoryError:
            continue
        finally:
            del ref_model
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
    raise VerifyError(f"{loaded.name}: neither a float64 nor a float32 copy of the model fits on the device")


def errors(module, loaded: LoadedModel, ref: Reference, seeds: list[int]) -> Errors:
    worst = Errors(None, None, None)
    for seed, (r_logits, r_top, r_loss) in zip(seeds, ref.outputs):
        logits, loss = _forward(module, loaded, seed)
        if logits is not None and r_logits is not None:
            err = (logits.float() - r_logits).abs().max().item()
            top = (logits.argmax(-1) != r_top).float().mean().item()
            worst.logits_max = max(worst.logits_max or 0.0, err)
            worst.top1_disagree = max(worst.top1_disagree or 0.0, top)
        if loss is not None and r_loss is not None:
            worst.loss_abs = max(worst.loss_abs or 0.0, abs(float(loss) - r_loss))
    return worst


def apply_plan(model, plan: list) -> list:
    """Swap every planned module in `model`; returns (path, original) pairs to undo it."""
    from harness.loader import load_candidate_class

    undo = []
    for site, sol, _ in plan:
        cls = load_candidate_class(sol.path, f"ksuite_verify_{site.problem}_{sol.name}")
        undo.append((site.path, swap.replace(model, site.path, swap.build(site, cls, model))))
    return undo


def undo_plan(model, undo: list) -> None:
    for path, original in reversed(undo):
        swap.replace(model, path, original)


def check_each(loaded: LoadedModel, plan: list, ref: Reference, bar: Errors, seeds: list[int],
               progress: Callable[[str], None]) -> tuple[list, list[dict]]:
    """Each (problem, solution) alone on the model; returns the plan entries that pass, and one verdict
    per (problem, solution)."""
    by_solution: dict = {}
    for entry in plan:
        by_solution.setdefault((entry[0].problem, entry[1].name), []).append(entry)
    kept, verdicts = [], []
    for (problem, name), entries in by_solution.items():
        progress(f"checking {problem}/{name} at {len(entries)} module(s)")
        undo = []
        try:
            undo = apply_plan(loaded.module, entries)
            errs = errors(loaded.module, loaded, ref, seeds)
            ok, why = errs.within(bar, str(loaded.dtype).removeprefix("torch."))
        except Exception as exc:  # noqa: BLE001 - a solution that raises is reported, never fatal
            errs, ok, why = None, False, f"raised {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        finally:
            undo_plan(loaded.module, undo)
        verdicts.append({"problem": problem, "solution": name, "modules": [e[0].path for e in entries],
                         "ok": ok, "why": why, "errors": errs.__dict__ if errs else None})
        if ok:
            kept += entries
    return kept, verdicts


def time_models(models: dict[str, Callable[[], None]], rounds: int, cuda: bool) -> dict[str, float]:
    """Median microseconds per forward of each model, timed in turn (the order rotates every round)."""
    names = list(models)
    times = {n: [] for n in names}
    for r in range(rounds):
        for n in names[r % len(names):] + names[:r % len(names)]:
            times[n] += time_steps(models[n], 1, cuda)
    return {n: statistics.median(t) for n, t in times.items()}


def predicted(plan: list, profile: dict | None) -> dict | None:
    """Amdahl's prediction for the swapped groups: shares from the profile, k from the measured medians."""
    if not profile:
        return None
    groups = _profile_groups(profile)
    parts, unknown = {}, []
    for site, _sol, median in plan:
        key = (site.problem, tuple(sorted(site.shape.items())), site.dtype)
        for g in groups.get(key, []):
            if median is None:
                unknown.append(site.path)
                continue
            parts[(key, g["module"])] = (g["share"], g["per_call_us"] / median)
    if not parts:
        return {"speedup": None, "parts": 0, "unknown": sorted(set(unknown))}
    return {"speedup": amdahl.combined_gain(list(parts.values())), "parts": len(parts),
            "share": sum(f for f, _ in parts.values()), "unknown": sorted(set(unknown))}
