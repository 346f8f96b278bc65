"""Cross-entropy (forward) for every shape: one kernel in two forms, a dispatch table from shape bucket to
launch configuration.

The loss runs over vocabularies of 32000 to 256000 logits for 1 to 32768 tokens. One program per row
leaves most of the 132 multiprocessors idle below a few hundred rows, and a program per 8K chunk is what
measured fastest at 4096 x 128256; so VARIANT picks, per bucket of (vocab_size, batch_size):
- "split": each row cut into equal 64-aligned chunks of at most BLOCK_V logits, one program per chunk,
  one masked load, the chunk's max m and sum s of exp(x - m) stored as a pair; the program that
  finishes a row last (a per-row integer ticket) merges that row's pairs in chunk order into its
  log-sum-exp and stores the row loss. BLOCK_V = 8192 at 8 warps is triton_split's configuration; a
  smaller BLOCK_V spreads decode-sized inputs (one row of 256000 logits: 32 chunks of 8000) over more
  multiprocessors.
- "loop": one program per row, an online pass over BLOCK_V blocks (running max, and per-lane sums of
  exp rescaled when the max grows: one block reduction per block, not two). BLOCK_V = 2048 at 8 warps is
  triton_starter's configuration.
In both, the program that finishes the last row (a global ticket) adds the row losses in row order and
writes the mean: one launch, no host sync, and the result does not depend on which program finishes
first (bitwise deterministic; the tickets are integer atomics, reset by the programs that read them).
Rows whose length is not a multiple of 16 bytes (GPT-2's 50257 logits) start at unaligned addresses,
where Triton falls back to 2-byte loads; for a contiguous input (ALIGN > 1) each chunk is read as an
aligned body (16-byte loads) plus a masked head and tail of under 16 bytes each.
DISPATCH (written by `ksuite optimize`, from timings on the workload's tuning shapes only) maps each
bucket to VARIANT, BLOCK_V and num_warps; a bucket it does not name runs TUNABLES. launch_config makes
the entry safe for the exact shape: blocks no wider than the row, at most MAX_PER_THREAD float32 values
per thread (the loop form holds a block and its sums: half that), at most MAX_CHUNKS chunks a row.

Bytes: logits read once, int64 targets read once, one scalar written: M * V * esize + 8 * M + esize,
plus 8 bytes of partials per chunk and 4 per row (L2-resident, negligible next to V * esize).
"""

import functools
import re

import torch
import torch.nn as nn
import triton
import triton.language as tl

