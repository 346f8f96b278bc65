"""The five correctness stages: smoke, shape sweep, numerical stability, determinism, edge cases."""

from __future__ import annotations

import dataclasses
import gc
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from harness import independence, memory
from harness.compare import Comparison, as_tensor_list, compare, compare_pieces, float64_chunks
from harness.float64_model import widen_in_place
from harness.inputs import build_models, make_inputs, poison_like, to_float64
from harness.integrity import checks
from harness.loader import DTYPES, LoadedProblem
from harness.records import StageResult
from harness.sliced_reference import SlicedReference

STAGES = ("smoke", "sweep", "stability", "determinism", "edge")


class FatalDeviceError(Exception):
    """The device is unusable after this (illegal address, launch failure): stop the child process."""


def is_fatal(exc: BaseException) -> bool:
    text = str(exc).lower()
    return any(s in text for s in ("illegal memory access", "illegal address", "unspecified launch failure",
                                   "misaligned address", "device-side assert", "an illegal instruction"))


@dataclass
class Setup:
    """Models for one (shape, dtype): the candidate, the float64 reference (made from the dtype's model,
    whose weights it keeps: harness/float64_model.py; on the host when the memory plan says so), and the
    plan itself."""

    candidate: torch.nn.Module | None
    reference64: torch.nn.Module | None
    out_dtypes: list
    plan: memory.Plan = memory.Plan()
    # the float64 reference casts large weights on use through torch's parametrizations, and a parametrized
    # module sits in a reference cycle (the property torch injects into its class refers back to it): only
    # the garbage collector frees it. fused_mlp's trials held two earlier setups' weights that way (1 GB
    # beyond the plan; scripts/trial_peak_probe.py --job on the H200, 2026-12-03)
    cyclic: bool = False

    @property
    def host(self) -> str | None:
        """The host device when the reference lives there, else None (beside the inputs)."""
        return "cpu" if self.plan.reference == "host" else None


