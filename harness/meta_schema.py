"""What a problem's META may say, in one table, checked when the file loads.

A typo in a key (`tolerence`) or a value (`"bound": "memroy"`) would otherwise be ignored or read as a
default, and the problem checked against something its author did not write. Each rule is one line of
error naming the file and the key. docs/problem-format.md describes the keys.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from numbers import Real
from pathlib import Path

SHAPE_LISTS = ("small_shapes", "shapes", "large_shapes", "edge_shapes", "workload_extra")
BOUNDS = ("memory", "compute")
HELDOUT_GOAL_KEYS = ("won_share", "geomean", "floor")  # suite/goals.py: share won, geometric mean, every shape
GOAL_KEYS = ("floor", "geomean")  # suite/goals.py, a run of named shapes: every shape, over weak baselines
EXTRA_KEYS = ("gpumode",)  # read by other tools (submit/gpumode), kept in ProblemMeta.extra as they are
DTYPE_NAMES = ("float16", "bfloat16", "float32", "float64")  # harness/loader.py maps them to torch dtypes
STABILITY_TRANSFORMS = ("large", "tiny", "mixed", "constant_rows")  # harness/inputs.py applies them


def _number(value) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def _sequence(value) -> bool:
    return isinstance(value, (list, tuple))


def _dtypes(value) -> bool:
    return _sequence(value) and bool(value) and all(d in DTYPE_NAMES for d in value) and len(set(value)) == len(value)


def _tolerances(value) -> bool:
    def pair(v) -> bool:
        return _sequence(v) and len(v) == 2 and all(_number(x) and x >= 0 for x in v)
    return isinstance(value, dict) and all(k in DTYPE_NAMES and pair(v) for k, v in value.items())


def _stability(value) -> bool:
    return _sequence(value) and all(name in STABILITY_TRANSFORMS for name in value)


def _shapes(value) -> bool:
    return _sequence(value) and all(
        isinstance(s, dict) and all(isinstance(v, int) and not isinstance(v, bool) for v in s.values())
        for s in value)


SHAPE_RULE = (_shapes, "a list of dicts of size constants to ints")
RULES: dict[str, tuple[Callable[[object], bool], str]] = {  # key -> (is the value valid, what it must be)
    "dtypes": (_dtypes, "a non-empty list of distinct dtype names (float16, bfloat16, float32, float64)"),
    **{key: SHAPE_RULE for key in SHAPE_LISTS},
    "tolerances": (_tolerances, "a dict of dtype name to an (atol, rtol) pair of numbers >= 0"),
    "bytes": (callable, "a function (shape, element size) -> bytes"),
    "flops": (callable, "a function (shape, element size) -> flops"),
    "bound": (lambda v: v in BOUNDS, f"one of {', '.join(BOUNDS)}"),
    "stability": (_stability, "a list of stability transforms (large, tiny, mixed, constant_rows)"),
    "strided_inputs": (lambda v: isinstance(v, bool), "true or false"),
    "inplace": (lambda v: isinstance(v, bool), "true or false"),
    "deterministic": (lambda v: isinstance(v, bool) or (_number(v) and v >= 0),
                      "true, false or a relative bound >= 0"),
    "goal_pct_sol": (lambda v: _number(v) and 0 < v <= 100, "a number in (0, 100]"),
    "workload": (callable, "a function (model, tokens) -> shape dict(s)"),
    "recommended": (lambda v: isinstance(v, str) and bool(v), "the name of a solution in solutions/<problem>/"),
    "heldout_goals": (lambda v: isinstance(v, dict) and bool(v) and set(v) <= set(HELDOUT_GOAL_KEYS) and all(
        _number(x) and x >= 0 and (k != "won_share" or x <= 1) for k, x in v.items()),
        "a dict of won_share (0-1), geomean and floor (numbers >= 0): the held-out goals of `ksuite goals`"),
    "goals": (lambda v: isinstance(v, dict) and bool(v) and set(v) <= set(GOAL_KEYS) and all(
        _number(x) and x >= 0 for x in v.values()),
        "a dict of floor and geomean (numbers >= 0): the goals of `ksuite goals` at a run's named shapes"),
    "reference_split_dim": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
                            "an int >= 0: a dimension of every tensor input and output that the op treats "
                            "independently"),
    "reference_whole_inputs": (lambda v: isinstance(v, (list, tuple)) and all(
        isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in v),
        "a list of input positions (ints >= 0): inputs every slice of the reference gets whole"),
    "gpumode": (lambda v: isinstance(v, dict), "a dict (the GPU MODE leaderboard's tests and benchmarks)"),
}
META_KEYS = tuple(RULES)
MAY_BE_NONE = ("bytes", "flops", "goal_pct_sol", "workload")  # None: not declared


def meta_error(raw, path: Path, own: dict) -> str | None:
    """One line (the file, the key, what it must be) for the first thing META gets wrong, else None; the
    loader raises it as a LoadError. `own` are the file's size constants, the only names a shape may set."""
    if not isinstance(raw, dict):
        return f"{path}: META must be a dict, got {type(raw).__name__}"
    for key in raw:
        if key not in RULES:
            close = difflib.get_close_matches(str(key), META_KEYS, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(META_KEYS)}"
            return f"{path}: META key {key!r} unknown ({hint})"
    for key, value in raw.items():
        valid, must_be = RULES[key]
        if not (value is None and key in MAY_BE_NONE) and not valid(value):
            shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
            return f"{path}: META {key} must be {must_be}, got {shown}"
    for key in SHAPE_LISTS:
        for shape in raw.get(key, []):
            missing = [k for k in shape if k not in own]
            if missing:
                return f"{path}: META {key} names {missing}, not size constants of the file"