TUNABLES = {"VARIANT": "split", "BLOCK_V": 8192, "num_warps": 8}
TUNABLE_CHOICES = {"VARIANT": ["split", "loop"], "BLOCK_V": [1024, 2048, 4096, 8192, 16384], "num_warps": [4, 8, 16]}
MAX_PER_THREAD = 64  # float32 logits a thread may hold
MAX_CHUNKS = 1024  # chunks per row in "split"; beyond, the loop form
CHUNK_ALIGN = 64  # chunk boundaries on 64-logit multiples keep each program's loads aligned
# Shape buckets: upper edges per size constant, ascending (above the last edge: the top bucket).
BUCKETS = {"vocab_size": [32768, 65536, 131072], "batch_size": [64, 512, 4096]}
# ksuite optimize table: run 20261202-010533 on NVIDIA H200, from the tuning shapes only;
# ksuite optimize table: 16 of 16 buckets tuned at their own shapes (5 at probe shapes), the rest copy their nearest
DISPATCH = {
    'vocab_size<=32768,batch_size<=64': {'VARIANT': 'split', 'BLOCK_V': 2048, 'num_warps': 8},
    'vocab_size<=32768,batch_size<=512': {'VARIANT': 'split', 'BLOCK_V': 8192, 'num_warps': 8},
    'vocab_size<=32768,batch_size<=4096': {'VARIANT': 'split', 'BLOCK_V': 8192, 'num_warps': 8},
    'vocab_size<=32768,batch_size>4096': {'VARIANT': 'split', 'BLOCK_V': 8192, 'num_warps': 8},
    'vocab_size<=65536,batch_size<=64': {'VARIANT': 'split', 'BLOCK_V': 8192, 'num_warps': 8},
    'vocab_size<=65536,batch_size<=512': {'VARIANT': 'loop', 'BLOCK_V': 4096, 'num_warps': 8},
    'vocab_size<=65536,batch_size<=4096': {'VARIANT': 'loop', 'BLOCK_V': 2048, 'num_warps': 8},
    'vocab_size<=65536,batch_size>4096': {'VARIANT': 'loop', 'BLOCK_V': 4096, 'num_warps': 8},
    'vocab_size<=131072,batch_size<=64': {'VARIANT': 'split', 'BLOCK_V': 8192, 'num_warps': 8},
    'vocab_size<=131072,batch_size<=512': {'VARIANT': 'split', 'BLOCK_V': 8192, 'num_warps': 8},
    'vocab_size<=131072,batch_size<=4096': {'VARIANT': 'split', 'BLOCK_V': 8192, 'num_warps': 4},
    'vocab_size<=131072,batch_size>4096': {'VARIANT': 'loop', 'BLOCK_V': 4096, 'num_warps': 4},
    'vocab_size>131072,batch_size<=64': {'VARIANT': 'split', 'BLOCK_V': 8192, 'num_warps': 8},
    'vocab_size>131072,batch_size<=512': {'VARIANT': 'split', 'BLOCK_V': 8192, 'num_warps': 8},
    'vocab_size>131072,batch_size<=4096': {'VARIANT': 'split', 'BLOCK_V': 16384, 'num_warps': 8},
    'vocab_size>131072,batch_size>4096': {'VARIANT': 'loop', 'BLOCK_V': 8192, 'num_warps': 4},
}
# DISPATCH is the table of the GPU named here; `ksuite optimize` on another GPU writes that GPU's own table into
# DISPATCH_BY_GPU (its results folder name -> table), and dispatch_table() runs it there.
DISPATCH_GPU = "nvidia-h200"
DISPATCH_BY_GPU = {}

_workspaces: dict = {}


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
def finish_row(lse, row, row_ptr, targets_ptr, stride_t, stride_lv, row_loss_ptr, ticket_ptr, out_ptr, M,
               BLOCK_R: tl.constexpr):
    """Store this row's loss; the last row to finish adds all row losses in order and writes the mean."""
    target = tl.load(targets_ptr + row.to(tl.int64) * stride_t)
    target_logit = tl.load(row_ptr + target * stride_lv).to(tl.float32)
    tl.store(row_loss_ptr + row, lse - target_logit)
    tl.debug_barrier()
    ticket = tl.atomic_add(ticket_ptr, 1, sem="acq_rel")  # our loss is visible before the ticket
    if ticket == M - 1:
        acc = tl.zeros([BLOCK_R], dtype=tl.float32)
        for start in range(0, M, BLOCK_R):
            offs = start + tl.arange(0, BLOCK_R)
            acc += tl.load(row_loss_ptr + offs, mask=offs < M, other=0.0, volatile=True)
        tl.store(out_ptr, (tl.sum(acc, axis=0) / M).to(out_ptr.dtype.element_ty))
        tl.atomic_xchg(ticket_ptr, 0)  # ready for the next call


