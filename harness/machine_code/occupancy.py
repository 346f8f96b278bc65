"""How many blocks of a kernel fit on one multiprocessor, and which resource stops the next one.

Per-SM limits by compute capability, from NVIDIA's CUDA C++ Programming Guide (table of technical
specifications per compute capability). Registers are allocated per warp in units of 256.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SmLimits:
    registers: int = 65536
    threads: int = 2048
    blocks: int = 32
    shared_bytes: int = 233472  # 228 KB per SM
    shared_reserved_per_block: int = 1024
    register_unit: int = 256  # registers per warp are rounded up to this


LIMITS = {
    80: SmLimits(shared_bytes=167936),  # A100: 164 KB
    86: SmLimits(threads=1536, blocks=16, shared_bytes=102400),
    89: SmLimits(threads=1536, blocks=24, shared_bytes=102400),
    90: SmLimits(),  # H100, H200
    100: SmLimits(),  # B200
}


@dataclass(frozen=True)
class Occupancy:
    blocks: int  # resident blocks per SM
    limiter: str  # registers | threads | blocks | shared memory
    warps: int  # resident warps per SM

    def text(self) -> str:
        return f"{self.blocks} ({self.limiter})"


def occupancy(capability: int, registers: int, num_warps: int, shared_bytes: int) -> Occupancy:
    limits = LIMITS.get(capability)
    if limits is None:
        raise KeyError(f"no SM limits for compute capability {capability} (known: {sorted(LIMITS)})")
    per_warp = -(-registers * 32 // limits.register_unit) * limits.register_unit
    by = {  # on a tie the first named is reported
        "threads": limits.threads // (32 * num_warps),
        "blocks": limits.blocks,
        "registers": (limits.registers // per_warp) // num_warps if per_warp else limits.blocks,
        "shared memory": limits.shared_bytes // (shared_bytes + limits.shared_reserved_per_block),
    }
    limiter = min(by, key=lambda k: by[k])
    blocks = max(0, by[limiter])
    return Occupancy(blocks, limiter, blocks * num_warps)
