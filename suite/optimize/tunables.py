"""A solution's TUNABLES dict: read it, flatten nested groups, list the values worth trying, and write a
copy of the file with the dict replaced (Triton's jit reads source, so candidates are real files)."""

from __future__ import annotations

import ast
import pprint

POW2_KEYS = ("BLOCK", "GROUP", "ROWS", "SIZE", "SPLIT", "CHUNK")
WARPS = (1, 2, 4, 8, 16)
STAGES = (1, 2, 3, 4, 5)


class TunablesError(Exception):
    """The file declares no TUNABLES dict literal at module level."""


def _assignment(tree: ast.Module, name: str) -> ast.Assign | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return node
    return None


def read(source: str, name: str = "TUNABLES") -> dict:
    node = _assignment(ast.parse(source), name)
    if node is None:
        raise TunablesError(f"no module-level {name} = {{...}} literal")
    try:
        value = ast.literal_eval(node.value)
    except ValueError:
        raise TunablesError(f"{name} is not a literal dict") from None
    if not isinstance(value, dict):
        raise TunablesError(f"{name} is not a dict")
    return value


def _optional_literal(source: str, name: str, kind: str):
    """The module-level literal assigned to `name`, or None when the file declares none."""
    node = _assignment(ast.parse(source), name)
    if node is None:
        return None
    try:
        return ast.literal_eval(node.value)
    except ValueError:
        raise TunablesError(f"{name} is not a literal {kind}") from None


def overrides(source: str) -> dict[str, list[str]]:
    """The optional TUNABLE_OVERRIDES dict: a switch tunable -> the tunables it decides while it is on (a rule
    that picks the tile itself, say), so that a search step changing one of those turns the switch off too;
    else the step changes nothing the kernel sees. Keys as flatten() names them. {} when the file declares none."""
    value = _optional_literal(source, "TUNABLE_OVERRIDES", "dict")
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, (list, tuple))
                                              and all(isinstance(n, str) for n in v) for k, v in value.items()):
        raise TunablesError("TUNABLE_OVERRIDES is not a dict of switch name -> list of tunable names")
    return {k: list(v) for k, v in value.items()}


def seeds(source: str) -> list[dict]:
    """The optional TUNABLE_SEEDS list: whole configurations (partial dicts, TUNABLES' nesting) the search
    tries first, such as the launch torch.compile's autotuner picks; one coordinate at a time never reaches
    a change of three tunables at once. [] when the file declares none."""
    value = _optional_literal(source, "TUNABLE_SEEDS", "list")
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise TunablesError("TUNABLE_SEEDS is not a list of dicts")
    return value


def flatten(tunables: dict, prefix: str = "") -> dict:
    """{"down": {"BLOCK_M": 64}} -> {"down.BLOCK_M": 64}: one coordinate per leaf."""
    out = {}
    for k, v in tunables.items():
        if isinstance(v, dict):
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def unflatten(flat: dict) -> dict:
    out: dict = {}
    for key, v in flat.items():
        *groups, leaf = key.split(".")
        node = out
        for g in groups:
            node = node.setdefault(g, {})
        node[leaf] = v
    return out


def choices(key: str, value) -> list:
    """Values to try for one tunable, from its name and current value (current value always included)."""
    leaf = key.rsplit(".", 1)[-1]
    if isinstance(value, bool):
        return [value, not value]
    if not isinstance(value, int):
        return [value]  # strings: variant names need TUNABLE_CHOICES
    if leaf == "num_warps":
        return sorted(set(WARPS) | {value})
    if leaf == "num_stages":
        return sorted(set(STAGES) | {value})
    if any(p in leaf.upper() for p in POW2_KEYS) and value > 0 and value & (value - 1) == 0:
        lo = 1 if value < 16 or any(p in leaf.upper() for p in ("ROWS", "GROUP", "SPLIT")) else 16
        return sorted({v for v in (value // 4, value // 2, value, value * 2, value * 4) if v >= lo} | {value})
    return sorted({max(1, value // 2), value, value * 2})


def space(source: str) -> dict:
    """Flat key -> values; a solution may list its own in TUNABLE_CHOICES (same nesting as TUNABLES)."""
    flat = flatten(read(source))
    try:
        declared = flatten(read(source, "TUNABLE_CHOICES"))
    except TunablesError:
        declared = {}
    return {k: list(declared[k]) if k in declared else choices(k, v) for k, v in flat.items()}


def replace(source: str, tunables: dict, table: str = "") -> str:
    """The source with the TUNABLES literal swapped for `tunables` (and `table` comment lines above it)."""
    node = _assignment(ast.parse(source), "TUNABLES")
    if node is None:
        raise TunablesError("no module-level TUNABLES = {...} literal")
    lines = source.splitlines(keepends=True)
    text = "TUNABLES = " + pprint.pformat(tunables, sort_dicts=False, width=110) + "\n"
    return "".join(lines[: node.lineno - 1]) + table + text + "".join(lines[node.end_lineno:])


def config_table(rows: list[tuple[str, dict, float | None]]) -> str:
    """Comment lines: per shape class, the fastest configuration measured and its median time."""
    if not rows:
        return ""
    out = ["# ksuite optimize: fastest configuration measured per shape class\n"]
    for shape, config, us in rows:
        out.append(f"#   {shape}: {config}" + (f"  ({us:.2f} us)" if us else "") + "\n")
    return "".join(out)
