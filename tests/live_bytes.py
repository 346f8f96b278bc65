"""Host memory counted storage by storage, for bounding what the harness holds on CPU, where
torch.cuda.max_memory_allocated has nothing to say: a TorchDispatchMode counts each storage an op makes
from that op until its last tensor dies, and stands in for harness.memory's peak and reset_peak."""

from __future__ import annotations

import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves


class LiveBytes(TorchDispatchMode):
    """Bytes of CPU storages made under the mode and still alive (`live`), and their most since `reset`."""

    def __init__(self):
        super().__init__()
        self.live = self.peak = 0
        self.holders: dict = {}  # storage key -> [live tensors on it, its bytes]

    def reset(self, device=None) -> None:
        self.peak = self.live

    def peak_bytes(self, device=None) -> int:
        return self.peak

    def _release(self, key: int) -> None:
        holder = self.holders[key]
        holder[0] -= 1
        if holder[0] == 0:
            self.live -= holder[1]
            del self.holders[key]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if not isinstance(t, torch.Tensor) or t.device.type != "cpu":
                continue
            key = t.untyped_storage()._cdata
            if key not in self.holders:
                self.holders[key] = [0, t.untyped_storage().nbytes()]
                self.live += self.holders[key][1]
                self.peak = max(self.peak, self.live)
            self.holders[key][0] += 1
            weakref.finalize(t, self._release, key)
        return out
