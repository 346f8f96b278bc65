"""The source check and the watched probe call, in-process on small inputs (no child processes).

The corpus test runs whole candidates through the harness; these pin down each rule on its own, with
the honest patterns beside the cheats so a rule never grows to reject an honest kernel.
"""

import ast
import textwrap
import threading
import time

import pytest
import torch
import triton
import triton.language as tl

from harness.integrity import dispatch_check
from harness.integrity.probe import probe
from harness.integrity.static_check import check_tree

KERNEL = """
import torch
import triton
import triton.language as tl

@triton.jit
def k(x_ptr):
    pass
"""


def check(source: str, stem: str | None = "scale_rows") -> str | None:
    return check_tree(ast.parse(textwrap.dedent(source)), "cand.py", stem)


@pytest.mark.parametrize("source", [
    KERNEL,
    "from triton import jit\n@jit\ndef k(x):\n    pass\n",
    "import triton\n@triton.autotune(configs=[], key=[])\n@triton.jit\ndef k(x):\n    pass\n",
    "from torch.utils.cpp_extension import load_inline\nmod = load_inline('m', '', functions=['f'])\n",
    "import torch.utils.cpp_extension as ce\nmod = ce.load(name='m', sources=['m.cu'])\n",
    KERNEL + "try:\n    import numpy\nexcept ImportError:\n    numpy = None\n",
    KERNEL + "def pick(d, k):\n    try:\n        return d[k]\n    except KeyError:\n        return 16\n",
    KERNEL + "class ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
             "        try:\n            return x\n        except RuntimeError as e:\n            raise ValueError(e)\n",
])
def test_honest_sources_pass(source):
    assert check(source) is None


@pytest.mark.parametrize("source, words", [
    ("import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n",
     "no kernel of its own"),
    (KERNEL + "def forward(self, x):\n    try:\n        return k(x)\n    except Exception:\n"
              "        return torch.nn.functional.relu(x)\n", "line 13: falls back to torch"),
    (KERNEL + "import torch.nn.functional as F\ndef f(x):\n    try:\n        pass\n    except Exception:\n"
              "        y = F.relu(x)\n", "falls back to torch in an except handler (F.relu)"),
    (KERNEL + "class ModelNew:\n    def forward(self, x):\n        try:\n            return k(x)\n"
              "        except Exception:\n            return x * 2\n", "forward returns a fallback result"),
    (KERNEL + "from scale_rows import Model\n", "imports the problem's reference"),
    (KERNEL + "import scale_rows\n", "imports the problem module scale_rows"),
    (KERNEL + "from reference import ref_kernel, Model\n", "imports the problem's reference"),
    (KERNEL + "def f(x):\n    return Model(3)(x)\n", "uses the reference's Model"),
    (KERNEL + "def f(m, x):\n    return m.ModelFused(3)(x)\n", "uses the reference's ModelFused"),
    (KERNEL + "eval('1')\n", "calls eval()"),
    (KERNEL + "import inspect\nf = inspect.stack()\n", "calls inspect.stack"),
    (KERNEL + "import gc\nobjs = gc.get_objects()\n", "calls gc.get_objects"),
])
def test_cheating_sources_are_flagged_with_their_line(source, words):
    problem = check(source)
    assert problem is not None and words in problem, problem
    assert problem.startswith("cand.py")


@pytest.mark.parametrize("source, words", [
    ("import time\ntime.perf_counter = lambda: 0.0\n", "line 10: replaces time.perf_counter"),
    ("import time as t\nt.time = t.monotonic\n", "replaces t.time"),
    ("torch.cuda.Event.elapsed_time = lambda s, e: 0.001\n", "replaces torch.cuda.Event.elapsed_time"),
    ("from torch.cuda import Event\nEvent.elapsed_time = None\n", "replaces Event.elapsed_time"),
    ("E = torch.cuda.Event\nE.record = None\n", "replaces E.record"),
    ("def forward(x):\n    torch.cuda.synchronize = lambda: None\n", "replaces torch.cuda.synchronize"),
    ("setattr(torch, 'allclose', lambda *a, **k: True)\n", "patches torch.allclose with setattr()"),
    ("setattr(torch.testing, 'assert_close', print)\n", "patches torch.testing.assert_close with setattr()"),
    ("del torch.testing.assert_close\n", "deletes torch.testing.assert_close"),
    ("import harness.compare\nharness.compare.compare = print\n", "replaces harness.compare.compare"),
    ("from harness import timing\ntiming.summarize = print\n", "replaces timing.summarize"),
    ("import sys\nsys.modules['time'].perf_counter = print\n", "replaces sys.modules['time'].perf_counter"),
    ("vars(torch)['equal'] = print\n", "replaces vars(torch)['equal']"),
    ("import threading\nthreading.enumerate = list\n", "replaces threading.enumerate"),
    ("def fixture(monkeypatch):\n    monkeypatch.setattr('time.perf_counter', print)\n",
     "patches time.perf_counter with monkeypatch.setattr()"),
    ("from unittest import mock\nmock.patch('torch.cuda.synchronize').start()\n",
     "patches torch.cuda.synchronize with mock.patch()"),
    ("from unittest.mock import patch\np = patch.object(torch, 'allclose', print)\n",
     "patches torch.allclose with patch.object()"),
    ("object.__setattr__(torch.cuda, 'synchronize', print)\n",
     "patches torch.cuda.synchronize with object.__setattr__()"),
])
def test_patching_timers_torch_or_the_harness_is_flagged_with_its_line(source, words):
    problem = check(KERNEL + source)
    assert problem is not None and words in problem, problem
    assert "must not patch timers, torch, triton or the harness" in problem


