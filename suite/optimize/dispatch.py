"""A solution's dispatch table: shape buckets -> tunables, read and rewritten as source literals.

A family solution serves every shape from one file:

    TUNABLES = {...}                                   # the configuration of a bucket not in DISPATCH
    BUCKETS = {"dim": [1024, 4096], "batch_size": [64]}  # upper edges per size constant, ascending
    DISPATCH = {"dim<=1024,batch_size<=64": {...}, ...}  # bucket -> tunables, written by ksuite optimize

A shape falls in exactly one bucket (each size in the first range whose edge it does not pass, or above
the last edge), so a shape between two tuned shapes takes the bucket of its range. `ksuite optimize`
tunes the buckets that tuning shapes fall in and fills every other bucket of the grid with the table of
its nearest tuned bucket, so the file says, in data, what each shape runs. The solution computes the
bucket itself at run time (it must stay self-contained); tests hold its answer to `bucket_of` here.

One table per GPU: a table timed on one GPU is not the fastest on another, and a search on a second GPU
must not overwrite the first one's. DISPATCH is the table of DISPATCH_GPU (a results folder name, 'nvidia-h200');
a search on any other GPU writes that GPU's table into DISPATCH_BY_GPU, and the solution runs its own GPU's
table where it has one, else DISPATCH (its `dispatch_table()`). A file without DISPATCH_GPU keeps one table for
every GPU, as before.

    DISPATCH_GPU = "nvidia-h200"
    DISPATCH_BY_GPU = {"nvidia-h100-80gb-hbm3": {"dim<=1024,batch_size<=64": {...}, ...}}
"""

from __future__ import annotations

import ast
import fnmatch
import itertools
import pprint

from suite.optimize import tunables


class DispatchError(Exception):
    """A solution without BUCKETS, or a malformed one."""


def read_buckets(source: str) -> dict:
    try:
        buckets = tunables.read(source, "BUCKETS")
    except tunables.TunablesError as exc:
        raise DispatchError(str(exc)) from None
    for name, edges in buckets.items():
        if not (isinstance(edges, list) and edges and all(isinstance(e, int) for e in edges)
                and edges == sorted(set(edges))):
            raise DispatchError(f"BUCKETS[{name!r}] must be a non-empty ascending list of ints, got {edges!r}")
    return buckets


def home_gpu(source: str) -> str | None:
    """The GPU DISPATCH was searched on (DISPATCH_GPU), or None: one table serves every GPU."""
    node = _assignment(source, "DISPATCH_GPU")
    if node is None:
        return None
    value = ast.literal_eval(node.value)
    if not isinstance(value, str) or not value:
        raise DispatchError(f"DISPATCH_GPU must be a GPU's results folder name, got {value!r}")
    return value


def tables_by_gpu(source: str) -> dict | None:
    """DISPATCH_BY_GPU (GPU -> its table), or None where the file has no such literal."""
    node = _assignment(source, "DISPATCH_BY_GPU")
    if node is None:
        return None
    value = ast.literal_eval(node.value)
    if not isinstance(value, dict) or not all(isinstance(t, dict) for t in value.values()):
        raise DispatchError("DISPATCH_BY_GPU must be a dict of GPU name -> table")
    return value


def gpu_remarks(source: str, gpu: str) -> list[str]:
    """The comment lines of `gpu`'s entry in DISPATCH_BY_GPU (its provenance), stripped; none where it has no
    entry."""
    node = _assignment(source, "DISPATCH_BY_GPU")
    if node is None or not isinstance(node.value, ast.Dict):
        return []
    lines = source.splitlines()
    for key, value in zip(node.value.keys, node.value.values):
        if ast.literal_eval(key) == gpu:
            return [line.strip() for line in lines[key.lineno - 1:value.end_lineno] if line.strip().startswith("#")]
    return []


