"""The five correctness stages: smoke, shape sweep, numerical stability, determinism, edge cases."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import torch

from harness import integrity
from harness.compare import Comparison, as_tensor_list, compare
from harness.inputs import build_models, make_inputs, poison_like, to_float64
from harness.loader import LoadedProblem
from harness.records import StageResult

STAGES = ("smoke", "sweep", "stability", "determinism", "edge")


class FatalDeviceError(Exception):
    """The device is unusable after this (illegal address, launch failure): stop the child process."""


def is_fatal(exc: BaseException) -> bool:
    text = str(exc).lower()
    return any(s in text for s in ("illegal memory access", "illegal address", "unspecified launch failure",
                                   "misaligned address", "device-side assert", "an illegal instruction"))


@dataclass
class Setup:
    """Models for one (shape, dtype): the candidate, the reference in dtype and in float64."""

    candidate: torch.nn.Module
    reference: torch.nn.Module
    reference64: torch.nn.Module
    out_dtypes: list


class Checker:
    """Runs trials of one implementation against the float64 reference, with integrity checks."""

    def __init__(self, problem: LoadedProblem, make_candidate: Callable, device: str, seed: int):
        self.problem, self.make_candidate, self.device, self.seed = problem, make_candidate, device, seed
        self._setups: dict = {}
        self.trial_seed = seed * 1000

    def setup(self, shape: dict, dtype: str) -> Setup:
        key = (tuple(sorted(shape.items())), dtype)
        if key not in self._setups:
            self._setups.clear()  # keep one model set alive: large shapes are large
            ref, ref64, _ = build_models(self.problem, None, shape, dtype, self.seed, self.device)
            cand = self.make_candidate(shape, dtype)
            probe = make_inputs(self.problem, shape, dtype, self.seed, self.device)
            with torch.no_grad():
                out_dtypes = [t.dtype for t in as_tensor_list(ref(*probe))]
            self._setups[key] = Setup(cand, ref, ref64, out_dtypes)
        return self._setups[key]

    def fresh_seed(self) -> int:
        self.trial_seed += 1
        return self.trial_seed

    def call(self, setup: Setup, inputs: list) -> tuple[list | None, str | None]:
        """Candidate first (before the reference ever runs on these inputs), integrity checks after."""
        before = integrity.snapshot(inputs)
        self._poison_allocator(setup, inputs)
        try:
            with torch.no_grad():
                out = setup.candidate(*inputs)
            if self.device != "cpu":
                torch.cuda.synchronize()
        except Exception as exc:  # noqa: BLE001 - a raising candidate is a recorded failure
            if is_fatal(exc):
                raise FatalDeviceError(f"{type(exc).__name__}: {exc}") from None
            return None, f"raised {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        try:
            outs = as_tensor_list(out)
        except TypeError as exc:
            return None, str(exc)
        for problem in (integrity.subclass_problem(outs), integrity.device_problem(outs, self.device),
                        integrity.aliasing_problem(outs, inputs),
                        None if self.problem.meta.inplace else integrity.mutation_problem(inputs, before)):
            if problem:
                return None, problem
        return outs, None

    def _poison_allocator(self, setup: Setup, inputs: list) -> None:
        """Leave NaN in the memory the candidate's torch.empty will most likely get back."""
        if self.device == "cpu":
            return
        like = [x for x in inputs if isinstance(x, torch.Tensor) and x.is_floating_point()]
        if like:
            junk = torch.empty_like(like[0])
            poison_like(junk)
            del junk

    def trial(self, shape: dict, dtype: str, transform: str | None = None, strided: bool = False,
              seed: int | None = None) -> StageResult:
        setup = self.setup(shape, dtype)
        inputs = make_inputs(self.problem, shape, dtype, seed if seed is not None else self.fresh_seed(),
                             self.device, transform=transform, strided=strided)
        return self._judge(setup, inputs, shape, dtype)

    def _judge(self, setup: Setup, inputs: list, shape: dict, dtype: str) -> StageResult:
        outs, problem = self.call(setup, inputs)
        if problem:
            return StageResult("", False, problem, shape, dtype)
        with torch.no_grad():
            ref = setup.reference64(*to_float64(inputs))
        atol, rtol = self.problem.meta.tolerance(dtype)
        result: Comparison = compare(outs, ref, setup.out_dtypes, atol, rtol)
        return StageResult("", result.passed, result.detail, shape, dtype, result.max_abs_err, result.rel_l2_err)

    def recheck_in_place(self, shape: dict, dtype: str, inputs: list, stale_outputs: list) -> StageResult:
        """One more trial on the SAME input tensors (same objects, same addresses) refilled with new values,
        after poisoning what earlier calls returned: a cache keyed on an input's data_ptr or identity (the
        timing loop reuses its inputs) returns a stale or poisoned answer here. The refill goes through
        `.data`, so the tensors' version counters do not see it either."""
        with torch.no_grad():
            for out in stale_outputs:
                try:
                    poison_like(out)
                except RuntimeError:  # an expanded or otherwise unwritable view
                    pass
            fresh = make_inputs(self.problem, shape, dtype, self.fresh_seed(), self.device)
            for old, new in zip(inputs, fresh):
                if isinstance(old, torch.Tensor):
                    old.data.copy_(new)
        return self._judge(self.setup(shape, dtype), inputs, shape, dtype)


