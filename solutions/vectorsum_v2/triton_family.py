"""vectorsum_v2 for every size: one kernel family, a dispatch table from size bucket to launch configuration.

Every form is one launch and deterministic, as in triton_balanced: each program stores its float32
partial, takes a ticket from an atomic counter (acq_rel), and the holder of the last ticket adds the
partials in program order (a tree in registers), writes the result (the output needs no zeroing) and
resets the counter for the next call ("single", one program, writes its sum directly). No host sync;
repeated calls are bitwise equal.

The fastest grid differs by size: at 52,428,800 floats triton_balanced (4 programs per multiprocessor,
equal slices, pipelined loads) is the best measured (61.2 us), but at 3,276,800 floats it took 27.0 us
where torch.sum took 13.4: each of its 528 programs sets up a 4-stage pipeline for two tiles and takes
a ticket. So one kernel with three forms (LAYOUT), picked per bucket of size:
- "slices": PROGRAMS_PER_SM programs per multiprocessor (fewer if fewer fit at once: the wrapper reads
  the compiled kernel's registers and shared memory), each owning one contiguous, equal slice (a
  multiple of 64 floats), summed through a NUM_STAGES-deep tl.range (asynchronous copies into shared
  memory, NUM_STAGES - 1 tiles ahead; 1 = plain loads): triton_balanced is BLOCK_SIZE 4096,
  NUM_STAGES 4, PROGRAMS_PER_SM 4, 8 warps;
- "stride": the same persistent grid, program p taking blocks p, p + programs, ...:
  triton_single_pass is BLOCK_SIZE 4096, NUM_STAGES 1, PROGRAMS_PER_SM 4, 8 warps (and the starter's
  grid, 264 programs, is PROGRAMS_PER_SM 2, with the ticket in place of its order-dependent atomics);
- "tile" (new, for the small sizes): one BLOCK_SIZE tile per program and no loop, so every load of a
  thread is issued before its first add and there is no pipeline to fill; cdiv(size, BLOCK_SIZE)
  programs, in as many waves as they take, the hardware handing each free multiprocessor the next one
  (reduce_rows' layout at 32768x8192, one 32 KB tile a program: 537 MB in 118 us on the H200, run
  20261202-064756, where "slices" here read as many bytes in 122 us, run 20261203-082653); up to
  MAX_PROGRAMS, else the wrapper takes "slices";
- "single" (new, for the smallest sizes): one program walks the whole vector in BLOCK_SIZE tiles and
  writes the sum itself: no partials and no ticket, whose atomics and fences cost about 1.5 us (every
  size up to 97,536 floats took 5.8-6.0 us in run 20261202-201110, torch.compile's one-program
  reduction 4.1 us at 3,584).
DISPATCH (written by `ksuite optimize`, from timings on the workload's tuning sizes only) maps each
bucket to the tunables; a bucket it does not name runs TUNABLES (triton_balanced's configuration).

Host path: GPU MODE times a call with no spin after its L2 flush, so whatever the host spends before
the kernel is enqueued lands in the window once it outlasts the flush's memset on the GPU (about 70 us
on the H200, where a call of Triton's launcher from Python took tens of microseconds). So the first call
per launch key (size, stride, device, dtypes, 16-byte alignment of x and of the output: everything
Triton specialises on that can differ between calls) goes through the JIT, and later calls through the
compiled kernel's own launcher (`CompiledKernel[grid]`): no argument binding and no cache-key hashing.

Bytes: 4 * size read, 4 written (plus 4 bytes per program of partials, which stay in L2).
"""

import functools
import re

import torch
import triton
import triton.language as tl

TUNABLES = {"LAYOUT": "slices", "BLOCK_SIZE": 4096, "NUM_STAGES": 4, "PROGRAMS_PER_SM": 4, "num_warps": 8}
TUNABLE_CHOICES = {"LAYOUT": ["slices", "stride", "tile", "single"], "BLOCK_SIZE": [2048, 4096, 8192, 16384],
                   "NUM_STAGES": [1, 2, 3, 4], "PROGRAMS_PER_SM": [1, 2, 4], "num_warps": [4, 8, 16]}
