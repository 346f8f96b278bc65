"""Output provenance in the watched probe call, and the re-check on the timed input tensors refilled in
place. In-process, small inputs, Triton's interpreter.

Provenance must reject an output torch computed while the candidate's kernels did nothing towards it,
and pass every honest way a wrapper hands back what its kernel wrote (views, casts, slices, epilogues,
partial torch tails). The in-place re-check must catch caches keyed on an input's address, identity or
version counter, which fresh inputs never hit.
"""

import pytest
import torch
import triton
import triton.language as tl
from conftest import SCALE_ROWS

from harness.correctness import Checker
from harness.inputs import build_candidate
from harness.integrity import dispatch_check
from harness.integrity.probe import probe
from harness.loader import load_problem


@triton.jit
def double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def noop_kernel(x_ptr):
    pass


def launch(kernel, x, y, n=None):
    n = x.numel() if n is None else n
    kernel[(triton.cdiv(n, 16),)](x, y, n, BLOCK=16)
    return y


def double(x):
    return launch(double_kernel, x, torch.empty_like(x))


def into(buffer_of, x):
    return launch(double_kernel, x, buffer_of(x))


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def fresh():
    return [torch.randn(40)]


def tail_in_torch(x):
    """The kernel does the first 32 elements, torch the last 8 (a partial write)."""
    y = launch(double_kernel, x, torch.empty_like(x), n=32)
    y[32:] = x[32:] * 2
    return y


HONEST = {
    "plain": double,
    "view_and_slice": lambda x: double(x).view(4, 10)[1:],
    "cast": lambda x: double(x).to(torch.float16),
    "contiguous_copy": lambda x: double(x).view(4, 10).t().contiguous(),
    "epilogue": lambda x: double(x) * 3 + 1,
    "reduction_of_kernel_output": lambda x: double(x).sum(),
    "zeros_accumulator": lambda x: into(torch.zeros_like, x),
    "output_as_kwarg": lambda x: (lambda y: (double_kernel[(3,)](x_ptr=x, y_ptr=y, n=40, BLOCK=16), y)[1])(
        torch.empty_like(x)),
    "partial_torch_tail": tail_in_torch,
    "torch_prologue": lambda x: double(x.abs()),
    "tuple_of_outputs": lambda x: (double(x), double(x).view(-1)[:3]),
}

CHEATS = {
    "noop_beside_torch": lambda x: (noop_kernel[(1,)](x), x * 2)[1],
    "noop_on_torch_result": lambda x: (lambda y: (noop_kernel[(1,)](y), y)[1])(x * 2),
    "copy_kernel_then_torch": lambda x: launch(copy_kernel, x, torch.empty_like(x)) * 2,
    "kernel_output_overwritten_by_torch": lambda x: torch.mul(x, 2, out=double(x)),
    "kernel_beside_torch_output": lambda x: (double(x), torch.relu(x))[1],
    "second_output_by_torch": lambda x: (double(x), x.exp()),
}


@pytest.mark.parametrize("name", HONEST)
def test_honest_kernel_outputs_pass_provenance(name):
    assert probe(Fn(HONEST[name]), fresh, "cpu") is None


@pytest.mark.parametrize("name", CHEATS)
def test_outputs_torch_computed_are_rejected(name):
    problem = probe(Fn(CHEATS[name]), fresh, "cpu")
    assert problem is not None and "computed by torch ops (aten::" in problem, problem
    assert problem.endswith("not by the candidate's kernels")


def test_provenance_names_the_chain_of_torch_ops():
    x = torch.randn(40)
    with dispatch_check.watch() as act:
        noop_kernel[(1,)](x)
        y = torch.relu(x * 2)
    assert dispatch_check.provenance_problem(act, [y]) == (
        "output 0 computed by torch ops (aten::mul, aten::relu), not by the candidate's kernels")


def test_a_kernel_that_changes_nothing_adds_no_work_and_a_real_write_does():
    x = torch.randn(40)
    with dispatch_check.watch() as act:
        y = x * 2
        noop_kernel[(1,)](y)
        z = x * 3  # the kernel then writes 2 * x over it
        double_kernel[(3,)](x, z, 40, BLOCK=16)
    assert dispatch_check.provenance_problem(act, [y]) is not None
    assert dispatch_check.provenance_problem(act, [z]) is None


