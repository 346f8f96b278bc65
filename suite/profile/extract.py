"""`ksuite extract PROFILE.json --top N`: the profile's top ops as KernelBench-format problem files.

Each file is its registry problem's source (Model, ModelFused, get_inputs, ...) with the model's exact
shape as the size constants, and a META naming only that shape and dtype (small and edge shapes are the
registry problem's, for checks on a CPU), with the registry problem's tolerances, stability transforms
and cost model. So `ksuite check` and `ksuite bench` run it like any problem, and the registry tries
the op's solutions on it (suite/registry.py: an extracted problem also finds solutions/<op>/).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from harness.records import shape_text
from suite.registry import EXTRACTED, PROBLEMS_DIR

KEEP_META = ("bound", "goal_pct_sol", "tolerances", "bytes", "flops", "stability", "strided_inputs",
             "deterministic", "inplace", "small_shapes", "edge_shapes")
DTYPE_SHORT = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "float64": "fp64"}


class ExtractError(Exception):
    """A profile that cannot be extracted from; the message names the file and the cause."""


def read_profile(path: Path) -> dict:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ExtractError(f"{path}: no such profile (write one with `ksuite profile MODEL --json > FILE`)") from None
    except json.JSONDecodeError as exc:
        raise ExtractError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict) or "groups" not in data or "model" not in data:
        raise ExtractError(f"{path}: not a `ksuite profile --json` output (no model and groups)")
    return data


def pick(profile: dict, top: int) -> list[dict]:
    """The first `top` distinct (problem, shape, dtype) in rank order, each with every group it covers."""
    chosen: dict[tuple, dict] = {}
    for row in profile["groups"]:
        if not (row.get("problem") and row.get("shape") and row.get("dtype")):
            continue
        key = (row["problem"], tuple(sorted(row["shape"].items())), row["dtype"])
        if key not in chosen:
            if len(chosen) >= top:
                continue
            chosen[key] = {"problem": row["problem"], "shape": row["shape"], "dtype": row["dtype"], "groups": []}
        chosen[key]["groups"].append(row)
    return list(chosen.values())


def file_name(item: dict) -> str:
    return f"{item['problem']}__{shape_text(item['shape'])}_{DTYPE_SHORT.get(item['dtype'], item['dtype'])}.py"


def _header(item: dict, profile: dict, original_doc: str | None) -> str:
    m = profile["model"]
    share = sum(g["share"] for g in item["groups"]) * 100
    calls = sum(g["calls"] for g in item["groups"])
    modules = ", ".join(sorted({g["module"] or "-" for g in item["groups"]}))
    return (f'"""{item["problem"]} at {shape_text(item["shape"])} {item["dtype"]}, extracted by `ksuite extract` '
            f'from {m["name"]}\n({m["dtype"]}, batch {m["batch"]} x {m["seq"]}, {m["mode"]}, profiled on {m["gpu"]}): '
            f'{share:.1f} % of the step, {calls} calls per step,\nin {modules}.\n\n'
            f'Source: problems/{item["problem"]}.py, with the model\'s shape as the size constants.\n\n'
            + (original_doc or "").strip() + '\n"""\n')


def problem_source(item: dict, profile: dict, problems_dir: Path = PROBLEMS_DIR) -> str:
    source_path = Path(problems_dir) / f"{item['problem']}.py"
    if not source_path.is_file():
        raise ExtractError(f"{source_path}: the registry problem {item['problem']!r} is missing")
    text = source_path.read_text()
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    edits = []  # (start line, end line, replacement), 1-based inclusive
    doc = ast.get_docstring(tree)
    body = tree.body
    if doc is not None:
        edits.append((body[0].lineno, body[0].end_lineno, _header(item, profile, doc)))
    for node in body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        if name in item["shape"]:
            edits.append((node.lineno, node.end_lineno, f"{name} = {int(item['shape'][name])}\n"))
        elif name == "META" and isinstance(node.value, ast.Dict):
            edits.append((node.lineno, node.end_lineno, _meta_source(node.value, text, item)))
    missing = [k for k in item["shape"] if not any(e[2].startswith(f"{k} = ") for e in edits)]
    if missing:
        raise ExtractError(f"{source_path}: no size constants {missing} to set")
    for start, end, new in sorted(edits, reverse=True):
        lines[start - 1:end] = [new]
    return "".join(lines)


def _meta_source(meta: ast.Dict, text: str, item: dict) -> str:
    kept = {}
    for k, v in zip(meta.keys, meta.values):
        if isinstance(k, ast.Constant) and k.value in KEEP_META:
            kept[k.value] = ast.get_source_segment(text, v)
    shape = json.dumps(dict(item["shape"]))
    out = ["META = {", f'    "dtypes": {json.dumps([item["dtype"]])},', f'    "shapes": [{shape}],',
           '    # the shape the model runs: what `ksuite bench` times', f'    "large_shapes": [{shape}],']
    out += [f'    "{key}": {value},' for key, value in kept.items()]
    return "\n".join(out) + "\n}\n"


def extract(profile_path: Path, top: int, out_dir: Path | None = None, problems_dir: Path = PROBLEMS_DIR
            ) -> list[Path]:
    """Write the top problems under <out_dir or problems/extracted>/<model slug>/; their paths."""
    from harness.loader import LoadError, load_problem

    profile = read_profile(profile_path)
    items = pick(profile, top)
    if not items:
        raise ExtractError(f"{profile_path}: no group is mapped to a registry problem; nothing to extract")
    folder = Path(out_dir or Path(problems_dir) / EXTRACTED) / profile["model"]["slug"]
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for n, item in enumerate(items):
        path = folder / file_name(item)
        path.write_text(problem_source(item, profile, problems_dir))
        try:
            load_problem(path, f"ksuite_extracted_{n}")  # the same checks as every problem file
        except LoadError as exc:
            raise ExtractError(f"{path}: written but does not load: {exc}") from None
        written.append(path)
    return written