MAX_PROGRAMS = 8192  # partials buffer size: "tile" at 52,428,800 floats in 16384-float tiles is 3,200 programs
MIN_PARTIALS = 16  # the final sum's width: a power of two >= the grid, at least this (fewer compiled variants)
SLICE_ALIGN = 64  # slice boundaries on 256-byte multiples keep every program's loads aligned
MAX_PER_THREAD = 64  # floats a thread holds per tile (the accumulator; "tile": the whole tile)
SMEM_BUDGET = 160 * 1024  # bytes of pipelined copies in shared memory a program may ask for
SINGLE_MAX = 1 << 20  # floats "single" may take: beyond, one multiprocessor's bandwidth loses to any grid
# Size buckets: upper edges, ascending (above the last edge: the top bucket). GPU MODE's six benchmark
# sizes fall in six different buckets; 52,428,800 is a held-out size, so its bucket (27262976, 2^26]
# also holds tuning sizes (29,360,128 and 33,554,432).
BUCKETS = {"size": [16384, 131072, 1048576, 2097152, 4194304, 8388608, 16777216, 27262976, 67108864]}
# The table's history (NOTES.md): run 20261202-200222 searched every bucket after GPU MODE's write flush, and
# size<=67108864 was then set by hand from scripts/evict_first_probe.py; run 20261203-080528 (`--bucket`, the
# clean flush) kept "single" for size<=16384 (1.31x at 4096-12288 floats); run 20261205-143347 searched the
# three largest buckets again after the write flush and wrote the table below.
# ksuite optimize table: run 20261205-143347 on NVIDIA H200,
# ksuite optimize table: from the tuning shapes only, timed after the write flush;
# ksuite optimize table: 10 of 10 buckets tuned at their own shapes,
# ksuite optimize table: the rest copy their nearest
DISPATCH = {
    'size<=16384': {'LAYOUT': 'single'},
    'size<=131072': {'NUM_STAGES': 3},
    'size<=1048576': {'PROGRAMS_PER_SM': 1},
    'size<=2097152': {'LAYOUT': 'tile'},
    'size<=4194304': {'LAYOUT': 'tile'},
    'size<=8388608': {'BLOCK_SIZE': 2048, 'NUM_STAGES': 1},
    'size<=16777216': {'LAYOUT': 'tile', 'BLOCK_SIZE': 16384, 'num_warps': 4},
    'size<=27262976': {'BLOCK_SIZE': 2048, 'num_warps': 4},
    'size<=67108864': {'LAYOUT': 'stride', 'BLOCK_SIZE': 2048, 'NUM_STAGES': 1},
    'size>67108864': {},
}
# DISPATCH is the table of the GPU named here; `ksuite optimize` on another GPU writes that GPU's own table into
# DISPATCH_BY_GPU (its results folder name -> table), and dispatch_table() runs it there.
DISPATCH_GPU = "nvidia-h200"
# The H100's own table (run 20261205-191353) is gone: its one kept change, 4 warps for "tile" at 2,097,153-4,194,304
# floats (1.02x at tuning sizes), is within what two copies of this same file differ by at sizes of a few
# microseconds in paired rounds (2-6 %, scripts/same_file_probe.py, H100, 2026-12-06), and no held-out size falls in
# that bucket to say otherwise; the H100 runs DISPATCH.
DISPATCH_BY_GPU = {}

_workspaces: dict = {}
_resident: dict = {}
# (device, size, the identity of the tables and of the defaults) -> (config, programs, slice length, trips)
_plans: dict = {}
_launchers: dict = {}  # launch key -> (the compiled kernel's launcher for its grid, its argument tail)


def bucket_of(sizes: dict) -> str:
    """'dim<=4096,batch_size<=64': each size's first range whose edge it does not pass."""
    return ",".join(next((f"{k}<={e}" for e in edges if sizes[k] <= e), f"{k}>{edges[-1]}")
                    for k, edges in BUCKETS.items())


