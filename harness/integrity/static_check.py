"""Source check of a candidate file, before it ever runs: the cheats that are plain to see in the text.

Some tricks pass every numerical check because the answer they return is right: a forward that falls
back to torch when its kernel fails, a candidate that builds the problem's own `Model` and calls it, a
file with no kernel at all. Reading the source with `ast` catches them cheaply and names the line.
"""

from __future__ import annotations

import ast
from pathlib import Path

REFERENCE_NAMES = {"Model", "ModelFused", "get_inputs", "get_init_inputs"}
# reflection that can reach the caller's frames or objects (the reference, its inputs, its outputs)
INTROSPECTION = {("sys", "_getframe"), ("inspect", "stack"), ("inspect", "currentframe"),
                 ("inspect", "getouterframes"), ("gc", "get_objects"), ("gc", "get_referrers")}
DYNAMIC_CODE = {"exec", "eval", "__import__"}
CUDA_BUILDERS = {"load_inline", "load"}
FORWARDS = {"forward", "__call__"}
# modules a candidate must never patch: the timers, torch (its events, synchronize, allclose, testing),
# triton, the harness itself, and what the harness's checks call (threads, gc, statistics, imports)
PATCH_GUARDED = {"time", "torch", "triton", "harness", "sys", "builtins", "importlib", "gc", "threading",
                 "statistics"}
PATCHERS = {("setattr",), ("delattr",), ("__setattr__",), ("__delattr__",)}
PATCH_HELPERS = {"patch", "object", "multiple", "dict"}  # unittest.mock.patch(...), patch.object(...), ...
PATCH_REASON = "a candidate must not patch timers, torch, triton or the harness"


def check_file(path: Path, problem_path: Path | None = None) -> str | None:
    """The first problem found in the candidate's source, naming its line; None if it reads clean."""
    source = Path(path).read_text()
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError:
        return None  # the loader reports syntax errors with their line
    return check_tree(tree, Path(path).name, Path(problem_path).stem if problem_path else None)


def check_tampering(path: Path) -> str | None:
    """Only the patching rule (timers, torch, triton, the harness replaced or deleted), naming the line:
    run before the candidate is imported, since an import that patches has already done its harm."""
    try:
        tree = ast.parse(Path(path).read_text(), filename=str(path))
    except SyntaxError:
        return None
    found = _tampering(tree, set(), None)
    return f"{Path(path).name} line {found[0].lineno}: {found[1]}" if found else None


def check_tree(tree: ast.Module, filename: str, problem_stem: str | None = None) -> str | None:
    aliases = _torch_aliases(tree)
    for finder in (_tampering, _reference_use, _introspection, _torch_fallback):
        found = finder(tree, aliases, problem_stem)
        if found:
            node, what = found
            return f"{filename} line {node.lineno}: {what}"
    if not _has_own_kernel(tree):
        return (f"{filename}: no kernel of its own (no @triton.jit function and no CUDA extension built with "
                "torch.utils.cpp_extension load_inline/load)")
    return None


def _torch_aliases(tree: ast.Module) -> set[str]:
    """Local names bound to torch or one of its submodules (torch, F, nn, th, ...)."""
    names = {"torch"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] == "torch"}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
            names |= {a.asname or a.name for a in node.names}
    return names


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _dotted(node: ast.AST) -> tuple[str, ...]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return tuple(reversed(parts))


def _reference_use(tree, aliases, problem_stem):
    """Imports of the problem module, or any use of its Model / ModelFused / get_inputs."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names = {a.name for a in node.names}
            if (problem_stem and (node.module or "").split(".")[-1] == problem_stem) or names & REFERENCE_NAMES:
                return node, f"imports the problem's reference ({node.module})"
        elif isinstance(node, ast.Import) and problem_stem:
            if any(a.name.split(".")[-1] == problem_stem for a in node.names):
                return node, f"imports the problem module {problem_stem}"
        elif isinstance(node, ast.Name) and node.id in REFERENCE_NAMES and isinstance(node.ctx, ast.Load):
            return node, f"uses the reference's {node.id} (the candidate must compute the answer itself)"
        elif isinstance(node, ast.Attribute) and node.attr in REFERENCE_NAMES:
            return node, f"uses the reference's {node.attr} (the candidate must compute the answer itself)"
    return None


def _introspection(tree, aliases, problem_stem):
    """Reflection into the caller and dynamic code: ways to reach the reference that no reader can see."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and node.func.id in DYNAMIC_CODE:
            return node, f"calls {node.func.id}() (dynamic code the source check cannot read)"
        dotted = _dotted(node.func)
        if dotted[-2:] in INTROSPECTION or (dotted[:1] == ("sys",) and "modules" in dotted):
            return node, f"calls {'.'.join(dotted)} (reaches into the caller's frames or objects)"
    return None


