"""Where the bytes of a candidate's output came from, during one watched call (see dispatch_check.watch).

A file can launch a do-nothing kernel of its own and let torch compute the answer: it launched a kernel,
so counting launches passes it. Provenance closes that: per storage (keyed by its device address), the
set of what wrote its bytes. A launch of the candidate's kernel (Triton or extension) that changed a
storage's bytes tags it KERNEL, unless the new bytes are a plain copy of another argument of that launch,
which then passes on that argument's tags (a copy kernel does no work). Aten ops: allocations and fills
make bytes constant (no tags); copies and casts pass tags on; views write nothing; any other op is
kernel work when one of its inputs is, else it is torch's own (tagged with the op's name). An output
tagged with torch ops and not KERNEL was computed by torch from the inputs and parameters alone.
"""

from __future__ import annotations

import torch
from torch.utils._pytree import tree_leaves

KERNEL = "kernel"
FRESH_OPS = {  # new, constant bytes: nothing computed them
    "aten::empty", "aten::empty_like", "aten::empty_strided", "aten::new_empty", "aten::new_empty_strided",
    "aten::zeros", "aten::zeros_like", "aten::new_zeros", "aten::ones", "aten::ones_like", "aten::new_ones",
    "aten::full", "aten::full_like", "aten::new_full", "aten::fill_", "aten::zero_", "aten::arange",
    "aten::scalar_tensor", "aten::lift_fresh", "aten::resize_", "aten::set_",
}
COPY_OPS = {"aten::clone", "aten::contiguous", "aten::_to_copy", "aten::copy_", "aten::_copy_from",
            "aten::_copy_from_and_resize", "aten::lift_fresh_copy", "aten::to"}


def key(t: torch.Tensor):
    """Which memory a tensor's bytes live in: (device, storage base address); None for empty storage."""
    try:
        storage = t.untyped_storage()
        return (t.device.type, t.device.index, storage.data_ptr()) if storage.nbytes() else None
    except (RuntimeError, NotImplementedError):  # sparse, meta, or otherwise storage-less
        return None


def tags_of(tags: dict, tensors) -> set:
    return set().union(*(tags.get(key(t), ()) for t in tensors))


def _raw_bytes(t: torch.Tensor) -> torch.Tensor:
    return torch.empty(0, dtype=torch.uint8, device=t.device).set_(t.untyped_storage())


def launch_tensors(args, kwargs) -> list:
    """Tensors a launch can write: tensor arguments, in lists, or the base of a TMA descriptor."""
    found = []
    for a in tree_leaves((list(args), dict(kwargs))):
        if isinstance(a, torch.Tensor):
            found.append(a)
        elif isinstance(getattr(a, "base", None), torch.Tensor):
            found.append(a.base)
    return found


def before_launch(tags: dict, tensors: list) -> dict:
    """Raw bytes of every argument storage not yet known to hold kernel work (one copy per storage)."""
    snaps = {}
    for t in tensors:
        k = key(t)
        if k is not None and k not in snaps and KERNEL not in tags.get(k, ()):
            snaps[k] = (t, _raw_bytes(t).clone())
    return snaps


def after_launch(tags: dict, snaps: dict, result=None) -> None:
    """Storages whose bytes changed were written by the kernel, and what an extension returns is its work;
    a byte-for-byte copy of an unchanged argument carries that argument's tags instead."""
    now = {k: _raw_bytes(t) for k, (t, _) in snaps.items()}
    written = [k for k, (_, before) in snaps.items() if not torch.equal(now[k], before)]
    sources = [k for k in snaps if k not in written]
    for k in written:
        source = next((s for s in sources if now[s].numel() == now[k].numel() and torch.equal(now[s], now[k])),
                      None)
        tags[k] = set(tags.get(source, ())) if source else tags.get(k, set()) | {KERNEL}
    for t in tree_leaves(result):
        k = key(t) if isinstance(t, torch.Tensor) else None
        if k is not None and k not in snaps:
            tags[k] = tags.get(k, set()) | {KERNEL}


def _written_args(func, args, kwargs) -> tuple[list, list]:
    """(arguments the op writes in place, out= arguments), from its schema."""
    inplace, outs = [], []
    for i, a in enumerate(func._schema.arguments):
        if a.alias_info is not None and a.alias_info.is_write:
            v = args[i] if i < len(args) else kwargs.get(a.name)
            if isinstance(v, torch.Tensor):
                (outs if a.is_out else inplace).append(v)
    return inplace, outs


def _whole(t: torch.Tensor) -> bool:
    return t.numel() * t.element_size() >= t.untyped_storage().nbytes()


def track(tags: dict, func, args, kwargs, out, own: bool = False, writes_nothing: bool = False) -> None:
    """Tags of what one dispatched op wrote. `own`: an op of the candidate's extension (its work);
    `writes_nothing`: a view or a size query."""
    name = func._schema.name
    inplace, outs = _written_args(func, args, kwargs)
    written = inplace + outs
    ins = [t for t in tree_leaves((list(args), kwargs)) if isinstance(t, torch.Tensor)
           and not any(t is o for o in outs)]
    if own:
        new, overwrite = {KERNEL}, False
    elif name in FRESH_OPS:
        new, overwrite = set(), True
    elif name in COPY_OPS:
        new, overwrite = tags_of(tags, [t for t in ins if not any(t is w for w in inplace)]), True
    elif writes_nothing:
        return
    else:
        seen = tags_of(tags, ins)
        new, overwrite = ({KERNEL} if KERNEL in seen else {name} | seen), False
    for t in written:
        k = key(t)
        if k is not None:
            replace = (overwrite or any(t is o for o in outs)) and _whole(t)
            tags[k] = set(new) if replace else tags.get(k, set()) | new
    in_keys = {key(t) for t in ins}
    for t in tree_leaves(out):
        k = key(t) if isinstance(t, torch.Tensor) else None
        if k is not None and k not in in_keys and not any(t is w for w in written):
            tags[k] = set(new)  # a new result: its storage is fresh


def output_problem(tags: dict, outputs: list) -> str | None:
    """An output whose bytes torch computed from the inputs and parameters alone, none of them written by
    a kernel of the candidate's (a do-nothing launch beside a torch op, or a kernel handed torch's answer)."""
    for i, out in enumerate(outputs):
        mine = tags.get(key(out), set()) if isinstance(out, torch.Tensor) and out.numel() else set()
        if mine and KERNEL not in mine:
            ops = sorted(mine)
            listed = ", ".join(ops[:6]) + (" ..." if len(ops) > 6 else "")
            return f"output {i} computed by torch ops ({listed}), not by the candidate's kernels"
    return None