class Checker:
    """Runs trials of one implementation against the float64 reference, with integrity checks.
    `free_fn(device)` says how many bytes the device has free (harness/memory.py; tests fake a budget)."""

    def __init__(self, problem: LoadedProblem, make_candidate: Callable, device: str, seed: int,
                 free_fn: Callable[[str], int | None] | None = None):
        self.problem, self.make_candidate, self.device, self.seed = problem, make_candidate, device, seed
        self.free_fn = free_fn
        self._setups: dict = {}
        self.trial_seed = seed * 1000
        self.probe_seed = seed * 1000 + 500  # the integrity probe's inputs: the stages' draws stay shared
        self.peaks: dict = {}  # (shape key, dtype) -> peak device bytes of its trials (None on CPU)

    def setup(self, shape: dict, dtype: str) -> Setup:
        key = (tuple(sorted(shape.items())), dtype)
        if key not in self._setups:
            self._drop_setups()  # keep one model set alive: large shapes are large
            ref, _, _ = build_models(self.problem, None, shape, dtype, self.seed, self.device, float64=False)
            sizes = memory.trace_sizes(self.problem, shape, dtype) or self._called_sizes(ref, shape, dtype)
            free = (self.free_fn or memory.device_free)(self.device)
            compute_bound = self.problem.meta.bound == "compute"
            slices, plan = 1, memory.plan(sizes, DTYPES[dtype].itemsize, free, compute_bound=compute_bound)
            # declared in META, else probed (harness/independence.py) where the whole call would leave the device
            meta = self.problem.meta
            dim, join, whole = meta.reference_split_dim, "concat", meta.reference_whole_inputs
            if dim is None and free is not None and plan.reference == "host":
                dim, join = independence.split(self.problem, shape) or (None, join)
            if dim is not None:
                extent = memory.split_extent(self.problem, shape, dim, whole)
                slices, plan = memory.plan_in_slices(sizes, DTYPES[dtype].itemsize, free, extent, compute_bound)
            if plan.refusal:
                self._setups[key] = Setup(None, None, list(sizes.out_dtypes), plan)
            else:
                ref64 = ref.to("cpu" if plan.reference == "host" else self.device)
                del ref
                lazy = widen_in_place(ref64)  # the dtype model itself, made float64: no second copy of its weights
                if slices > 1:
                    ref64 = SlicedReference(ref64, dim, slices, join, whole)
                cand = self.make_candidate(shape, dtype)
                self._setups[key] = Setup(cand, ref64, list(sizes.out_dtypes), plan, cyclic=lazy > 0)
        return self._setups[key]

    def _drop_setups(self) -> None:
        """Let the models of the setup held go, now: a reference with parametrized weights is in a cycle, so
        the collector runs (tens of milliseconds, only for models with weights of a megabyte or more)."""
        cyclic = any(s.cyclic for s in self._setups.values())
        self._setups.clear()
        if cyclic:
            gc.collect()

    def _called_sizes(self, ref, shape: dict, dtype: str) -> memory.Sizes:
        """Sizes from one real call of the reference in dtype, where tracing on the meta device failed."""
        probe = make_inputs(self.problem, shape, dtype, self.seed, self.device)
        with torch.no_grad():
            outs = as_tensor_list(ref(*probe))
        return memory.Sizes(memory.nbytes(probe), memory.nbytes(outs), tuple(t.dtype for t in outs),
                            params=memory.model_bytes(ref))

    def refusal(self, shape: dict, dtype: str) -> str | None:
        """Why this shape cannot be checked here ("needs 31 GB, 28 GB free"), or None."""
        return self.setup(shape, dtype).plan.refusal

    def next_probe_seed(self) -> int:
        self.probe_seed += 1
        return self.probe_seed

    def fresh_seed(self) -> int:
        self.trial_seed += 1
        return self.trial_seed

    def call(self, setup: Setup, inputs: list) -> tuple[list | None, str | None]:
        """Candidate first (before the reference ever runs on these inputs), integrity checks after."""
        before = checks.snapshot(inputs, "cpu" if setup.plan.snapshot == "host" else None)
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
        del out
        for problem in (checks.subclass_problem(outs), checks.device_problem(outs, self.device),
                        checks.aliasing_problem(outs, inputs),
                        None if self.problem.meta.inplace else checks.mutation_problem(inputs, before)):
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
        """One trial on fresh inputs; a shape the device cannot hold is a skipped trial naming why."""
        setup = self.setup(shape, dtype)
        if setup.plan.refusal:
            return StageResult("", True, setup.plan.refusal, shape, dtype, skipped=True)
        seed = seed if seed is not None else self.fresh_seed()
        memory.reset_peak(self.device)
        inputs = make_inputs(self.problem, shape, dtype, seed, self.device, transform=transform, strided=strided)
        result = self._judge(setup, inputs, shape, dtype, (seed, transform, strided))
        del inputs
        self.note_peak(shape, dtype)
        return result

    def note_peak(self, shape: dict, dtype: str) -> None:
        key, now = (tuple(sorted(shape.items())), dtype), memory.peak(self.device)
        if now is not None:
            self.peaks[key] = max(self.peaks.get(key, 0), now)

    def _judge(self, setup: Setup, inputs: list, shape: dict, dtype: str, draw: tuple | None = None) -> StageResult:
        outs, problem = self.call(setup, inputs)
        if problem:
            return StageResult("", False, problem, shape, dtype)
        atol, rtol = self.problem.meta.tolerance(dtype)
        sliced = setup.reference64 if isinstance(setup.reference64, SlicedReference) else None
        if setup.host is None and sliced is not None and sliced.join == "concat":
            with torch.no_grad():  # each slice's float64 answer compared with its rows and dropped
                result: Comparison = compare_pieces(outs, sliced.pieces(*inputs), sliced.dim, setup.out_dtypes,
                                                    atol, rtol)
        else:
            ref = self._reference(setup, inputs, shape, dtype, draw)
            result = compare(outs, ref, setup.out_dtypes, atol, rtol)
        return StageResult("", result.passed, result.detail, shape, dtype, result.max_abs_err, result.rel_l2_err)

    def _reference(self, setup: Setup, inputs: list, shape: dict, dtype: str, draw: tuple | None) -> list:
        """The float64 reference on these inputs: beside them, or on the host (computed once per input draw
        for the whole job: harness/memory.HOST_REFERENCES) when the device is short."""
        if setup.host is None:
            with torch.no_grad():
                if isinstance(setup.reference64, SlicedReference):  # float64 a slice at a time
                    return as_tensor_list(setup.reference64(*inputs))
                return as_tensor_list(setup.reference64(*to_float64(inputs)))
        key = None if draw is None else (str(self.problem.path), self.seed, tuple(sorted(shape.items())), dtype, draw)
        cached = memory.HOST_REFERENCES.get(key) if key else None
        if cached is not None:
            return cached
        host_inputs = [x.to("cpu", copy=True).double() if isinstance(x, torch.Tensor) and x.is_floating_point()
                       else x.to("cpu") if isinstance(x, torch.Tensor) else x for x in inputs]
        with torch.no_grad():
            ref = as_tensor_list(setup.reference64(*host_inputs))
        del host_inputs
        if key:
            memory.HOST_REFERENCES.put(key, ref)
        return ref

    def recheck_in_place(self, shape: dict, dtype: str, inputs: list, stale_outputs: list) -> StageResult:
        """One more trial on the SAME input tensors (same objects, same addresses) refilled with new values,
        after poisoning what earlier calls returned: a cache keyed on an input's data_ptr or identity (the
        timing loop reuses its inputs) returns a stale or poisoned answer here. The refill goes through
        `.data`, so the tensors' version counters do not see it either. `stale_outputs` is emptied once
        poisoned (whatever the candidate kept of them stays poisoned), so this trial holds one output."""
        with torch.no_grad():
            _poison_all(stale_outputs)
            stale_outputs.clear()
            seed = self.fresh_seed()
            fresh = make_inputs(self.problem, shape, dtype, seed, self.device)
            for j, old in enumerate(inputs):
                if isinstance(old, torch.Tensor):
                    old.data.copy_(fresh[j])
                fresh[j] = None
            del fresh
        return self._judge(self.setup(shape, dtype), inputs, shape, dtype, (seed, None, False))