def _fold(stage: str, trials) -> StageResult | None:
    """Consume a stage's trials lazily, stopping at the first failure; else report the largest errors."""
    seen = []
    for r in trials:
        if not r.passed:
            return StageResult(stage, False, r.detail, r.shape, r.dtype, r.max_abs_err, r.rel_l2_err)
        seen.append(r)
    if not seen:
        return None
    max_abs = max((r.max_abs_err or 0.0 for r in seen), default=None)
    rel = max((r.rel_l2_err or 0.0 for r in seen), default=None)
    detail = seen[0].detail if stage == "determinism" else f"{len(seen)} trials"
    return StageResult(stage, True, detail, None, None, max_abs, rel, skipped=all(r.skipped for r in seen))


def _determinism(checker: Checker, shape: dict, dtype: str) -> StageResult:
    if checker.problem.meta.deterministic is False:
        return StageResult("determinism", True, "skipped: the problem declares the op non-deterministic",
                           shape, dtype, skipped=True)
    setup = checker.setup(shape, dtype)
    inputs = make_inputs(checker.problem, shape, dtype, checker.fresh_seed(), checker.device)
    runs = []
    for _ in range(3):
        outs, problem = checker.call(setup, inputs)
        if problem:
            return StageResult("determinism", False, problem, shape, dtype)
        runs.append([o.clone() for o in outs])
    bound = checker.problem.meta.deterministic
    for again in runs[1:]:
        for a, b in zip(runs[0], again):
            if bound is True or bound == 0:
                if not torch.equal(a.nan_to_num(), b.nan_to_num()):
                    return StageResult("determinism", False, "repeated calls differ bitwise", shape, dtype)
            else:
                a64, b64 = a.double(), b.double()
                rel = float((a64 - b64).norm() / (a64.norm() + 1e-30))
                if rel > float(bound):
                    return StageResult("determinism", False,
                                       f"repeated calls differ by {rel:.2e} > bound {float(bound):.0e}", shape, dtype)
    note = "bitwise equal over 3 calls" if bound is True else f"within {float(bound):.0e} over 3 calls"
    return StageResult("determinism", True, note, shape, dtype)


def run_stages(checker: Checker, sweep: list[dict], dtypes: list[str], trials: int,
               emit: Callable[[StageResult], None]) -> bool:
    """Run the stages in order, stopping at the first failure; emit one line per stage."""
    meta = checker.problem.meta
    small, primary = meta.small_shapes[0], dtypes[0]
    stability_shape = small if checker.device == "cpu" else (meta.shapes or meta.small_shapes)[0]
    determinism_shape = sweep[-1]
    plan = [
        ("smoke", lambda: (checker.trial(small, primary) for _ in range(1))),
        ("sweep", lambda: (checker.trial(s, d) for s in sweep for d in dtypes for _ in range(trials))),
        ("stability", lambda: (checker.trial(stability_shape, d, transform=t)
                               for t in meta.stability for d in dtypes)),
        ("determinism", lambda: (_determinism(checker, determinism_shape, d) for d in dtypes)),
        ("edge", lambda: itertools.chain(
            (checker.trial(s, d) for s in meta.edge_shapes for d in dtypes),
            (checker.trial(small, d, strided=True) for d in dtypes if meta.strided_inputs))),
    ]
    for stage, trials_of in plan:
        line = _fold(stage, trials_of())
        if line is None:
            emit(StageResult(stage, True, "skipped: the problem declares nothing to check here", skipped=True))
            continue
        emit(line)
        if not line.passed:
            return False
    return True
