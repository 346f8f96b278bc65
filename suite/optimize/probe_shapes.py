"""Probe shapes: a tuning shape for each dispatch bucket that no workload tuning shape falls in.

The workload's hash split sends some size ranges wholly to the held-out set (rmsnorm's rows of 8192
columns above 1024 rows, say): without a probe the table search never times those buckets, they copy
their nearest bucket's entry, and the held-out shapes that land there are judged on a configuration
chosen for other shapes. A probe is built from the tuning set and the bucket's own ranges, never from a
held-out shape: start from a tuning shape of the nearest tuned bucket, and give each bucketed size a
value inside the bucket's range, tuning-set values first (nearest to the start's own, in octaves), then
the range's upper edge or midpoint (above the last edge: twice, four and three times it) where these lie
within the tuning set's own span. The first combination that is not a held-out shape and fits the
workload's byte cap is the probe. The held-out set is used only to leave its shapes out.

Edge probes (`edge_probes`) do the same for a bucket whose tuning shapes sit in the low part of one of its
ranges: rotary's bucket of 1025-8192 positions at head_dim 96 was tuned at 1x32x3001x96 alone (13.5 us), and
its entry lost 0.91-0.94x at the held-out 1x32x8192x96 (38 us) on both GPUs, in every run. Where a bucket's
largest tuning value on a bounded axis is under half the range's upper edge, a second shape toward that edge
joins its tuning shapes, so a bucket's entry is chosen on shapes spanning it. A bucket timed only at its probe
counts the probe as its tuning shape here: rmsnorm's rows of 4097-8192 columns and 1025-8192 rows were tuned at
2048x8192 alone (33 MB, under the H100's 50 MB L2), and their entry lost 0.95x torch.compile at the held-out
3001x8192 and 0.97-0.98x at 4096x8192 (H100, 2026-12-06).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

from harness.workloads import shape_key
from suite.optimize import dispatch


def _ranges(buckets: dict) -> dict:
    """'dim<=4096' -> (2048, 4096): each range's open lower and closed upper bound (None above the last edge)."""
    out = {}
    for name, edges in buckets.items():
        lows = [0] + edges
        for low, high in zip(lows, edges + [None]):
            out[dispatch.range_name(name, high if high is not None else low + 1, edges)] = (low, high)
    return out


def _values(low: int, high: int | None, seen: list[int], start: int) -> list[int]:
    """Candidate values in (low, high]: tuning-set values by octaves from `start` (larger first on a tie),
    then synthetic ones, these only inside the span of the tuning set's values (a range no tuning shape
    comes near, rows of 16384 columns where the largest is 8192, say, gets no probe)."""
    inside = sorted({v for v in seen if v > low and (high is None or v <= high)},
                    key=lambda v: (abs(math.log2(v / start)) if start > 0 else v, -v))
    synthetic = [high, (low + high) // 2] if high is not None else [2 * low, 4 * low, 3 * low]
    return inside + [v for v in synthetic if v > low and min(seen) <= v <= max(seen) and v not in inside]


def probe_shapes(buckets: dict, tuning: list[dict], heldout: list[dict],
                 fits: Callable[[dict], bool] = lambda shape: True) -> dict:
    """bucket -> probe shape, for each bucket of the grid without a tuning shape where one can be made
    (a bucket with none keeps copying its nearest). Deterministic: the same sets give the same probes."""
    groups = dispatch.group(tuning, buckets)
    if not groups:
        return {}
    ranges = _ranges(buckets)
    held = {shape_key(s) for s in heldout}
    tuned = list(groups)
    out = {}
    for bucket in dispatch.all_buckets(buckets):
        if bucket in groups:
            continue
        base = min(groups[dispatch.nearest(bucket, tuned, buckets)], key=shape_key)
        axes = [(name, ranges[part]) for name, part in zip(buckets, bucket.split(","))]
        choices = [_values(low, high, [s[name] for s in tuning], base[name]) for name, (low, high) in axes]
        for values in itertools.product(*choices):
            shape = {**base, **{name: v for (name, _), v in zip(axes, values)}}
            if shape_key(shape) not in held and fits(shape) and dispatch.bucket_of(shape, buckets) == bucket:
                out[bucket] = shape
                break
    return out


def _edge_values(top: int, high: int, seen: list[int]) -> list[int]:
    """Values in (1.5 x top, high], nearest the edge first: tuning-set values, the edge itself and the geometric
    midpoint between top and the edge, these two only inside the tuning set's span."""
    synthetic = [v for v in (high, int(math.sqrt(top * high))) if min(seen) <= v <= max(seen)]
    return sorted({v for v in seen + synthetic if 1.5 * top < v <= high}, reverse=True)


def edge_probes(buckets: dict, tuning: list[dict], heldout: list[dict],
                fits: Callable[[dict], bool] = lambda shape: True, probes: dict | None = None) -> dict:
    """bucket -> a shape toward the far edge of its ranges, for each bucket with tuning shapes (or only a probe,
    from `probes`) whose largest value on some bounded axis is under half that range's upper edge: the bucket's
    largest such shape with each such axis moved up (never a held-out shape, within the byte cap).
    Deterministic."""
    ranges = _ranges(buckets)
    held = {shape_key(s) for s in heldout}
    groups = dispatch.group(tuning, buckets)
    for bucket, shape in sorted((probes or {}).items()):
        groups.setdefault(bucket, [shape])
    out = {}
    for bucket, shapes in groups.items():
        axes = [(name, ranges[part]) for name, part in zip(buckets, bucket.split(","))]
        far = [(name, high) for name, (_, high) in axes
               if high is not None and 2 * max(s[name] for s in shapes) < high]
        if not far:
            continue
        base = max(shapes, key=lambda s: ([s[name] for name, _ in far], shape_key(s)))
        # each axis toward its edge, or where none of its values will do, left as it is (not every axis at once)
        choices = [_edge_values(base[name], high, [s[name] for s in tuning]) + [base[name]] for name, high in far]
        for values in itertools.product(*choices):
            shape = {**base, **{name: v for (name, _), v in zip(far, values)}}
            if shape != base and shape_key(shape) not in held and fits(shape) \
                    and dispatch.bucket_of(shape, buckets) == bucket:
                out[bucket] = shape
                break
    return out