def read_table(source: str, gpu: str | None = None) -> dict:
    """The table `gpu` runs (a results folder name): its own in DISPATCH_BY_GPU, else DISPATCH; with no
    gpu, DISPATCH."""
    own = (tables_by_gpu(source) or {}).get(gpu) if gpu is not None else None
    if own is not None:
        return own
    try:
        return tunables.read(source, "DISPATCH")
    except tunables.TunablesError:
        return {}


def runs_from(source: str, gpu: str | None) -> str:
    """The name of the table `gpu` runs, for what inspect and the plan print: its DISPATCH_BY_GPU entry, else
    DISPATCH."""
    return f"DISPATCH_BY_GPU[{gpu!r}]" if gpu is not None and gpu in (tables_by_gpu(source) or {}) else "DISPATCH"


def writes_home(source: str, gpu: str | None) -> bool:
    """Whether a table searched on `gpu` goes into DISPATCH (its home GPU, or a file with one table for
    all) rather than DISPATCH_BY_GPU."""
    home = home_gpu(source)
    return gpu is None or home is None or gpu == home


def _assignment(source: str, name: str):
    return next((n for n in ast.parse(source).body if isinstance(n, ast.Assign)
                 and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)), None)


def has_dispatch(source: str) -> bool:
    try:
        read_buckets(source)
        return True
    except DispatchError:
        return False


def range_name(name: str, value: int, edges: list[int]) -> str:
    return next((f"{name}<={e}" for e in edges if value <= e), f"{name}>{edges[-1]}")


def bucket_of(shape: dict, buckets: dict) -> str:
    """'dim<=4096,batch_size<=64': the same rule as every family solution's own bucket_of."""
    missing = [k for k in buckets if k not in shape]
    if missing:
        raise DispatchError(f"BUCKETS names {missing}, not size constants of the shape {shape}")
    return ",".join(range_name(k, shape[k], edges) for k, edges in buckets.items())


def matches(bucket: str, patterns) -> bool:
    """Whether a bucket name matches one of `--bucket`'s glob patterns ('*batch_size<=64')."""
    return any(fnmatch.fnmatchcase(bucket, p) for p in patterns)


def stray_pattern_error(path, source: str, patterns) -> str | None:
    """One line naming the first `--bucket` pattern that matches none of the family's buckets (a typo would
    otherwise search nothing, or plan nothing, and say so only as a count), or None."""
    names = all_buckets(read_buckets(source))
    stray = [p for p in patterns if not any(fnmatch.fnmatchcase(b, p) for b in names)]
    return f"{path}: --bucket {stray[0]!r} matches none of its buckets ({names[0]}, ...)" if stray else None


def all_buckets(buckets: dict) -> list[str]:
    """Every bucket of the grid, in order (each axis: its edges, then the range above the last)."""
    axes = [[f"{k}<={e}" for e in edges] + [f"{k}>{edges[-1]}"] for k, edges in buckets.items()]
    return [",".join(parts) for parts in itertools.product(*axes)]


def _position(bucket: str, buckets: dict) -> tuple[int, ...]:
    """Index of each axis's range: the grid coordinates used for 'nearest'."""
    out = []
    for part, (k, edges) in zip(bucket.split(","), buckets.items()):
        names = [f"{k}<={e}" for e in edges] + [f"{k}>{edges[-1]}"]
        out.append(names.index(part))
    return tuple(out)


def nearest(bucket: str, tuned: list[str], buckets: dict) -> str:
    """The tuned bucket closest on the grid: fewest range steps on the first axis of BUCKETS (a family
    lists first the size that shapes its kernel, the row length, say), then on the others; ties go to
    the larger sizes, where a wrong table costs the most time."""
    here = _position(bucket, buckets)

    def distance(b: str) -> tuple:
        there = _position(b, buckets)
        return (abs(there[0] - here[0]), sum(abs(a - c) for a, c in zip(there[1:], here[1:])), [-c for c in there])
    return min(tuned, key=distance)


