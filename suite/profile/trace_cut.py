"""Cut a small trace out of a recorded `ksuite profile --trace` file: one profiled step, the layers asked
for (by default the first), and everything outside the layers (embedding, final norm, LM head, loss).

What stays is what attribute.py reads: host ranges (aten ops with their input dims and types, module
and step annotations, runtime calls), and the device work launched from them (kernels, memsets,
copies), each with its link to its launcher (External id, correlation). Flow arrows, GPU-side
annotations and metadata go; timestamps start at 0. The result is a trace in the same format, so the
profile's attribution and mapping can be tested on real kernel names at a size a repository keeps:

    python -m suite.profile.trace_cut results/<gpu>/profile/<stamp>-<model>-trace.json.gz OUT.json
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

from suite.profile.attribute import DEVICE_CATEGORIES
from suite.profile.capture import MODULE_PREFIX, STEP_NAME

HOST_KEEP = ("cpu_op", "user_annotation", "cuda_runtime", "cuda_driver")
ARGS_KEEP = ("External id", "correlation", "Input Dims", "Input type")


def read_trace(path: Path) -> list[dict]:
    """traceEvents of a Chrome trace, plain or gzipped JSON."""
    raw = Path(path).read_bytes()
    data = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    return data["traceEvents"] if isinstance(data, dict) else data


def layer_index(name: str) -> int | None:
    """`ksuite.module::layers.3::DecoderLayer::...` -> 3: a range whose module path has one numeric part,
    its last (a block of the model's layer list: layers.3, h.3, model.layers.3); else None."""
    if not name.startswith(MODULE_PREFIX):
        return None
    parts = name[len(MODULE_PREFIX):].split("::", 1)[0].split(".")
    numeric = [i for i, p in enumerate(parts) if p.isdigit()]
    return int(parts[-1]) if numeric == [len(parts) - 1] else None


def _span(e: dict) -> tuple[float, float]:
    return float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0.0))


def cut(events: list[dict], step: int = -1, layers: tuple[int, ...] = (0,)) -> list[dict]:
    """The events of profiled step `step` (an index into the steps, -1 the last) without the layers not in
    `layers`, their device work included."""
    steps = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                    and e.get("name") == STEP_NAME), key=lambda e: float(e["ts"]))
    if not steps:
        raise ValueError(f"no {STEP_NAME} range in the trace: not a `ksuite profile --trace` file")
    chosen = steps[step]
    start, end = _span(chosen)
    dropped = [(_span(e), e.get("tid")) for e in events
               if e.get("ph") == "X" and e.get("cat") == "user_annotation"
               and (i := layer_index(e["name"])) is not None and i not in layers and start <= float(e["ts"]) <= end]

    def inside_dropped(e: dict) -> bool:
        ts = float(e["ts"])
        return any(lo <= ts <= hi and tid == e.get("tid") for (lo, hi), tid in dropped)

    host = [e for e in events if e.get("ph") == "X" and e.get("cat") in HOST_KEEP
            and start <= float(e["ts"]) <= end and not inside_dropped(e)]
    ext = {e["args"]["External id"] for e in host if e["cat"] == "cpu_op" and "External id" in (e.get("args") or {})}
    corr = {e["args"]["correlation"] for e in host if e["cat"] in ("cuda_runtime", "cuda_driver")
            and "correlation" in (e.get("args") or {})}
    device = [e for e in events if e.get("ph") == "X" and e.get("cat") in DEVICE_CATEGORIES
              and ((e.get("args") or {}).get("External id") in ext or (e.get("args") or {}).get("correlation") in corr)]
    base = start
    out = []
    for e in sorted(host + device, key=lambda e: (float(e["ts"]), -float(e.get("dur", 0.0)))):
        args = {k: v for k, v in (e.get("args") or {}).items() if k in ARGS_KEEP}
        out.append({"ph": "X", "cat": e["cat"], "name": e["name"], "pid": e.get("pid"), "tid": e.get("tid"),
                    "ts": round(float(e["ts"]) - base, 3), "dur": round(float(e.get("dur", 0.0)), 3), "args": args})
    return out


def write(events: list[dict], path: Path, note: str) -> Path:
    """One event per line, so a regenerated fixture diffs line by line."""
    lines = ",\n".join(json.dumps(e, separators=(",", ":")) for e in events)
    Path(path).write_text(f'{{"note": {json.dumps(note)},\n"traceEvents": [\n{lines}\n]}}\n')
    return Path(path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--step", type=int, default=-1, help="Which profiled step (0-based; -1: the last).")
    parser.add_argument("--layers", default="0", help="Layers to keep, comma-separated.")
    args = parser.parse_args(argv)
    layers = tuple(int(x) for x in args.layers.split(",") if x)
    events = cut(read_trace(args.trace), args.step, layers)
    note = (f"cut by suite/profile/trace_cut.py from {args.trace.as_posix()}: step {args.step}, "
            f"layers {','.join(map(str, layers))} (and everything outside the layers)")
    print(write(events, args.out, note), f"{len(events)} events")


if __name__ == "__main__":
    main()
