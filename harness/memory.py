"""Device memory per (problem, shape, dtype, implementation): where the float64 reference goes, and when
a shape cannot be checked at all.

One trial holds the inputs, the implementation's output (and its temporaries), the inputs' snapshot for
the mutation check, and the float64 reference with its own float64 inputs and temporaries. At a large
shape that is many times the problem itself (KernelBench's 36_RMSNorm_, one 7.5 GB input, needed 130 GB).
The plan keeps a trial within BOUND x (inputs + outputs), a model's weights counted as inputs (trial_cap:
a small problem gets SLACK): the
reference (and then the snapshot) moves to the host when the device would hold more than that, or more
than is free; when even the inputs, the output and one temporary do not fit, the shape is refused in one
line ("needs 31 GB, 28 GB free").

Sizes come from tracing the reference on the meta device (no memory, no time): its largest temporary,
and the most its float64 call holds at once (19_ReLU: its output; 25_Swish: a temporary beside it), so
the reference stays on the device only where the trial as a whole keeps within the bound. Attention's
[heads, seq, seq] scores outgrow its inputs 16384 / head_dim times (275 GB in float64 at 64 heads x 16384
positions, which neither an H200 nor its host holds): plan_in_slices runs such a reference a few heads at a
time. `device_free` and `host_free` are looked up at call time, so tests replace them with fake budgets.
"""

from __future__ import annotations

import gc
import os
import weakref
from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from harness.compare import as_tensor_list
from harness.float64_model import widen_in_place
from harness.inputs import meta_inputs
from harness.loader import DTYPES, LoadedProblem
from harness.sliced_reference import sliced_inputs

BOUND = 4.0  # peak device memory of one trial: at most BOUND x (inputs + outputs) ...
SLACK = 1 << 26  # ... or, for a small problem, inputs + outputs + this (trial_cap): the comparison's chunks (a few
# of 8 MB) and the allocator's rounding; the worker's own buffers (the timer's 512 MiB, cuBLAS's workspace) are
# not a trial's, and records leave them out of their peak. 256 MiB until 2026-12-03, which let a 67 MB problem
# hold 5x inputs + outputs
USABLE = 0.9  # of the free memory: the allocator's fragmentation and the CUDA context's own needs
# of the free memory, for the float64 reference's own peak (a few large tensors, so little fragmentation:
# attention's reference at 32 heads x 16384 positions peaks near 140 GB and ran on a 150 GB H200)
REFERENCE_USABLE = 0.95


@dataclass(frozen=True)
class Sizes:
    """Bytes of one call's inputs and outputs in the checked dtype, the outputs' dtypes, the largest
    tensor any op of the float64 reference's call makes, the most bytes that call holds at once beyond
    its float64 inputs: its float64 parameters, temporaries and output (0: not known); the model's
    parameters and buffers in the checked dtype (the candidate and the reference each hold them), and the
    largest parameter the float64 call casts on use (harness/float64_model.py: every slice casts it), and
    the inputs a sliced reference gets whole (META "reference_whole_inputs": matmul's B, rotary's tables),
    each slice casting them to float64 whole."""

    inputs: int
    outputs: int
    out_dtypes: tuple
    temporary64: int = 0
    peak64: int = 0
    params: int = 0
    param64: int = 0
    whole_inputs: int = 0


@dataclass(frozen=True)
class Plan:
    reference: str = "device"  # where the float64 reference runs and is compared: device | host
    snapshot: str = "device"  # where the inputs' copy for the mutation check is kept: device | host
    refusal: str | None = None  # the one-line reason when the shape does not fit at all


def device_free(device: str) -> int | None:
    """Bytes this process can still allocate on the device: the driver's free memory and the allocator's
    cached, unused blocks (it hands those back before an allocation fails); None on CPU."""
    if device == "cpu" or not torch.cuda.is_available():
        return None
    return torch.cuda.mem_get_info()[0] + torch.cuda.memory_reserved() - torch.cuda.memory_allocated()


def size_text(n: float) -> str:
    """31 GB, 2.5 GB, 512 MB, 3 kB: what the one-line refusal says."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.0f} {unit}" if n >= 10 * scale else f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def trial_cap(inputs: int, outputs: int) -> float:
    """The most device bytes a trial may hold: BOUND x (inputs + outputs), and for a small problem at
    least its inputs and outputs plus SLACK (the comparison's chunks and the allocator's rounding weigh
    there). Past that size the slack is not added to the bound: KernelBench's 88_MinGPTNewGelu (268 MB
    in, 268 MB out) peaked at 4.5x with it, a reference in 2 slices where 4 keep 3.5x."""
    return max(BOUND * (inputs + outputs), inputs + outputs + SLACK)


@dataclass(frozen=True)
class Needs:
    """Device bytes of one trial's phases, as the plan counts them."""

    draw: float  # inputs drawn in float32, then cast
    call: float  # inputs, the output, one temporary of the output's size
    reference: float  # beside the float64 reference on the device: inputs, snapshot, output and the call
    ref64: float  # the float64 call alone: its inputs and what it holds at once (against free memory)