def _guarded_names(tree: ast.Module) -> set[str]:
    """Local names bound to a guarded module or to something in one: `import time as t`, `from torch.cuda
    import Event`, `E = torch.cuda.Event` (a plain attribute chain; a call's result is the caller's own)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.asname or a.name.split(".")[0] for a in node.names if a.name.split(".")[0] in PATCH_GUARDED}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in PATCH_GUARDED:
            names |= {a.asname or a.name for a in node.names}
    for node in ast.walk(tree):  # aliases of aliases: one more pass covers `E = torch.cuda.Event; F = E`
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Attribute, ast.Name)):
            if _dotted(node.value) and _dotted(node.value)[0] in names | PATCH_GUARDED:
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _base_name(node: ast.AST) -> str | None:
    """The name an attribute, item or call chain starts from; vars(x) and getattr(x, ...) lead to x."""
    while True:
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        elif isinstance(node, ast.Call):
            plain = isinstance(node.func, ast.Name) and node.func.id in ("vars", "getattr") and node.args
            node = node.args[0] if plain else node.func
        else:
            return node.id if isinstance(node, ast.Name) else None


def _patch_target(node: ast.AST, guarded: set[str]) -> str | None:
    """'time.perf_counter' for a target or argument reaching into a guarded module, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # mock.patch("time.perf_counter")
        return node.value if node.value.split(".")[0] in PATCH_GUARDED and "." in node.value else None
    return ast.unparse(node) if _base_name(node) in guarded else None


def _tampering(tree, aliases, problem_stem):
    """Assignments, deletions, setattr/delattr and mock/monkeypatch calls that replace something in the
    timers, torch, triton or the harness: it would change what every later measurement in the process sees."""
    guarded = _guarded_names(tree) | PATCH_GUARDED
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            flat = [e for t in targets for e in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])]
            for target in flat:
                name = isinstance(target, (ast.Attribute, ast.Subscript)) and _patch_target(target, guarded)
                if name:
                    verb = "deletes" if isinstance(node, ast.Delete) else "replaces"
                    return node, f"{verb} {name} ({PATCH_REASON})"
        elif isinstance(node, ast.Call) and node.args:
            dotted = _dotted(node.func)
            if dotted[-1:] != ("setattr",) and isinstance(node.args[0], ast.Call):
                continue  # patch(torch.empty(3)): a helper of the candidate's own, given its own tensor
            if dotted[-1:] in PATCHERS or (dotted and dotted[-1] in PATCH_HELPERS and "patch" in dotted):
                name = _patch_target(node.args[0], guarded)
                if name:
                    attr = node.args[1] if len(node.args) > 1 and dotted[-1:] != ("patch",) else None
                    if isinstance(attr, ast.Constant) and isinstance(attr.value, str):
                        name = f"{name}.{attr.value}"
                    return node, f"patches {name} with {'.'.join(dotted)}() ({PATCH_REASON})"
    return None


def _torch_fallback(tree, aliases, problem_stem):
    """An except handler that computes with torch (or returns a value) instead of failing."""
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for handler in (n for n in ast.walk(fn) if isinstance(n, ast.ExceptHandler)):
            inside = [n for stmt in handler.body for n in ast.walk(stmt)]
            for node in inside:
                if isinstance(node, ast.Call) and _root(node.func) in aliases:
                    return node, f"falls back to torch in an except handler ({ast.unparse(node.func)})"
            for node in inside:
                if (fn.name in FORWARDS and isinstance(node, ast.Return) and node.value is not None
                        and not _is_none(node.value)):
                    return node, f"{fn.name} returns a fallback result from an except handler instead of failing"
    return None


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _imported_names(tree: ast.Module) -> set[str]:
    return {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
            for a in n.names if (n.module or "").startswith(("triton", "torch.utils.cpp_extension"))}


def _has_own_kernel(tree: ast.Module) -> bool:
    """A @triton.jit function, or a call to torch.utils.cpp_extension's load_inline / load."""
    imported = _imported_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                name = _dotted(dec.func if isinstance(dec, ast.Call) else dec)
                if name[-1:] == ("jit",) and ("triton" in name or name == ("jit",) and "jit" in imported):
                    return True
    return builds_cuda_extension(tree)


def builds_cuda_extension(tree: ast.Module) -> bool:
    """A call to torch.utils.cpp_extension's load_inline / load: a CUDA C++ solution (harness/cuda_build)."""
    imported = _imported_names(tree)
    ext_modules = {"cpp_extension"} | {a.asname for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                                       for a in n.names if a.asname and a.name.endswith("cpp_extension")}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name[-1:] and name[-1] in CUDA_BUILDERS and (ext_modules & set(name) or
                                                            (len(name) == 1 and name[0] in imported)):
                return True
    return False
