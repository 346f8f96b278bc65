"""What a cubin's machine code says about memory: resources (registers, spills, shared memory), the width of
each global load and store, and how many bytes one thread has in flight before it first uses a loaded value.

The last is the memory-level parallelism a memory-bound kernel lives on (Little's law: bandwidth x latency
bytes must be in flight per GPU). It is read from the instruction stream in order: a load is outstanding
from its issue until the first instruction that reads one of its destination registers; an asynchronous
copy (cp.async) from its issue until a DEPBAR wait leaves fewer committed groups outstanding than its own.
Loops are read as straight-line code, once, so a loop that keeps more in flight across iterations than its
prologue does is under-counted. Bulk tensor (TMA) copies are counted, not sized.

Read the same way, the load rounds: the first global load opens one, and a load that goes out only after
the thread has waited for an earlier load's data opens the next. A call of a few microseconds pays about
one memory latency (most of a microsecond after the L2 is flushed) per round, so a weight that ptxas loads
only once the row has arrived costs a second one.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

GLOBAL_LOADS = ("LDG",)
GLOBAL_STORES = ("STG", "RED", "ATOMG")
ASYNC_COPIES = ("LDGSTS",)  # cp.async: global -> shared, in flight across pipeline stages
TMA = ("UTMALDG", "UBLKCP")  # the tensor memory accelerator's bulk copies

_LINE = re.compile(r"/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?(?P<op>[A-Z][A-Z0-9_.]*)\s*(?P<args>[^;]*);")
_REG = re.compile(r"\bR(\d+)\b")
_WIDTH = {".128": 16, ".64": 8, ".U16": 2, ".S16": 2, ".U8": 1, ".S8": 1}


class SassError(Exception):
    """The disassembler is missing or failed; the message names the tool."""


def tool(name: str) -> str:
    """nvdisasm / cuobjdump: Triton's own copy first (it matches the ptxas that built the cubin), then PATH."""
    try:
        import triton.backends.nvidia as nvidia
        bundled = Path(nvidia.__file__).parent / "bin" / name
        if bundled.is_file():
            return str(bundled)
    except ImportError:
        pass
    found = shutil.which(name)
    if not found:
        raise SassError(f"{name} not found (it ships with Triton's NVIDIA backend and with the CUDA toolkit)")
    return found


def run_tool(cubin: bytes, name: str, *flags: str) -> str:
    """Output of nvdisasm or cuobjdump with `flags` on a cubin."""
    return _run_on_cubin(cubin, [tool(name), *flags])


def _run_on_cubin(cubin: bytes, args: list[str]) -> str:
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        done = subprocess.run([*args, f.name], capture_output=True, text=True)
    if done.returncode != 0:
        raise SassError(f"{Path(args[0]).name} failed: {(done.stderr or done.stdout).strip()[:200]}")
    return done.stdout


def disassemble(cubin: bytes) -> str:
    return _run_on_cubin(cubin, [tool("nvdisasm"), "-c"])


@dataclass(frozen=True)
class Resources:
    registers: int
    spill_bytes: int  # per thread: the stack frame (where ptxas puts spills) plus local memory
    shared_bytes: int  # static shared memory in the cubin (Triton's dynamic share is in its metadata)


def resources(cubin: bytes) -> Resources:
    text = _run_on_cubin(cubin, [tool("cuobjdump"), "-res-usage"])
    found = {k: int(v) for k, v in re.findall(r"\b(REG|STACK|LOCAL|SHARED):(\d+)", text)}
    if "REG" not in found:
        raise SassError(f"cuobjdump -res-usage printed no register count: {text.strip()[:200]}")
    return Resources(found["REG"], found.get("STACK", 0) + found.get("LOCAL", 0), found.get("SHARED", 0))


@dataclass
class MemoryProfile:
    loads: Counter = field(default_factory=Counter)  # bytes per access -> instructions
    stores: Counter = field(default_factory=Counter)
    async_copies: Counter = field(default_factory=Counter)
    tma: int = 0
    max_bytes_in_flight: int = 0  # per thread, straight-line reading (see the module docstring)
    load_rounds: int = 0  # global-load round trips a thread waits through one after another (below)

    @staticmethod
    def mix(counter: Counter) -> str:
        """'4x16B 1x4B': instruction count per access width, widest first."""
        return " ".join(f"{n}x{w}B" for w, n in sorted(counter.items(), reverse=True)) or "-"


def _width(op: str) -> int:
    for suffix, size in _WIDTH.items():
        if suffix in op:
            return size
    return 4


def _registers(text: str, width: int = 4) -> set[int]:
    """Registers an operand list names; a 64-bit address `R32.64` is the pair R32, R33."""
    regs = set()
    for m in _REG.finditer(text):
        base = int(m.group(1))
        pair = text[m.end():m.end() + 3] == ".64"
        regs.update(range(base, base + (2 if pair else 1)))
    return regs


def memory_profile(sass: str) -> MemoryProfile:
    profile = MemoryProfile()
    pending: dict[int, int] = {}  # register -> the load (by index) that fills it
    in_flight: dict[int, int] = {}  # load index -> bytes
    groups: list[int] = []  # committed cp.async groups, oldest first: bytes each
    open_group = 0  # cp.async bytes issued since the last commit
    waited = True  # since the current round's first load, has the thread waited on a load?
    for i, m in enumerate(_LINE.finditer(sass)):
        op, args = m.group("op"), m.group("args")
        base = op.split(".")[0]
        operands = [a.strip() for a in args.split(",")] if args.strip() else []
        sources = " ".join(operands if base in GLOBAL_STORES or not operands else operands[1:])
        for load in {pending.pop(r) for r in _registers(sources) if r in pending}:
            in_flight.pop(load, None)
            waited = True
        if base in GLOBAL_LOADS:
            if waited:  # issued only after an earlier load's data came back: one more latency in series
                profile.load_rounds += 1
                waited = False
            width = _width(op)
            profile.loads[width] += 1
            first = _registers(operands[0]) if operands else set()
            if first:
                start = min(first)
                for r in range(start, start + max(1, width // 4)):
                    pending[r] = i
                in_flight[i] = width
        elif base in GLOBAL_STORES:
            profile.stores[_width(op)] += 1
        elif base in ASYNC_COPIES:
            profile.async_copies[_width(op)] += 1
            open_group += _width(op)
        elif base == "LDGDEPBAR":
            groups.append(open_group)
            open_group = 0
        elif base == "DEPBAR":
            wait = re.search(r"SB0\s*,\s*(0x[0-9a-f]+|\d+)", args)
            if wait:
                del groups[:max(0, len(groups) - int(wait.group(1), 0))]
        elif base in TMA:
            profile.tma += 1
        total = sum(in_flight.values()) + sum(groups) + open_group
        profile.max_bytes_in_flight = max(profile.max_bytes_in_flight, total)
    return profile


_MMA = re.compile(r"\b((?:HGMMA|HMMA|IMMA|QGMMA|IGMMA|BGMMA|DMMA)(?:\.\w+)?)")


def tensor_core_ops(sass: str) -> Counter:
    """Tensor-core instructions by kind: HGMMA (Hopper's warpgroup wgmma) or HMMA (the older per-warp
    mma.sync), with their first shape suffix."""
    return Counter(m.group(1) for m in _MMA.finditer(sass))


def mix_ops(counter: Counter) -> str:
    return " ".join(f"{n}x{op}" for op, n in counter.most_common()) or "-"