def _poison_all(outputs: list) -> None:
    """Poison each output in place. A function of its own, so that no loop variable outlives the loop: one
    left in recheck_in_place kept the last output alive beside the re-check's trial (half of inputs +
    outputs more for a norm: 4.5x where the trial alone holds 4x)."""
    for out in outputs:
        try:
            poison_like(out)
        except RuntimeError:  # an expanded or otherwise unwritable view
            pass


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
    skipped = all(r.skipped for r in seen)  # e.g. every shape refused: "needs 31 GB, 28 GB free"
    detail = seen[0].detail if stage == "determinism" or skipped else f"{len(seen)} trials"
    return StageResult(stage, True, detail, None, None, max_abs, rel, skipped=skipped)


def _determinism(checker: Checker, shape: dict, dtype: str) -> StageResult:
    if checker.problem.meta.deterministic is False:
        return StageResult("determinism", True, "skipped: the problem declares the op non-deterministic",
                           shape, dtype, skipped=True)
    setup = checker.setup(shape, dtype)
    if setup.plan.refusal:
        return StageResult("determinism", True, setup.plan.refusal, shape, dtype, skipped=True)
    memory.reset_peak(checker.device)
    inputs = make_inputs(checker.problem, shape, dtype, checker.fresh_seed(), checker.device)
    bound = checker.problem.meta.deterministic
    first = None  # the first call's outputs; each later call is compared with them and dropped
    for _ in range(3):
        outs, problem = checker.call(setup, inputs)
        if problem:
            return StageResult("determinism", False, problem, shape, dtype)
        if first is None:
            first = [o.clone() for o in outs]
            del outs
            continue
        for a, b in zip(first, outs):
            differs = _differs(a, b, bound)
            if differs:
                return StageResult("determinism", False, differs, shape, dtype)
        del outs
    checker.note_peak(shape, dtype)
    note = "bitwise equal over 3 calls" if bound is True else f"within {float(bound):.0e} over 3 calls"
    return StageResult("determinism", True, note, shape, dtype)


def _differs(a: torch.Tensor, b: torch.Tensor, bound) -> str | None:
    """Two calls' outputs: bitwise (NaN equal to NaN), or within a relative L2 bound; chunk by chunk."""
    if a.shape != b.shape:
        return "repeated calls differ bitwise"
    sq_diff = sq_ref = 0.0
    for x, y in float64_chunks(b, a):
        if bound is True or bound == 0:
            if not bool(((x == y) | (torch.isnan(x) & torch.isnan(y))).all()):
                return "repeated calls differ bitwise"
        else:
            sq_diff += float((y - x).square().sum())
            sq_ref += float(y.square().sum())
    if bound is True or bound == 0:
        return None
    rel = sq_diff ** 0.5 / (sq_ref ** 0.5 + 1e-30)
    if rel > float(bound):
        return f"repeated calls differ by {rel:.2e} > bound {float(bound):.0e}"
    return None


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
        started = time.perf_counter()
        line = _fold(stage, trials_of())
        if line is None:
            emit(StageResult(stage, True, "skipped: the problem declares nothing to check here", skipped=True))
            continue
        emit(dataclasses.replace(line, seconds=time.perf_counter() - started))
        if not line.passed:
            return False
    return True