@pytest.mark.parametrize("source", [
    "from time import perf_counter\nperf_counter = None\n",  # rebinds its own name only
    "t0 = torch.empty(3)\nt0.foo = 1\n",  # its own tensor, not torch's
    "def patch(x):\n    return x\ny = patch(torch.empty(2))\n",
    "import os\nos.environ['TRITON_CACHE_DIR'] = '/tmp'\n",
    "class ModelNew(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.weight = torch.nn.Parameter(torch.ones(3))\n        setattr(self, 'bias', None)\n",
])
def test_honest_assignments_are_not_patching(source):
    assert check(KERNEL + source) is None


def test_tampering_is_found_without_importing_the_file(tmp_path):
    from harness.integrity.static_check import check_tampering

    path = tmp_path / "cand.py"
    path.write_text("import time\nraise SystemExit('imported')\ntime.perf_counter = time.monotonic\n")
    assert check_tampering(path).startswith("cand.py line 3: replaces time.perf_counter")
    path.write_text(KERNEL)
    assert check_tampering(path) is None


def test_syntax_errors_are_left_to_the_loader(tmp_path):
    from harness.integrity.static_check import check_file

    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    assert check_file(bad) is None


# ---- the watched call ---------------------------------------------------------------------------------

@triton.jit
def double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


def double(x):
    y = torch.empty_like(x)
    double_kernel[(triton.cdiv(x.numel(), 16),)](x, y, x.numel(), BLOCK=16)
    return y


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def fresh():
    return [torch.randn(40)]


def test_watch_counts_triton_launches_and_not_the_interpreters_own_ops():
    x = torch.randn(40)
    with dispatch_check.watch() as act:
        double(x)
    assert act.launches == 1 and act.extension_calls == 0
    assert act.work_ops() == []  # empty_like only: host-side allocation
    assert dispatch_check.no_kernel_problem(act) is None


def test_watch_names_the_torch_ops_that_did_the_work():
    with dispatch_check.watch() as act:
        torch.relu(torch.randn(4) * 2)
    assert act.own_kernels == 0
    problem = dispatch_check.no_kernel_problem(act)
    assert problem.startswith("launched no kernel of its own; the work was done by torch ops: ")
    assert "aten::mul" in problem and "aten::relu" in problem


def test_counted_extension_module_calls():
    class FakeExtension:
        @staticmethod
        def forward(x):
            return x + 1

    module = FakeExtension()
    dispatch_check._wrap_module(module)
    with dispatch_check.watch() as act:
        module.forward(torch.ones(2))
    assert act.extension_calls == 1 and act.work_ops() == []  # the extension's own ops are its own


def test_probe_passes_an_honest_kernel_with_host_side_torch_ops():
    def honest(x):
        acc = torch.zeros(1)  # an accumulator: allowed
        acc.fill_(0.0)
        return double(x.contiguous().view(-1))
    assert probe(Fn(honest), fresh, "cpu") is None


def test_probe_rejects_torch_doing_the_work():
    problem = probe(Fn(lambda x: x * 2), fresh, "cpu")
    assert problem == "launched no kernel of its own; the work was done by torch ops: aten::mul"


def test_probe_rejects_output_written_after_return():
    interpreter_lock = threading.Lock()  # the Triton interpreter is not thread-safe: the warm-up's timer may overlap

    def late_write(x, y):
        with interpreter_lock:
            y.copy_(double(x))

    def deferred(x):
        y = torch.zeros_like(x)
        threading.Timer(0.02, late_write, args=(x, y)).start()
        return y
    problem = probe(Fn(deferred), fresh, "cpu")
    # which check sees it first depends on whether the timer fired within the settle time (a loaded CI box)
    assert "output 0 changed after the call returned" in problem or "thread(s) running" in problem


def test_probe_rejects_threads_left_running():
    def lingering(x):
        threading.Thread(target=time.sleep, args=(3,), daemon=True).start()
        return double(x)
    problem = probe(Fn(lingering), fresh, "cpu")
    assert problem.startswith("left 1 new Python thread(s) running")


def test_probe_leaves_raising_candidates_to_the_stages():
    def raises(x):
        raise RuntimeError("no")
    assert probe(Fn(raises), fresh, "cpu") is None


def test_watch_leaves_triton_untouched_outside_the_window():
    """Timing must run triton's own launch path, not a counting wrapper."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    launch = "run" if "run" in vars(InterpretedFunction) else "__getitem__"  # Triton 3.2: no run() of its class
    before = (JITFunction.run, getattr(InterpretedFunction, launch))
    with dispatch_check.watch():
        assert getattr(InterpretedFunction, launch) is not before[1]
    assert (JITFunction.run, getattr(InterpretedFunction, launch)) == before


@torch.library.custom_op("ksuite_test::double", mutates_args=())
def custom_double(x: torch.Tensor) -> torch.Tensor:
    return x * 2


def test_custom_ops_of_an_extension_count_as_its_own_kernels():
    """A CUDA extension registered through TORCH_LIBRARY reaches the dispatcher as its own namespace."""
    x = torch.randn(4)
    with dispatch_check.watch() as act:
        torch.ops.ksuite_test.double(x)
    assert act.extension_calls == 1
    assert dispatch_check.no_kernel_problem(act) is None
