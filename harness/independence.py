"""Whether a problem's float64 reference may run in slices of its inputs' first dimension (a batch), for a
file that does not say (a KernelBench file has no META): found by a probe, not assumed.

At the file's own size a float64 reference can hold more than the memory bound allows beside the inputs
(KernelBench's 25_Swish: 39 GB for a 6.4 GB input), which sends it to the host, where one trial takes about
ten seconds. Where each output row depends on the same row of every input only (elementwise ops, pooling
and scans over other dimensions, attention per batch), the reference runs on the device a slice at a time.
The probe shrinks the size constants (halved and made odd, as harness/derived_shapes.py does) until the
inputs are small, then compares the whole float64 call with the call in two slices on the host: equal to
float64 rounding, and every output sliced with its inputs, or no slicing. A reference that reduces the whole
batch to one answer (KernelBench's losses, 94-100) is sliced too where its answer is the slices' answers'
mean weighted by their lengths, or their sum (harness/sliced_reference.JOINS): the probe's two slices are
of unequal length (its sizes are odd), so a mean and a sum are told apart, and a max or a median is not
mistaken for either."""

from __future__ import annotations

from pathlib import Path

import torch

from harness.compare import as_tensor_list
from harness.derived_shapes import proposals, reference_runs
from harness.inputs import build_models, make_inputs, meta_inputs, to_float64
from harness.loader import LoadedProblem
from harness.sliced_reference import JOINS, SlicedReference

PROBE_ELEMENTS = 1 << 20  # tensor input elements at the probe's shape, at most
_FOUND: dict = {}  # problem file -> (split dimension, join) or None, once per process


def _elements(problem: LoadedProblem, shape: dict) -> int | None:
    inputs = meta_inputs(problem, shape)
    return None if inputs is None else sum(x.numel() for x in inputs if isinstance(x, torch.Tensor))


def probe_shape(problem: LoadedProblem, shape: dict) -> dict | None:
    """A shape of at most PROBE_ELEMENTS input elements where the reference runs (traced on the meta
    device), from `shape` by halving its size constants as the edge shapes do (derived_shapes.proposals):
    all at once where the reference accepts that, else the first it accepts alone (41_Max_Pooling_1D: a
    kernel of 3 cannot take its padding of 4); None when none is found, or when the inputs cannot be sized
    on the meta device."""
    current = dict(shape)
    for _ in range(64):
        elements = _elements(problem, current)
        if elements is None:
            return None
        if elements <= PROBE_ELEMENTS:
            return current
        current = next((s for s in proposals(current) if s != current and reference_runs(problem.module, shape, s)),
                       None)
        if current is None:
            return None
    return None


def first_dim_join(problem: LoadedProblem, shape: dict, seed: int = 0) -> str | None:
    """How the reference's answers on two slices of dimension 0 make the whole call's float64 answer at a
    small shape (a join of harness/sliced_reference.JOINS), or None where none does."""
    small = probe_shape(problem, shape)
    if small is None:
        return None
    try:
        inputs = make_inputs(problem, small, "float32", seed, "cpu")
        tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
        if not tensors or any(x.dim() == 0 or x.shape[0] != tensors[0].shape[0] for x in tensors) \
                or tensors[0].shape[0] < 2:
            return None
        _, model64, _ = build_models(problem, None, small, "float32", seed, "cpu")
        with torch.no_grad():
            whole = as_tensor_list(model64(*to_float64(inputs)))
            for join in JOINS:
                try:
                    sliced = as_tensor_list(SlicedReference(model64, 0, 2, join)(*inputs))
                except ValueError:  # outputs not sliced with the inputs, or not reducible: the next join
                    continue
                if _same(whole, sliced):
                    return join
    except Exception:  # noqa: BLE001 - a reference that cannot be sliced is called whole
        return None
    return None


def _same(whole: list, sliced: list) -> bool:
    return len(whole) == len(sliced) and all(
        a.shape == b.shape and a.dtype == b.dtype and torch.allclose(a, b, rtol=1e-10, atol=1e-12, equal_nan=True)
        for a, b in zip(whole, sliced))


def split(problem: LoadedProblem, shape: dict) -> tuple[int, str] | None:
    """(0, join) where the probe finds a join of dimension 0's slices that gives the whole answer, else
    None; for a problem whose META declares no reference_split_dim (the checker reads a declared one)."""
    key = str(Path(problem.path).resolve())
    if key not in _FOUND:
        join = first_dim_join(problem, shape)
        _FOUND[key] = None if join is None else (0, join)
    return _FOUND[key]