def needs(sizes: Sizes, itemsize: int, slices: int = 1) -> Needs:
    i, o = sizes.inputs, sizes.outputs
    wide = 8 / itemsize  # float64 copies of dtype tensors
    # what the float64 call holds at once beyond its float64 inputs: traced (19_ReLU its output alone,
    # 25_Swish a temporary beside it), else its output and one temporary: against free memory, one the
    # output's size or a larger one counted twice (attention's scores: softmax's input and output are both
    # alive); against the bound, one the output's size (an untraced large temporary is the exception the
    # bound does not judge: attention's reference at 32 heads x 16384 positions peaked near 140 GB)
    held64 = sizes.peak64 or wide * o + max(wide * o, 2 * sizes.temporary64)
    held_bound = sizes.peak64 or 2 * wide * o
    if slices > 1:  # a slice's share of the call, each slice's answer compared with the candidate's rows and
        # dropped (compare_pieces: no whole float64 output; a copy of the candidate's rows where they are not
        # contiguous); a parameter cast on use is cast whole in every slice
        fixed = sizes.param64
        held64 = max(0, held64 - fixed) / slices + fixed + o / slices
        held_bound = max(0, held_bound - fixed) / slices + fixed + o / slices
    # the call's inputs, their snapshot (the mutation check) and its output stay, beside the float64 call;
    # the candidate's and the reference's parameters throughout. Level 1 of KernelBench on the H200,
    # 2026-12-01: counting neither the snapshot nor the traced temporaries, 25_Swish peaked at 4.5x inputs
    # + outputs.
    models = 2 * sizes.params
    # the float64 inputs of one call: a slice of each sliced input, and the whole inputs whole (matmul's B
    # at 4096^3 in float16: 134 MB in every slice; counted as sliced, it peaked at 4.33x where 4.0x was planned)
    whole = min(sizes.whole_inputs, i) if slices > 1 else 0
    in64 = wide * ((i - whole) / slices + whole)
    return Needs(draw=models + i + i * 4 / itemsize, call=models + i + 2 * o,
                 reference=models + 2 * i + o + in64 + held_bound, ref64=in64 + held64)


def planned_peak(sizes: Sizes, itemsize: int, slices: int, chosen: Plan) -> float:
    """The most device bytes a trial holds under this plan, as the plan counts them."""
    n = needs(sizes, itemsize, slices)
    if chosen.reference == "device":
        return max(n.draw, n.call + sizes.inputs, n.reference)
    return max(n.draw, n.call + sizes.inputs if chosen.snapshot == "device" else n.call)


def plan(sizes: Sizes, itemsize: int, free: int | None, host: int | None = None,
         compute_bound: bool = False, slices: int = 1) -> Plan:
    """Device reference and snapshot where they fit in the bound and in free memory; else the host, where
    the float64 reference fits in `host` bytes (default: what the host has available now); a refusal when
    the inputs, the output and one temporary the output's size do not fit on the device, or the float64
    reference fits on neither. A compute-bound problem's reference stays on the device past the bound
    while free memory holds it: in float64 a host is about a hundred times slower at a matrix product
    (a 16384 x 8192 x 28672 one: seconds per trial there, against a tenth of a second on an H200), while a
    memory-bound reference costs the host little more than a copy. `slices` > 1: the reference runs a slice
    at a time (harness/sliced_reference.py), holding its whole float64 output, one slice's float64 inputs
    and one slice's temporaries."""
    if free is None:
        return Plan()
    i, o = sizes.inputs, sizes.outputs
    usable = free * USABLE
    cap = min(usable, trial_cap(i + sizes.params, o))
    n = needs(sizes, itemsize, slices)
    draw, call, reference, ref64 = n.draw, n.call, n.reference, n.ref64
    fits_free = i + o + 2 * sizes.params + ref64 <= free * REFERENCE_USABLE
    if fits_free and (max(draw, call + i, reference) <= cap or (compute_bound and reference <= usable)):
        return Plan("device", "device")
    if slices > 1:  # does not fit in this many slices (the host runs a reference whole)
        return Plan("host", "host")
    host = host_free() if host is None else host
    if ref64 > host * REFERENCE_USABLE:
        return Plan("host", "host", f"float64 reference needs {size_text(ref64)}: {size_text(free)} free "
                                    f"on the device, {size_text(host)} on the host")
    if max(draw, call + i) <= cap:
        return Plan("host", "device")
    need = max(draw, call)
    if need <= usable:
        return Plan("host", "host")
    return Plan("host", "host", f"needs {size_text(need / USABLE)}, {size_text(free)} free")