@triton.jit
def chunk_lse(logits_ptr, row, col_lo, n, stride_lm, stride_lv, BLOCK_V: tl.constexpr, ONE_BLOCK: tl.constexpr,
              ALIGN: tl.constexpr):
    """(max m, sum of exp(x - m)) over logits [col_lo, col_lo + n) of one row, in float32. ALIGN > 1
    (contiguous logits): an ALIGN-aligned body [a0, a0 + body), indexed from logits_ptr so its loads are
    16 bytes wide, plus a head and a tail of under ALIGN logits each; ALIGN = 1: the body is the span."""
    if ALIGN > 1:
        lo = row.to(tl.int64) * stride_lm + col_lo
        hi = lo + n
        a0 = tl.multiple_of((lo + ALIGN - 1) // ALIGN * ALIGN, ALIGN)
        body = tl.multiple_of(tl.maximum(hi // ALIGN * ALIGN - a0, 0), ALIGN).to(tl.int32)
        base = logits_ptr
        sx = 1
    else:
        a0 = col_lo
        body = n
        base = logits_ptr + row.to(tl.int64) * stride_lm
        sx = stride_lv
    if ONE_BLOCK:  # the whole body in one masked load
        offs_v = tl.arange(0, BLOCK_V)
        x = tl.load(base + (a0 + offs_v) * sx, mask=offs_v < body, other=float("-inf"),
                    eviction_policy="evict_first").to(tl.float32)
        m = tl.max(x, axis=0)
        s = tl.sum(tl.exp(x - tl.where(m == float("-inf"), 0.0, m)), axis=0)  # an empty body: s = 0
    else:  # online: m the running max, acc the per-lane sums of exp(x - m), rescaled when m grows
        m = float("-inf")
        acc = tl.zeros([BLOCK_V], dtype=tl.float32)
        for start in range(0, body, BLOCK_V):
            offs_v = start + tl.arange(0, BLOCK_V)
            x = tl.load(base + (a0 + offs_v) * sx, mask=offs_v < body, other=float("-inf"),
                        eviction_policy="evict_first").to(tl.float32)
            m_new = tl.maximum(m, tl.max(x, axis=0))
            m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
            acc = acc * tl.exp(m - m_use) + tl.exp(x - m_use)
            m = m_new
        s = tl.sum(acc, axis=0)
    if ALIGN > 1:
        e = tl.arange(0, 2 * ALIGN)
        head = e < ALIGN
        g = tl.where(head, lo + e, a0 + body + (e - ALIGN))
        x_e = tl.load(logits_ptr + g, mask=g < tl.where(head, tl.minimum(a0, hi), hi),
                      other=float("-inf")).to(tl.float32)
        m_all = tl.maximum(m, tl.max(x_e, axis=0))  # finite: every chunk holds a logit
        s = s * tl.exp(m - m_all) + tl.sum(tl.exp(x_e - m_all), axis=0)
        m = m_all
    return m, s


@triton.jit
def cross_entropy_kernel(logits_ptr, targets_ptr, part_ptr, row_ticket_ptr, row_loss_ptr, ticket_ptr, out_ptr,
                         M, V, chunk, stride_lm, stride_lv, stride_t,
                         N_CHUNKS: tl.constexpr, BLOCK_V: tl.constexpr, ONE_BLOCK: tl.constexpr,
                         BLOCK_C: tl.constexpr, BLOCK_R: tl.constexpr, ALIGN: tl.constexpr):
    pid = tl.program_id(0)
    row = pid // N_CHUNKS
    c = pid % N_CHUNKS
    row_ptr = logits_ptr + row.to(tl.int64) * stride_lm
    col_lo = c * chunk
    m, s = chunk_lse(logits_ptr, row, col_lo, tl.minimum(chunk, V - col_lo), stride_lm, stride_lv, BLOCK_V,
                     ONE_BLOCK, ALIGN)

    if N_CHUNKS == 1:
        finish_row(m + tl.log(s), row, row_ptr, targets_ptr, stride_t, stride_lv, row_loss_ptr, ticket_ptr,
                   out_ptr, M, BLOCK_R)
    else:
        tl.store(part_ptr + pid, m)
        tl.store(part_ptr + M * N_CHUNKS + pid, s)
        tl.debug_barrier()
        done = tl.atomic_add(row_ticket_ptr + row, 1, sem="acq_rel")  # our pair is visible before it
        if done == N_CHUNKS - 1:
            # Merge the row's pairs in chunk order: lse = M + log(sum_i s_i * exp(m_i - M)).
            idx = tl.arange(0, BLOCK_C)
            part = row * N_CHUNKS + idx
            pm = tl.load(part_ptr + part, mask=idx < N_CHUNKS, other=float("-inf"), volatile=True)
            ps = tl.load(part_ptr + M * N_CHUNKS + part, mask=idx < N_CHUNKS, other=0.0, volatile=True)
            m_row = tl.max(pm, axis=0)
            s_row = tl.sum(ps * tl.exp(pm - m_row), axis=0)
            tl.store(row_ticket_ptr + row, 0)  # ready for the next call
            finish_row(m_row + tl.log(s_row), row, row_ptr, targets_ptr, stride_t, stride_lv, row_loss_ptr,
                       ticket_ptr, out_ptr, M, BLOCK_R)


def _counters(device: torch.device, rows: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Zeroed per-row tickets (at least `rows`) and the global ticket, allocated once per device and
    grown when a call has more rows; the kernel leaves them zeroed."""
    key = str(device)
    row_tickets, ticket = _workspaces.get(key, (None, None))
    if row_tickets is None or row_tickets.numel() < rows:
        row_tickets = torch.zeros(max(rows, 1024), dtype=torch.int32, device=device)
        ticket = ticket if ticket is not None else torch.zeros(1, dtype=torch.int32, device=device)
        _workspaces[key] = (row_tickets, ticket)
    return row_tickets, ticket


def launch_config(M: int, V: int) -> dict:
    """The bucket's tunables, made safe for this exact shape: "split" chunks equal, 64-aligned, none
    empty, at most BLOCK_V and MAX_PER_THREAD logits a thread, at most MAX_CHUNKS a row (else the loop
    form, whose block holds at most half as many)."""
    t = {**TUNABLES, **dispatch_table().get(bucket_of({"vocab_size": V, "batch_size": M}), {})}
    num_warps = t["num_warps"]
    capacity = MAX_PER_THREAD * 32 * num_warps
    block_v = min(t["BLOCK_V"], triton.next_power_of_2(V), capacity)
    n_chunks = triton.cdiv(V, block_v)
    if t["VARIANT"] == "split" and n_chunks <= MAX_CHUNKS:
        chunk = triton.cdiv(triton.cdiv(V, n_chunks), CHUNK_ALIGN) * CHUNK_ALIGN if n_chunks > 1 else V
        n_chunks = triton.cdiv(V, chunk)
        block_v, one_block = triton.next_power_of_2(chunk), True
    else:
        chunk, n_chunks, block_v, one_block = V, 1, min(block_v, capacity // 2), False
    block_r = min(triton.next_power_of_2(M), 32 * num_warps * 16)
    return dict(chunk=chunk, N_CHUNKS=n_chunks, BLOCK_V=block_v, ONE_BLOCK=one_block,
                BLOCK_C=triton.next_power_of_2(n_chunks), BLOCK_R=block_r, num_warps=num_warps)


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    assert logits.dim() == 2 and logits.is_floating_point(), "logits must be [rows, vocab] floats"
    M, V = logits.shape
    assert targets.shape == (M,) and targets.dtype == torch.int64, "targets must be int64 [rows]"
    assert targets.device == logits.device
    assert M > 0 and V > 0
    # Precondition (not checked, a check would synchronise): 0 <= targets < V.
    config = launch_config(M, V)
    chunk = config.pop("chunk")
    n_chunks = config["N_CHUNKS"]
    # Rows of contiguous logits that start off 16-byte boundaries: aligned bodies.
    esize = logits.element_size()
    align = 16 // esize if logits.is_contiguous() and (V * esize) % 16 else 1
    row_tickets, ticket = _counters(logits.device, M)
    part = torch.empty((2 * M * n_chunks,), device=logits.device, dtype=torch.float32)  # maxes, then sums
    row_loss = torch.empty((M,), device=logits.device, dtype=torch.float32)
    out = torch.empty((), device=logits.device, dtype=logits.dtype)
    cross_entropy_kernel[(M * n_chunks,)](
        logits, targets, part, row_tickets, row_loss, ticket, out,
        M, V, chunk, logits.stride(0), logits.stride(1), targets.stride(0), ALIGN=align, **config)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, targets):
        return cross_entropy(logits, targets)
