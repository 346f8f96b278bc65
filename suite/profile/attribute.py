"""Chrome trace events -> time per group (problem or op, module path, shapes, dtype).

A trace holds host-side ranges (cpu_op: aten ops; user_annotation: our module and step ranges, see
capture.py) and, on a GPU, device-side work (kernel, gpu_memcpy, gpu_memset). Each piece of device work
is charged to the innermost op that launched it (its "External id", or else the runtime call with the
same "correlation"). On a CPU there is no device work, so each op's self time (its duration less its
child ops') stands in for it. From there the code is the same: walk up from the op to the unit that a
kernel would replace (mapping.py decides: a whole module call such as an RMSNorm, or the outermost op
under the innermost module, such as aten::linear), and add the time to that unit's group.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from suite.profile import mapping
from suite.profile.capture import MODULE_PREFIX, STEP_NAME

DEVICE_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")
HOST_CATEGORIES = ("cpu_op", "user_annotation")


@dataclass(eq=False)
class Node:
    """A host-side range: an aten op or an annotation, with its parent in the call tree."""

    name: str
    cat: str
    ts: float
    dur: float
    tid: object
    args: dict
    parent: Node | None = None
    child_op_us: float = 0.0

    @property
    def end(self) -> float:
        return self.ts + self.dur

    @property
    def is_module(self) -> bool:
        return self.cat == "user_annotation" and self.name.startswith(MODULE_PREFIX)


@dataclass
class Group:
    key: tuple
    problem: str | None
    op: str
    module: str  # the module path with layer indices as * (layers.*.mlp.up_proj)
    module_class: str
    shape: dict | None  # the problem's size constants, where mapped
    dtype: str | None
    inputs: str  # the unit's input shapes and dtypes, as profiled
    time_us: float = 0.0  # summed over the profiled steps
    units: set = field(default_factory=set)
    kernels: Counter = field(default_factory=Counter)

    @property
    def calls(self) -> int:
        return len(self.units)


@dataclass
class Attribution:
    groups: list[Group]
    total_us: float  # all work inside the profiled steps (attributed or not), summed over steps
    unattributed_us: float
    outside_steps_us: float
    device: str  # cuda | cpu
    steps: int


def build_tree(events: list[dict]) -> tuple[list[Node], dict]:
    """Host ranges nested by time containment per thread; returns them and External id -> op."""
    by_tid: dict = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in HOST_CATEGORIES:
            node = Node(e["name"], e["cat"], float(e["ts"]), float(e.get("dur", 0.0)), e.get("tid"),
                        e.get("args") or {})
            by_tid.setdefault(node.tid, []).append(node)
    nodes, by_ext = [], {}
    for tid_nodes in by_tid.values():
        tid_nodes.sort(key=lambda n: (n.ts, -n.dur))
        stack: list[Node] = []
        for node in tid_nodes:
            while stack and node.ts >= stack[-1].end:
                stack.pop()
            node.parent = stack[-1] if stack else None
            if node.cat == "cpu_op":
                up = _parent_op(node)
                if up is not None:
                    up.child_op_us += node.dur
                ext = node.args.get("External id")
                if ext is not None:
                    by_ext.setdefault(ext, node)
            stack.append(node)
            nodes.append(node)
    return nodes, by_ext


def _parent_op(node: Node) -> Node | None:
    up = node.parent
    while up is not None and up.cat != "cpu_op":
        up = up.parent
    return up


def _runtime_launchers(events: list[dict], nodes: list[Node]) -> dict:
    """correlation -> the innermost op around the runtime call (cudaLaunchKernel...) with that id."""
    ops_by_tid: dict = {}
    for n in nodes:
        if n.cat == "cpu_op":
            ops_by_tid.setdefault(n.tid, []).append(n)
    found = {}
    for e in events:
        if e.get("cat") not in ("cuda_runtime", "cuda_driver") or "correlation" not in (e.get("args") or {}):
            continue
        ts = float(e["ts"])
        around = [n for n in ops_by_tid.get(e.get("tid"), []) if n.ts <= ts <= n.end]
        if around:
            found[e["args"]["correlation"]] = max(around, key=lambda n: n.ts)
    return found


def enclosing(op: Node) -> tuple[Node | None, Node]:
    """(innermost module range, outermost op below it) for an op. Backward ops run on autograd's own
    thread, outside every module range: their unit is their outermost op."""
    module, top, node = None, op, op
    while node is not None and module is None:
        if node.cat == "cpu_op":
            top = node
        elif node.is_module:
            module = node
        node = node.parent
    return module, top


def step_spans(nodes: list[Node]) -> list[tuple[float, float]]:
    return [(n.ts, n.end) for n in nodes if n.cat == "user_annotation" and n.name == STEP_NAME]


def in_spans(ts: float, spans: list[tuple[float, float]]) -> bool:
    return any(start <= ts <= end for start, end in spans)


def work_items(events: list[dict], nodes: list[Node], by_ext: dict) -> tuple[list[tuple], str]:
    """(duration us, launching op or None, name) for every piece of work, and the device it ran on."""
    device = [e for e in events if e.get("ph") == "X" and e.get("cat") in DEVICE_CATEGORIES]
    if not device:
        return [(max(0.0, n.dur - n.child_op_us), n, n.name) for n in nodes if n.cat == "cpu_op"], "cpu"
    launchers = None
    items = []
    for e in device:
        args = e.get("args") or {}
        op = by_ext.get(args.get("External id"))
        if op is None and "correlation" in args:
            launchers = launchers if launchers is not None else _runtime_launchers(events, nodes)
            op = launchers.get(args["correlation"])
        items.append((float(e.get("dur", 0.0)), op, e["name"]))
    return items, "cuda"


def attribute(events: list[dict], steps: int) -> Attribution:
    nodes, by_ext = build_tree(events)
    items, device = work_items(events, nodes, by_ext)
    groups: dict[tuple, Group] = {}
    spans = step_spans(nodes)
    total = unattributed = outside = 0.0
    for dur, op, name in items:
        if op is None:
            total += dur
            unattributed += dur
            continue
        module, top = enclosing(op)
        if not in_spans(op.ts, spans):
            outside += dur
            continue
        total += dur
        unit_node, g = mapping.classify(module, top)
        group = groups.get(g.key)
        if group is None:
            group = groups[g.key] = Group(g.key, g.problem, g.op, mapping.normalise_path(g.module_path),
                                          g.module_class, g.shape, g.dtype, g.inputs)
        group.time_us += dur
        group.units.add(id(unit_node))
        group.kernels[name] += dur
    ordered = sorted(groups.values(), key=lambda grp: -grp.time_us)
    return Attribution(ordered, total, unattributed, outside, device, steps)
