"""The part of a solution file that one GPU runs. A table search on one GPU rewrites the file for every GPU (its
own DISPATCH_BY_GPU entry, or DISPATCH on the family's home GPU), so the file's hash alone made every other GPU's
records stale: the H200's rmsnorm search of 2026-12-07 left the H100's queued confirm of that file nothing to
re-time, though the H100 runs its own table, which the search did not touch. `ksuite confirm` and `bench --resume`
compare this hash where the file's own differs."""

from __future__ import annotations

import ast
import functools
import hashlib
import json
from pathlib import Path

TABLE_NAMES = ("DISPATCH", "DISPATCH_BY_GPU", "DISPATCH_GPU")
TABLE_COMMENT = "# ksuite optimize table"  # the lines the table writer puts above and inside the tables


def ran_hash(path: Path | str, gpu: str) -> str | None:
    """Short hash of the file without its per-GPU tables and their comment lines, plus the table GPU `gpu` (its
    results folder name, as the families' this_gpu() gives it) runs: DISPATCH_BY_GPU's entry for it, else
    DISPATCH, as every family's dispatch_table() picks. None where the file keeps no per-GPU tables as literals."""
    try:
        text = Path(path).read_text()
    except (OSError, ValueError):  # missing, unreadable, not text
        return None
    return _ran_hash(text, gpu)


@functools.lru_cache(maxsize=64)
def _ran_hash(text: str, gpu: str) -> str | None:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    tables, dropped = {}, set()
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id in TABLE_NAMES):
            try:
                tables[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                return None
            dropped.update(range(node.lineno, node.end_lineno + 1))
    if set(tables) != set(TABLE_NAMES) or not isinstance(tables["DISPATCH_BY_GPU"], dict):
        return None
    table = tables["DISPATCH_BY_GPU"].get(gpu, tables["DISPATCH"])
    code = [line for number, line in enumerate(text.splitlines(), 1)
            if number not in dropped and not line.lstrip().startswith(TABLE_COMMENT)]
    digest = hashlib.sha256("\n".join(code).encode())
    digest.update(json.dumps(table, sort_keys=True).encode())
    return digest.hexdigest()[:12]


def same_run(recorded: str | None, path: Path | str, gpu: str | None) -> bool:
    """True where a record's ran_hash says GPU `gpu` would run the same code and table from the file now."""
    return bool(recorded and gpu and recorded == ran_hash(path, gpu))