def test_unseen_launches_give_no_verdict():
    """A launch seen only by triton's hook (no arguments to snapshot) leaves provenance undecided."""
    x = torch.randn(40)
    with dispatch_check.watch() as act:
        y = x * 2
    act.launches, act.hook_launches = 0, 1
    assert dispatch_check.provenance_problem(act, [y]) is None


def test_extension_results_are_its_own_work():
    class FakeExtension:
        @staticmethod
        def forward(x):
            return x + 1

    module = FakeExtension()
    dispatch_check._wrap_module(module)
    x = torch.randn(4)
    with dispatch_check.watch() as act:
        y = module.forward(x)
    assert act.extension_calls == 1 and dispatch_check.provenance_problem(act, [y]) is None


# ---- the re-check on the timed input tensors, refilled in place -----------------------------------------

@triton.jit
def scale_kernel(x_ptr, w_ptr, y_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    mask = offs < N
    x = tl.load(x_ptr + row * N + offs, mask=mask).to(tl.float32)
    w = tl.load(w_ptr + offs, mask=mask).to(tl.float32)
    tl.store(y_ptr + row * N + offs, (x * w).to(y_ptr.dtype.element_ty), mask=mask)


class Honest(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(dim))

    def compute(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        scale_kernel[(x.shape[0],)](x, self.weight, y, x.shape[1], BLOCK_N=triton.next_power_of_2(x.shape[1]))
        return y

    def forward(self, x):
        return self.compute(x)


class CacheByAddress(Honest):
    def forward(self, x):
        cache = self.__dict__.setdefault("cache", {})
        if x.data_ptr() not in cache:
            cache[x.data_ptr()] = (x, self.compute(x))
        return cache[x.data_ptr()][1]


class CacheByIdentityCopy(Honest):
    def forward(self, x):
        cache = self.__dict__.setdefault("cache", {})
        if id(x) not in cache:
            cache[id(x)] = (x, self.compute(x))
        return cache[id(x)][1].clone()


class CacheByVersion(Honest):
    """Keyed on the address and the version counter, which an ordinary in-place write would bump."""

    def forward(self, x):
        cache = self.__dict__.setdefault("cache", {})
        key = (x.data_ptr(), x._version)
        if key not in cache:
            cache[key] = (x, self.compute(x))
        return cache[key][1].clone()


SHAPE, DTYPE = {"batch_size": 8, "dim": 32}, "float32"


def checker_for(cls):
    problem = load_problem(SCALE_ROWS, "ksuite_test_provenance_problem")
    return Checker(problem, lambda s, d: build_candidate(problem, cls, s, d, 0, "cpu"), "cpu", 0)


def timed_then_rechecked(cls):
    """What the worker does: a trial on fresh inputs, calls on one input set (the timing loop), then the
    re-check on that same set refilled in place."""
    from harness.inputs import make_inputs

    checker = checker_for(cls)
    fresh_trial = checker.trial(SHAPE, DTYPE)
    inputs = make_inputs(checker.problem, SHAPE, DTYPE, checker.fresh_seed(), "cpu")
    model = checker.setup(SHAPE, DTYPE).candidate
    with torch.no_grad():
        outputs = [model(*inputs) for _ in range(3)][-1:]
    return fresh_trial, checker.recheck_in_place(SHAPE, DTYPE, inputs, outputs)


def test_honest_candidate_passes_the_in_place_recheck():
    fresh_trial, after = timed_then_rechecked(Honest)
    assert fresh_trial.passed and after.passed, after.detail


@pytest.mark.parametrize("cls", [CacheByAddress, CacheByIdentityCopy, CacheByVersion])
def test_caches_the_timing_loop_hits_fail_the_in_place_recheck(cls):
    fresh_trial, after = timed_then_rechecked(cls)
    assert fresh_trial.passed  # fresh inputs never hit these caches
    assert not after.passed and ("outside" in after.detail or "NaN" in after.detail), after.detail


def test_the_refill_keeps_the_tensors_and_their_version_counters():
    from harness.inputs import make_inputs

    checker = checker_for(Honest)
    inputs = make_inputs(checker.problem, SHAPE, DTYPE, 12345, "cpu")
    x, ptr, version, before = inputs[0], inputs[0].data_ptr(), inputs[0]._version, inputs[0].clone()
    assert checker.recheck_in_place(SHAPE, DTYPE, inputs, []).passed
    assert inputs[0] is x and x.data_ptr() == ptr and x._version == version
    assert not torch.equal(x, before)