def complete(table: dict, buckets: dict) -> dict:
    """The table with every bucket of the grid: an untuned one takes its nearest tuned bucket's tunables."""
    if not table:
        return {}
    tuned = [b for b in all_buckets(buckets) if b in table]
    return {b: dict(table[b]) if b in table else dict(table[nearest(b, tuned, buckets)])
            for b in all_buckets(buckets)}


def group(shapes: list[dict], buckets: dict) -> dict:
    """bucket -> the shapes that fall in it, buckets in grid order."""
    out: dict = {}
    for s in shapes:
        out.setdefault(bucket_of(s, buckets), []).append(s)
    order = all_buckets(buckets)
    return {b: out[b] for b in sorted(out, key=order.index)}


LINE_LENGTH = 120  # the project's ruff limit: a written table must pass `ruff check`


def _entry(bucket: str, cfg: dict, indent: str = "    ") -> str:
    """One bucket's line; the config on a line of its own when both do not fit in LINE_LENGTH."""
    config = pprint.pformat(cfg, sort_dicts=False, width=1000)
    line = f"{indent}{bucket!r}: {config},\n"
    if len(line) <= LINE_LENGTH + 1:
        return line
    inner = indent + "    "
    if len(config) + len(inner) + 1 <= LINE_LENGTH:
        return f"{indent}{bucket!r}:\n{inner}{config},\n"
    wrapped = pprint.pformat(cfg, sort_dicts=False, width=LINE_LENGTH - len(inner) - 1).replace("\n", "\n" + inner)
    return f"{indent}{bucket!r}:\n{inner}{wrapped},\n"


def compact(cfg: dict, defaults: dict) -> dict:
    """An entry without the values TUNABLES already gives (the solutions and config_for read an entry over
    TUNABLES), so a written table shows what each bucket changes. Grouped TUNABLES (dicts of dicts, merged
    per group by their solution) are left whole; a value counts as the default only with its type too
    (1 is not True)."""
    if any(isinstance(v, dict) for v in defaults.values()):
        return dict(cfg)
    return {k: v for k, v in cfg.items() if not (k in defaults and type(defaults[k]) is type(v) and defaults[k] == v)}


def _defaults(source: str) -> dict:
    try:
        return tunables.read(source)
    except tunables.TunablesError:
        return {}


def write_table(source: str, table: dict, comment: str = "", gpu: str | None = None) -> str:
    """The source with the table `gpu` runs replaced by `table` (one line per bucket), each entry without
    what TUNABLES already says: DISPATCH where `writes_home`, else `gpu`'s entry of DISPATCH_BY_GPU (the
    other GPUs' entries, and their comments, kept as they are)."""
    if not writes_home(source, gpu):
        return _write_gpu_table(source, table, comment, gpu)
    node = _assignment(source, "DISPATCH")
    if node is None:
        raise DispatchError("no module-level DISPATCH = {...} literal")
    defaults = _defaults(source)
    body = "".join(_entry(b, compact(cfg, defaults)) for b, cfg in table.items())
    text = "DISPATCH = {\n" + body + "}\n" if table else "DISPATCH = {}\n"
    lines = source.splitlines(keepends=True)
    return "".join(lines[: node.lineno - 1]) + comment + text + "".join(lines[node.end_lineno:])


def _write_gpu_table(source: str, table: dict, comment: str, gpu: str) -> str:
    node = _assignment(source, "DISPATCH_BY_GPU")
    if node is None or not isinstance(node.value, ast.Dict):
        raise DispatchError(f"DISPATCH was searched on {home_gpu(source)}, and a table for {gpu} goes into "
                            "DISPATCH_BY_GPU, which this file has no literal of (nor a dispatch_table() that "
                            "reads it: see solutions/rmsnorm/triton_family.py)")
    lines = source.splitlines(keepends=True)
    keys, values = node.value.keys, node.value.values
    blocks, start = {}, node.lineno  # each GPU's lines as written: its comments, key and table
    for key, value in zip(keys, values):
        blocks[ast.literal_eval(key)] = "".join(lines[start:value.end_lineno])
        start = value.end_lineno
    defaults = _defaults(source)
    remarks = "".join(f"        {line}\n" for line in comment.splitlines())
    body = "".join(_entry(b, compact(cfg, defaults), indent="        ") for b, cfg in table.items())
    blocks[gpu] = f"    {gpu!r}: {{\n{remarks}{body}    }},\n"
    if not table:
        del blocks[gpu]
    text = "DISPATCH_BY_GPU = {\n" + "".join(blocks.values()) + "}\n" if blocks else "DISPATCH_BY_GPU = {}\n"
    return "".join(lines[: node.lineno - 1]) + text + "".join(lines[node.end_lineno:])


