"""vectorsum_v2 in one launch, deterministic: per-program partial sums, and the last program to finish
adds them up in a fixed order.

Why: the small GPU MODE sizes (1.6M floats, 6.5 MB: a 1.5 us floor on an H200) are launch-bound, so
the starter's separate zeroing launch and its 264 order-dependent atomics cost more than the data.
Here one launch does everything: a persistent grid (a few programs per multiprocessor) strides over
the vector with wide loads, each program stores its float32 partial, takes a ticket from an atomic
counter, and the program holding the last ticket reduces the partials in program order, writes the
result (the output needs no zeroing) and resets the counter for the next call. No host sync, and
repeated calls are bitwise equal.

Bytes: 4 * size read, 4 written (plus 4 bytes per program of partials, which stay in L2).
"""

import torch
import triton
import triton.language as tl

TUNABLES = {"BLOCK_SIZE": 4096, "PROGRAMS_PER_SM": 4, "num_warps": 8}
MAX_PROGRAMS = 2048  # partials buffer size; a power of two for the final tl.arange

_workspaces: dict = {}


@triton.jit
def single_pass_sum_kernel(x_ptr, partial_ptr, ticket_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr,
                           MAX_PROGRAMS: tl.constexpr):
    pid = tl.program_id(0)
    num_programs = tl.num_programs(0)
    acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for start in range(pid * BLOCK_SIZE, n, num_programs * BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(partial_ptr + pid, tl.sum(acc, axis=0))
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


def vector_sum(x: torch.Tensor) -> torch.Tensor:
    assert x.dim() == 1 and x.dtype == torch.float32, "x must be a 1-d float32 tensor"
    x = x.contiguous()
    partials, ticket, sms = _workspace(x.device)
    out = torch.empty((), dtype=torch.float32, device=x.device)
    block = TUNABLES["BLOCK_SIZE"]
    programs = max(1, min(triton.cdiv(x.numel(), block), sms * TUNABLES["PROGRAMS_PER_SM"], MAX_PROGRAMS))
    single_pass_sum_kernel[(programs,)](x, partials, ticket, out, x.numel(), BLOCK_SIZE=block,
                                        MAX_PROGRAMS=MAX_PROGRAMS, num_warps=TUNABLES["num_warps"])
    return out


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return vector_sum(x)