@functools.cache
def this_gpu() -> str:
    """This GPU as ksuite names its results folder ('nvidia-h200'; Triton's interpreter: 'cpu-interpreter'):
    the key of its own table in DISPATCH_BY_GPU."""
    if not torch.cuda.is_available():
        return "cpu-interpreter"
    return re.sub(r"[^a-z0-9]+", "-", torch.cuda.get_device_name().lower()).strip("-")


def dispatch_table() -> dict:
    """This GPU's table: its own where a search on it wrote one, else DISPATCH."""
    return DISPATCH_BY_GPU.get(this_gpu(), DISPATCH)


@triton.jit
def family_sum_kernel(x_ptr, partial_ptr, ticket_ptr, out_ptr, n, slice_len, iters, stride_x,
                      LAYOUT: tl.constexpr, BLOCK_SIZE: tl.constexpr, NUM_STAGES: tl.constexpr,
                      PARTIALS: tl.constexpr):
    pid = tl.program_id(0)
    num_programs = tl.num_programs(0)
    if LAYOUT == "tile":
        # One tile, no loop: all of a thread's loads are in flight before the first add.
        offs = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        acc = tl.load(x_ptr + offs * stride_x, mask=offs < n, other=0.0, eviction_policy="evict_first")
    elif LAYOUT == "single":
        # One program walks the whole vector: no partials, no ticket (its atomics and fences cost about
        # 1.5 us, most of a small vector's time).
        acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
        for i in tl.range(0, iters, num_stages=NUM_STAGES):
            offs = i * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            acc += tl.load(x_ptr + offs * stride_x, mask=offs < n, other=0.0, eviction_policy="evict_first")
    elif LAYOUT == "stride":
        # Blocks pid, pid + num_programs, ... (iters of them, the last ones masked).
        acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
        for i in tl.range(0, iters, num_stages=NUM_STAGES):
            offs = (i * num_programs + pid).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            acc += tl.load(x_ptr + offs * stride_x, mask=offs < n, other=0.0, eviction_policy="evict_first")
    else:
        # One contiguous slice; with NUM_STAGES > 1 the loads become asynchronous copies NUM_STAGES - 1
        # tiles ahead (those carry no L2 hint; the evict_first hint applies with NUM_STAGES = 1).
        start = pid.to(tl.int64) * slice_len
        end = tl.minimum(start + slice_len, n)
        acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
        for i in tl.range(0, iters, num_stages=NUM_STAGES):
            offs = start + i * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            acc += tl.load(x_ptr + offs * stride_x, mask=offs < end, other=0.0, eviction_policy="evict_first")

    if LAYOUT == "single":
        tl.store(out_ptr, tl.sum(acc, axis=0))
    else:
        tl.store(partial_ptr + pid, tl.sum(acc, axis=0))
        tl.debug_barrier()  # every thread's part of the partial is written before the ticket is taken
        # acq_rel: our partial is visible before the ticket; the last holder sees every partial
        ticket = tl.atomic_add(ticket_ptr, 1, sem="acq_rel")
        if ticket == num_programs - 1:
            idx = tl.arange(0, PARTIALS)
            partials = tl.load(partial_ptr + idx, mask=idx < num_programs, other=0.0, volatile=True)
            tl.store(out_ptr, tl.sum(partials, axis=0))
            tl.atomic_xchg(ticket_ptr, 0)  # ready for the next call