def plan_in_slices(sizes: Sizes, itemsize: int, free: int | None, extent: int, compute_bound: bool = False,
                   host: int | None = None) -> tuple[int, Plan]:
    """(slices, plan) for a reference that may be called in slices of an independent dimension `extent`
    long (harness/sliced_reference.py): the whole call where it fits on the device within the bound; else
    the fewest slices (2, 4, 8, ... up to 1024) that bring it there; else, for a compute-bound reference
    that plan() keeps on the device past the bound, the fewest slices within 2 % of the smallest planned
    peak; else
    as plan() says (the host, or a refusal). So attention's reference, whose [heads, seq, seq] scores the
    compute-bound rule would keep whole on the device at 70x its inputs and outputs, runs a head at a time
    (4.9x at 2 x 32 heads x 4096 positions)."""
    counts = [1] + [2 ** k for k in range(1, 11) if 2 ** k <= extent]
    plans = [(n, plan(sizes, itemsize, free, host, False, n)) for n in counts]
    within = next(((n, p) for n, p in plans if p.reference == "device" and not p.refusal), None)
    if within or not compute_bound:
        return within or plans[0]
    past = [(n, plan(sizes, itemsize, free, host, True, n)) for n in counts]
    on_device = [(n, p) for n, p in past if p.reference == "device" and not p.refusal]
    if not on_device:
        return past[0]
    # the fewest slices within 2 % of the smallest peak: a peak falls with every doubling, ever more slowly
    # (matmul's whole float64 B stays), and each slice is another call
    peaks = [(planned_peak(sizes, itemsize, n, p), n, p) for n, p in on_device]
    least = min(peak for peak, _, _ in peaks)
    return next((n, p) for peak, n, p in peaks if peak <= 1.02 * least)


def split_extent(problem: LoadedProblem, shape: dict, dim: int, whole=()) -> int:
    """The shortest length of dimension `dim` among the tensor inputs a sliced reference slices (all but
    those at the positions `whole`) at this shape (meta device); 1 where none has that dimension, or where
    the inputs cannot be sized on the meta device (the reference is then called whole)."""
    inputs = meta_inputs(problem, shape)
    if inputs is None:
        return 1
    lengths = [x.shape[dim] for x, cut in zip(inputs, sliced_inputs(inputs, whole)) if cut and x.dim() > dim]
    return min(lengths, default=1)


class StorageWatch(TorchDispatchMode):
    """The largest tensor any op returns, and the most bytes of storage the ops' results hold at once (a
    storage counts from the op that makes it until its last tensor is freed; views add nothing; the
    storages of `given` tensors, the call's inputs, are not counted). On the meta device it sizes the
    float64 reference without memory; on the host, where torch.cuda's peak has nothing to say, tests stand
    it in for reset_peak and peak to bound what a trial holds."""

    def __init__(self, given=()):
        super().__init__()
        self.largest = self.live = self.peak = 0
        self.holders: dict = {}  # storage key -> [live tensors on it, its bytes]
        self.given = {self._key(t) for t in given if isinstance(t, torch.Tensor)}

    def reset_peak(self, device: str | None = None) -> None:
        self.peak = self.live

    def peak_bytes(self, device: str | None = None) -> int:
        return self.peak

    @staticmethod
    def _key(t: torch.Tensor) -> int:
        return t.untyped_storage()._cdata

    def _release(self, key: int) -> None:
        holder = self.holders[key]
        holder[0] -= 1
        if holder[0] == 0:
            self.live -= holder[1]
            del self.holders[key]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if not isinstance(t, torch.Tensor):
                continue
            self.largest = max(self.largest, t.numel() * t.element_size())
            key = self._key(t)
            if key in self.given:
                continue
            if key not in self.holders:
                self.holders[key] = [0, t.untyped_storage().nbytes()]
                self.live += self.holders[key][1]
                self.peak = max(self.peak, self.live)
            self.holders[key][0] += 1
            weakref.finalize(t, self._release, key)
        return out


def trace_sizes(problem: LoadedProblem, shape: dict, dtype: str) -> Sizes | None:
    """Inputs and outputs at this shape and dtype, traced on the meta device; None where the reference
    cannot be traced there (a data-dependent op, an input built on a fixed device)."""
    try:
        with torch.device("meta"), torch.no_grad():
            model = problem.module.Model(*problem.init_inputs(shape)).to(DTYPES[dtype])
            params = model_bytes(model)
            inputs = [x.to(DTYPES[dtype]) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                      for x in problem.raw_inputs(shape)]
            outputs = as_tensor_list(model(*inputs))
            inputs64 = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
            watch = StorageWatch(inputs64)  # the float64 reference's call, as the checks run it
            with watch:
                param64 = widen_in_place(model)
                result = model(*inputs64)
            peak64 = max(watch.peak, opaque_floor(inputs64, result))
            del result
    except Exception:  # noqa: BLE001 - the caller falls back to a real call
        return None
    whole = nbytes([x for k, x in enumerate(inputs) if k in problem.meta.reference_whole_inputs])
    return Sizes(nbytes(inputs), nbytes(outputs), tuple(t.dtype for t in outputs), watch.largest, peak64,
                 params, param64, whole)


