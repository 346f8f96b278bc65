"""vectorsum_v2 in one launch, balanced slices and pipelined loads; deterministic like triton_single_pass.

triton_single_pass runs 4 programs per multiprocessor that stride over the vector in 4096-float
blocks, each waiting on one block's loads before issuing the next, and at 52,428,800 floats some
programs take 25 blocks and others 24. Here:
- PROGRAMS_PER_SM * SMs programs (fewer if fewer fit on a multiprocessor at once: the wrapper reads
  the compiled kernel's registers and shared memory) each own one contiguous, equal slice of the
  vector (a multiple of 64 floats), so all of them finish together;
- the loop over a slice is a tl.range with NUM_STAGES stages: Triton issues the loads as
  asynchronous copies into shared memory, NUM_STAGES - 1 tiles (3 * 16 KB) ahead of the tile being
  added, so a multiprocessor keeps up to 192 KB in flight, more than DRAM latency at full bandwidth
  needs (a register double buffer does not survive ptxas, which reorders the adds before the loads).
Then, as in triton_single_pass, each program stores its float32 partial, takes a ticket from an
atomic counter, and the holder of the last ticket adds the partials in program order (a tree in
registers), writes the result (the output needs no zeroing) and resets the counter for the next call.
No host sync; repeated calls are bitwise equal.

Bytes: 4 * size read, 4 written (plus 4 bytes per program of partials, which stay in L2).
"""

import torch
import triton
import triton.language as tl

TUNABLES = {"BLOCK_SIZE": 4096, "NUM_STAGES": 4, "PROGRAMS_PER_SM": 4, "num_warps": 8}
TUNABLE_CHOICES = {"BLOCK_SIZE": [2048, 4096, 8192], "NUM_STAGES": [1, 2, 3, 4, 5], "PROGRAMS_PER_SM": [1, 2, 3, 4, 6],
                   "num_warps": [4, 8, 16]}
MAX_PROGRAMS = 2048  # partials buffer size; a power of two for the final tl.arange
SLICE_ALIGN = 64  # slice boundaries on 256-byte multiples keep every program's loads aligned

_workspaces: dict = {}
_resident: dict = {}


@triton.jit
def balanced_sum_kernel(x_ptr, partial_ptr, ticket_ptr, out_ptr, n, slice_len, iters, stride_x,
                        BLOCK_SIZE: tl.constexpr, NUM_STAGES: tl.constexpr, MAX_PROGRAMS: tl.constexpr):
    pid = tl.program_id(0)
    num_programs = tl.num_programs(0)
    start = pid.to(tl.int64) * slice_len
    end = tl.minimum(start + slice_len, n)
    # tl.range with NUM_STAGES > 1: Triton turns the loads into asynchronous copies to shared memory,
    # NUM_STAGES - 1 tiles ahead of the one being added (those copies carry no L2 hint; the evict_first
    # hint applies with NUM_STAGES = 1, plain loads, where ptxas keeps only a few of them in flight).
    acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for i in tl.range(0, iters, num_stages=NUM_STAGES):
        offs = start + i * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(x_ptr + offs * stride_x, mask=offs < end, other=0.0, eviction_policy="evict_first")

    tl.store(partial_ptr + pid, tl.sum(acc, axis=0))
    tl.debug_barrier()  # every thread's part of the partial is written before the ticket is taken
    # acq_rel: our partial is visible before the ticket; the last holder sees every partial
    ticket = tl.atomic_add(ticket_ptr, 1, sem="acq_rel")
    if ticket == num_programs - 1:
        idx = tl.arange(0, MAX_PROGRAMS)
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


def _resident_per_sm(x: torch.Tensor, partials: torch.Tensor, ticket: torch.Tensor) -> int:
    """How many programs fit on one multiprocessor at once (registers, threads, shared memory), from
    the compiled kernel, as in Triton's fused-softmax tutorial. The slices are balanced only if every
    program is resident: a second wave would double the time. Compiled once per device and config."""
    block, warps = TUNABLES["BLOCK_SIZE"], TUNABLES["num_warps"]
    key = (str(x.device), block, warps, TUNABLES["NUM_STAGES"])
    if key not in _resident:
        if x.device.type != "cuda":
            _resident[key] = TUNABLES["PROGRAMS_PER_SM"]
        else:
            kernel = balanced_sum_kernel.warmup(x, partials, ticket, partials, 1 << 24, 1 << 16, 2, 1,
                                                BLOCK_SIZE=block, NUM_STAGES=TUNABLES["NUM_STAGES"],
                                                MAX_PROGRAMS=MAX_PROGRAMS, num_warps=warps, grid=(1,))
            kernel._init_handles()
            props = triton.runtime.driver.active.utils.get_device_properties(x.device.index)
            regs_per_warp = triton.cdiv(max(kernel.n_regs, 1) * 32, 256) * 256
            fit = [props["max_num_regs"] // (regs_per_warp * warps), 2048 // (32 * warps)]
            if kernel.metadata.shared:  # each program also holds 1 KB reserved by the system
                fit.append((props["max_shared_mem"] + 1024) // (kernel.metadata.shared + 1024))
            _resident[key] = max(1, min(fit))
    return _resident[key]


def launch_config(n: int, sms: int, per_sm: int) -> tuple[int, int, int]:
    """(programs, slice length, loop trips): equal 64-float-aligned slices, one per program."""
    block = TUNABLES["BLOCK_SIZE"]
    programs = max(1, min(sms * min(TUNABLES["PROGRAMS_PER_SM"], per_sm), MAX_PROGRAMS, triton.cdiv(n, block)))
    slice_len = triton.cdiv(triton.cdiv(n, programs), SLICE_ALIGN) * SLICE_ALIGN
    programs = triton.cdiv(n, slice_len)  # rounding up the slices can leave the last ones empty
    return programs, slice_len, triton.cdiv(slice_len, block)


def vector_sum(x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """The sum of x as a 0-dim float32 tensor, written into `out` (any 1-element buffer) if given."""
    assert x.dim() == 1 and x.dtype == torch.float32, "x must be a 1-d float32 tensor"
    if out is None:
        out = torch.empty((), dtype=torch.float32, device=x.device)
    assert out.numel() == 1 and out.dtype == torch.float32 and out.device == x.device
    out = out.view(())
    n = x.numel()
    if n == 0:
        return out.zero_()
    partials, ticket, sms = _workspace(x.device)
    programs, slice_len, iters = launch_config(n, sms, _resident_per_sm(x, partials, ticket))
    balanced_sum_kernel[(programs,)](x, partials, ticket, out, n, slice_len, iters, x.stride(0),
                                     BLOCK_SIZE=TUNABLES["BLOCK_SIZE"], NUM_STAGES=TUNABLES["NUM_STAGES"],
                                     MAX_PROGRAMS=MAX_PROGRAMS, num_warps=TUNABLES["num_warps"])
    return out


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return vector_sum(x)


def custom_kernel(data):
    """GPU MODE's entry point (the packager keeps it as is): the kernel writes straight into the
    leaderboard's uninitialised output buffer, so a call is one launch, with no copy and no allocation."""
    x, output = data
    return vector_sum(x, out=output)