def _workspace(device: torch.device) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Partials and a zeroed ticket counter, allocated once per device (the kernel re-zeroes it)."""
    key = str(device)
    if key not in _workspaces:
        sms = torch.cuda.get_device_properties(device).multi_processor_count if device.type == "cuda" else 4
        partials = torch.empty(MAX_PROGRAMS, dtype=torch.float32, device=device)
        ticket = torch.zeros(1, dtype=torch.int32, device=device)
        _workspaces[key] = (partials, ticket, sms)
    return _workspaces[key]


def _resident_per_sm(x: torch.Tensor, partials: torch.Tensor, ticket: torch.Tensor, config: dict,
                     wanted: int, sms: int) -> int:
    """How many programs fit on one multiprocessor at once (registers, threads, shared memory), from
    the compiled kernel, as in Triton's fused-softmax tutorial. The slices are balanced only if every
    program is resident: a second wave would double the time. Compiled once per device and config."""
    key = (str(x.device), *sorted(config.items()))
    if key not in _resident:
        if x.device.type != "cuda":
            _resident[key] = wanted
        else:
            kernel = family_sum_kernel.warmup(x, partials, ticket, partials, 1 << 24, 1 << 16, 2, 1,
                                              PARTIALS=partials_width(sms * wanted), grid=(1,), **config)
            kernel._init_handles()
            props = triton.runtime.driver.active.utils.get_device_properties(x.device.index)
            warps = config["num_warps"]
            regs_per_warp = triton.cdiv(max(kernel.n_regs, 1) * 32, 256) * 256
            fit = [props["max_num_regs"] // (regs_per_warp * warps), 2048 // (32 * warps)]
            if kernel.metadata.shared:  # each program also holds 1 KB reserved by the system
                fit.append((props["max_shared_mem"] + 1024) // (kernel.metadata.shared + 1024))
            _resident[key] = max(1, min(fit))
    return _resident[key]


def launch_config(n: int) -> tuple[dict, int]:
    """The bucket's tunables, made safe for this exact size: a tile no longer than the vector (rounded
    up to a power of two) and at most MAX_PER_THREAD floats per thread, pipelined copies within
    SMEM_BUDGET, "tile" only while it needs at most MAX_PROGRAMS programs and "single" only up to
    SINGLE_MAX floats (else "slices"). Returns the kernel's launch options and the wanted programs per
    multiprocessor."""
    t = {**TUNABLES, **dispatch_table().get(bucket_of({"size": n}), {})}
    block = max(16, min(t["BLOCK_SIZE"], triton.next_power_of_2(n), MAX_PER_THREAD * 32 * t["num_warps"]))
    layout = t["LAYOUT"]
    if (layout == "tile" and triton.cdiv(n, block) > MAX_PROGRAMS) or (layout == "single" and n > SINGLE_MAX):
        layout = "slices"
    stages = 1 if layout == "tile" else max(1, min(t["NUM_STAGES"], SMEM_BUDGET // (4 * block)))
    num_warps = max(1, min(t["num_warps"], block // 128))  # at least 4 floats (16 bytes) per thread
    config = dict(LAYOUT=layout, BLOCK_SIZE=block, NUM_STAGES=stages, num_warps=num_warps)
    return config, t["PROGRAMS_PER_SM"]


def grid_of(n: int, config: dict, programs_cap: int) -> tuple[int, int, int]:
    """(programs, slice length, loop trips). "tile": a program per tile; "single": one program over
    every block; "stride": up to programs_cap programs over the blocks; "slices": equal 64-float-aligned
    slices, one per program."""
    block = config["BLOCK_SIZE"]
    blocks = triton.cdiv(n, block)
    if config["LAYOUT"] == "tile":
        return blocks, block, 1
    if config["LAYOUT"] == "single":
        return 1, n, blocks
    programs = max(1, min(programs_cap, MAX_PROGRAMS, blocks))
    if config["LAYOUT"] == "stride":
        return programs, block, triton.cdiv(blocks, programs)
    slice_len = triton.cdiv(triton.cdiv(n, programs), SLICE_ALIGN) * SLICE_ALIGN
    programs = triton.cdiv(n, slice_len)  # rounding up the slices can leave the last ones empty
    return programs, slice_len, triton.cdiv(slice_len, block)


def partials_width(programs: int) -> int:
    """The final sum's width for a grid of `programs`: a power of two, at least MIN_PARTIALS (a grid of 528
    programs sums 1024 lanes, not MAX_PROGRAMS)."""
    return max(MIN_PARTIALS, triton.next_power_of_2(min(programs, MAX_PROGRAMS)))


def launch_key(x: torch.Tensor, out: torch.Tensor) -> tuple:
    """What a compiled launch depends on beyond the pointers' values: the identity of the tables (DISPATCH and
    DISPATCH_BY_GPU, either replaceable by a probe; two lookups, no call, on the path GPU MODE times), the size
    (the grid and the trip counts come from it; Triton specialises integers on 1 and on multiples of 16), the
    stride, the device, the dtypes and shapes, and whether x and out start on 16-byte boundaries."""
    return (id(DISPATCH), id(DISPATCH_BY_GPU), id(TUNABLES), x.device, x.dtype, x.shape, x.stride(), out.device,
            out.dtype, out.shape, x.data_ptr() % 16 == 0, out.data_ptr() % 16 == 0)


def vector_sum(x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """The sum of x as a 0-dim float32 tensor, written into `out` (any 1-element buffer) if given."""
    if out is None:
        out = torch.empty((), dtype=torch.float32, device=x.device)
    key = launch_key(x, out)
    launcher = _launchers.get(key)
    if launcher is not None:  # a size seen before: the compiled kernel's launcher, nothing else
        launch, tail = launcher
        result = out.view(())
        launch(x, *tail[:2], result, *tail[2:])
        return result
    assert x.dim() == 1 and x.dtype == torch.float32, "x must be a 1-d float32 tensor"
    assert out.numel() == 1 and out.dtype == torch.float32 and out.device == x.device
    out = out.view(())
    n = x.numel()
    if n == 0:
        return out.zero_()
    partials, ticket, sms = _workspace(x.device)
    plan_key = (str(x.device), n, id(DISPATCH), id(DISPATCH_BY_GPU), id(TUNABLES))
    plan = _plans.get(plan_key)
    if plan is None:
        config, per_sm = launch_config(n)
        if config["LAYOUT"] in ("slices", "stride"):
            per_sm = min(per_sm, _resident_per_sm(x, partials, ticket, config, per_sm, sms))
        plan = _plans[plan_key] = (config, *grid_of(n, config, sms * per_sm))
    config, programs, slice_len, iters = plan
    width = partials_width(programs)
    compiled = family_sum_kernel[(programs,)](x, partials, ticket, out, n, slice_len, iters, x.stride(0),
                                              PARTIALS=width, **config)
    launch = _compiled_launcher(compiled, programs)
    values = dict(partial_ptr=partials, ticket_ptr=ticket, n=n, slice_len=slice_len, iters=iters,
                  stride_x=x.stride(0), PARTIALS=width, **config)
    tail = launch_tail(compiled, values)
    if launch is not None and tail is not None:
        _launchers[key] = (launch, tail)
    return out


def launch_tail(compiled, values: dict) -> tuple | None:
    """The compiled launcher's arguments after x and out, in its order: it takes the parameters its source's
    signature names (Triton 3.6: every one, constexprs included, which it skips; 3.2: those not declared
    constexpr), so they are read from there; None where that signature cannot be read (the JIT path stays)."""
    signature = getattr(getattr(compiled, "src", None), "signature", None)
    if not isinstance(signature, dict):
        return None
    names = list(signature)
    if names[:4] != ["x_ptr", "partial_ptr", "ticket_ptr", "out_ptr"] or any(k not in values for k in names[4:]):
        return None
    return tuple(values[k] for k in names[1:3] + names[4:])


def _compiled_launcher(compiled, programs: int):
    """The compiled kernel's launcher for a grid of `programs`, or None where the JIT gave no compiled
    kernel (Triton's interpreter) or the kernel lists parameters we do not pass."""
    if compiled is None or not hasattr(compiled, "run") or not hasattr(compiled, "__getitem__"):
        return None
    try:
        return compiled[(programs, 1, 1)]
    except Exception:  # an older Triton without the grid launcher: keep the JIT path
        return None


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return vector_sum(x)


def custom_kernel(data):
    """GPU MODE's entry point (the packager keeps it as is): the kernel writes straight into the
    leaderboard's uninitialised output buffer, so a call is one launch, with no copy and no allocation."""
    x, output = data
    return vector_sum(x, out=output)