def model_bytes(model: torch.nn.Module) -> int:
    """A model's parameters and buffers (each tensor once)."""
    return nbytes(list(model.parameters()) + list(model.buffers()))


def opaque_floor(inputs64: list, result) -> int:
    """What a reduction the trace cannot see into holds at least: one op that reduces its inputs (a loss:
    smooth_l1_loss) makes no temporary on the meta device, yet on the device it holds an elementwise
    difference and an elementwise loss the size of its largest input before it reduces them (KernelBench's
    96_HuberLoss peaked at 6.0x inputs + outputs on the H200 with nothing traced, 2026-12-01: exactly two
    float64 temporaries of its input's size). Where the output is smaller than the largest input: two of
    those and the output; else 0 (the trace's own count stands)."""
    largest = max((nbytes([x]) for x in inputs64 if isinstance(x, torch.Tensor)), default=0)
    out = nbytes(as_tensor_list(result))
    return 2 * largest + out if out < largest else 0


def warm_up_trace() -> None:
    """One tiny traced float64 call on the meta device. The first such call in a process imports what
    meta tensors and dispatch modes need (sympy, torch.distributed, torch._dynamo: 2-3 s on the lent H200's
    host, 2026-12-01, inside each candidate's integrity probe); a warm worker pays it before its job."""
    with torch.device("meta"), torch.no_grad():
        x = torch.randn(2, 2)
        with StorageWatch([x]):
            (x.double() * 2).sum()


def nbytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors if isinstance(t, torch.Tensor))


def library_workspace_bytes() -> int:
    """The device bytes cuBLAS and cuBLASLt keep for the rest of the process once a matrix product ran
    (32 MiB on the H200), made now, on the current device: a worker's fixed buffer, like the timer's flush
    buffers. A warm worker that ran a matmul job kept it into every later job, and each of their records
    counted it (rmsnorm, softmax and rotary at 4096 x 4096 float16: 4.53x inputs + outputs, their trials 4.03x,
    2026-12-03). The workspaces are cleared first, so a worker that already has them counts them too."""
    if not torch.cuda.is_available():
        return 0
    torch.cuda.synchronize()
    clear = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
    if clear is not None:
        clear()
    before = torch.cuda.memory_allocated()
    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        a = torch.ones(64, 64, device="cuda", dtype=dtype)
        torch.addmm(a, a, a)  # cuBLASLt (a bias epilogue)
        torch.mm(a, a)  # cuBLAS
        del a
    torch.cuda.synchronize()
    return max(0, torch.cuda.memory_allocated() - before)


def reset_peak(device: str) -> None:
    if device != "cpu" and torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()


def allocated(device: str) -> int | None:
    """Bytes allocated on the device now; None on CPU."""
    if device != "cpu" and torch.cuda.is_available():
        return int(torch.cuda.memory_allocated())
    return None


def peak(device: str) -> int | None:
    """Peak bytes allocated on the device since the last reset_peak; None on CPU."""
    if device != "cpu" and torch.cuda.is_available():
        return int(torch.cuda.max_memory_allocated())
    return None


def release(device: str) -> None:
    """Between implementations: what the last one left (cycles, the allocator's cached blocks) goes back."""
    gc.collect()
    if device != "cpu" and torch.cuda.is_available():
        torch.cuda.empty_cache()


def host_free() -> int:
    """Bytes the host can still give (MemAvailable), else its physical memory."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return host_bytes()


def host_bytes() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 16 << 30


class HostReferences:
    """float64 references computed on the host, kept for the job's other implementations: every Checker
    draws the same seeded inputs, so each is computed once per (shape, dtype, input draw). New entries are
    added only while they fit in `cap` bytes (a quarter of the host's memory): nothing is evicted."""

    def __init__(self, cap: int | None = None):
        self.cap = host_bytes() // 4 if cap is None else cap
        self.items: dict = {}
        self.used = 0

    def get(self, key):
        return self.items.get(key)

    def put(self, key, tensors: list) -> None:
        size = nbytes(tensors)
        if key not in self.items and self.used + size <= self.cap:
            self.items[key], self.used = tensors, self.used + size


HOST_REFERENCES = HostReferences()