def split(source: str, name: str, edge: int) -> tuple[str, list[str]]:
    """The source with `edge` added to BUCKETS[name], and the buckets it made: those of the new range
    `name<=edge`, each with a copy of the entry of the bucket it was cut from (the range above it keeps
    its name and entry), so every shape runs what it ran before until a search tunes the new buckets."""
    buckets = read_buckets(source)
    if name not in buckets:
        raise DispatchError(f"BUCKETS has no {name!r} (it has {', '.join(buckets)})")
    if not isinstance(edge, int) or edge < 1:
        raise DispatchError(f"a bucket edge is a whole number of at least 1, got {edge!r}")
    if edge in buckets[name]:
        raise DispatchError(f"{name}<={edge} is already an edge of BUCKETS")
    wider = {k: sorted([*edges, edge]) if k == name else list(edges) for k, edges in buckets.items()}
    axis, old_range, new_range = list(wider).index(name), range_name(name, edge, buckets[name]), f"{name}<={edge}"
    made = [b for b in all_buckets(wider) if b.split(",")[axis] == new_range]

    def cut(table: dict) -> dict:
        out = {}
        for bucket in all_buckets(wider):
            parts = bucket.split(",")
            if parts[axis] == new_range:
                parts[axis] = old_range
            parent = ",".join(parts)
            if parent in table:
                out[bucket] = dict(table[parent])
        return out

    table, others = read_table(source), tables_by_gpu(source) or {}
    node = _assignment(source, "BUCKETS")
    lines = source.splitlines(keepends=True)
    source = "".join(lines[: node.lineno - 1]) + f"BUCKETS = {wider!r}\n" + "".join(lines[node.end_lineno:])
    if table:
        source = write_table(source, cut(table))
    for gpu, theirs in others.items():  # every GPU's table on the new grid (its comments kept)
        source = _replace_gpu_entries(source, gpu, cut(theirs))
    return source, made


def replace_entries(source: str, table: dict, gpu: str | None) -> str:
    """The table `gpu` runs replaced by `table`, its comment lines kept (DISPATCH's sit above it and stay)."""
    if writes_home(source, gpu):
        return write_table(source, table, gpu=gpu)
    return _replace_gpu_entries(source, gpu, table)


def _replace_gpu_entries(source: str, gpu: str, table: dict) -> str:
    """`gpu`'s table in DISPATCH_BY_GPU rewritten, its comment lines kept."""
    comment = "".join(line + "\n" for line in gpu_remarks(source, gpu))
    return _write_gpu_table(source, table, comment, gpu)


def read_configs(source: str, gpu: str | None = None) -> dict:
    """bucket -> the tunables its shapes run with on `gpu`: each entry of its table read over TUNABLES."""
    defaults = tunables.read(source)
    return {bucket: {**defaults, **entry} for bucket, entry in read_table(source, gpu).items()}


def config_for(source: str, shape: dict, gpu: str | None = None) -> tuple[str, dict]:
    """(bucket, tunables) a shape runs with on `gpu`, read from the source as the solution reads it."""
    buckets = read_buckets(source)
    bucket = bucket_of(shape, buckets)
    return bucket, {**tunables.read(source), **read_table(source, gpu).get(bucket, {})}
