"""Degenerate problems: ones a kernel can pass without doing the work, whatever the harness checks.

KernelBench has level-1 problems whose outputs are smaller than atol (an all-zeros kernel passes), and
problems whose output ignores an input. This lint runs the problem's own reference in float64 on CPU and
flags: an output that does not change across seeds (a constant passes), an all-zeros output that meets the
tolerance, and an output that does not change when one input (or one parameter) is redrawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from harness.compare import as_tensor_list, compare
from harness.inputs import build_models, make_inputs, to_float64
from harness.loader import DTYPES, LoadedProblem, load_problem

SEEDS = (11, 12, 13)


@dataclass(frozen=True)
class Finding:
    problem: str
    rule: str  # constant_output | zeros_pass | ignores_input | ignores_parameter
    detail: str
    shape: dict
    dtype: str | None = None


def lint_file(path: Path, name: str | None = None, shapes: str = "small") -> list[Finding]:
    problem = load_problem(Path(path), f"ksuite_lint_{Path(path).stem}")
    name = name or Path(path).stem
    findings: list[Finding] = []
    for shape in problem.meta.sweep(shapes):
        findings += lint_shape(problem, name, shape)
    return _dedupe(findings)


def lint_shape(problem: LoadedProblem, name: str, shape: dict) -> list[Finding]:
    ref64 = build_models(problem, None, shape, "float32", 0, "cpu")[1]
    runs = [(_inputs64(problem, shape, s), None) for s in SEEDS]
    outs = [_run(ref64, inputs) for inputs, _ in runs]
    found = []
    if all(_same(outs[0], o) for o in outs[1:]):
        found.append(Finding(name, "constant_output", "the reference output is the same for every seed: "
                             "a kernel returning a constant passes", shape))
    for dtype in problem.meta.dtypes:
        found += _zeros_pass(problem, name, shape, dtype, outs)
    found += _ignored_inputs(problem, name, shape, ref64, runs[0][0], runs[1][0], outs[0])
    found += _ignored_parameters(name, shape, ref64, runs[0][0], outs[0])
    return found


def _inputs64(problem: LoadedProblem, shape: dict, seed: int) -> list:
    return to_float64(make_inputs(problem, shape, "float32", seed, "cpu"))


def _run(model, inputs: list) -> list:
    with torch.no_grad():
        return [t.detach().clone() for t in as_tensor_list(model(*inputs))]


def _same(a: list, b: list) -> bool:
    return all(x.shape == y.shape and torch.allclose(x, y, rtol=1e-12, atol=1e-12, equal_nan=True)
               for x, y in zip(a, b))


def _zeros_pass(problem: LoadedProblem, name: str, shape: dict, dtype: str, outs: list) -> list[Finding]:
    atol, rtol = problem.meta.tolerance(dtype)
    for out in outs:
        zeros = [torch.zeros_like(o, dtype=DTYPES[dtype] if o.is_floating_point() else o.dtype) for o in out]
        result = compare(zeros, out, [z.dtype for z in zeros], atol, rtol)
        if not result.passed:
            return []
    peak = max(float(o.abs().max()) if o.numel() else 0.0 for out in outs for o in out)
    return [Finding(name, "zeros_pass", f"an all-zeros output passes (max |output| {peak:.3g} within "
                    f"atol={atol:g} rtol={rtol:g})", shape, dtype)]


def _ignored_inputs(problem, name, shape, ref64, inputs_a, inputs_b, out_a) -> list[Finding]:
    found = []
    for i, (a, b) in enumerate(zip(inputs_a, inputs_b)):
        if not isinstance(a, torch.Tensor) or a.numel() == 0:
            continue
        if torch.equal(a, b):
            b = a + torch.randn_like(a) if a.is_floating_point() else None
            if b is None:
                continue
        mixed = list(inputs_a)
        mixed[i] = b
        if _same(out_a, _run(ref64, mixed)):
            found.append(Finding(name, "ignores_input", f"the output does not change when input {i} "
                                 f"({tuple(a.shape)}) is redrawn", shape))
    return found


def _ignored_parameters(name, shape, ref64, inputs, out) -> list[Finding]:
    found = []
    for pname, param in list(ref64.named_parameters()):
        if not param.numel():
            continue
        saved = param.detach().clone()
        with torch.no_grad():
            param.add_(torch.randn_like(param) * (saved.abs().mean() + 1.0))
        unchanged = _same(out, _run(ref64, inputs))
        with torch.no_grad():
            param.copy_(saved)
        if unchanged:
            found.append(Finding(name, "ignores_parameter",
                                 f"the output does not change when parameter {pname} is redrawn", shape))
    return found


def _dedupe(findings: list[Finding]) -> list[Finding]:
    """One finding per (rule, detail, dtype): the first shape that shows it."""
    seen, out = set(), []
    for f in findings:
        key = (f.rule, f.detail.split(" (max")[0], f.dtype)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out
