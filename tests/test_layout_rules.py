"""The engine's rooms: no import cycle among our modules, no private name used across files, one
launcher for the engine's child processes, and results/ holding data only.

An AST scan of harness/, suite/ and submit/ (no imports, well under a second). Imports inside functions
count too: a lazy import that closes a cycle is still two modules that each need the other. A private
name (a leading underscore) is one file's own business; a second file that needs it wants a public name.
"""

import ast
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("harness", "suite", "submit")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def scan(name: str, source: str, where: str) -> tuple[set[str], list[str]]:
    """(the modules of ours module `name` imports, its uses of another module's private names)."""
    tree = ast.parse(source, filename=where)
    imports, aliases, found = set(), {}, []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in MODULES:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                if sub in MODULES:  # from suite import resume: the module suite.resume
                    imports.add(sub)
                    aliases[alias.asname or alias.name] = sub
                else:
                    imports.add(node.module)
                    if private(alias.name):
                        found.append(f"{where}:{node.lineno}: from {node.module} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES:
                    imports.add(alias.name)
                    aliases[alias.asname or alias.name] = alias.name
    for node in ast.walk(tree):  # module._name, harness.jobs.runner._name
        if isinstance(node, ast.Attribute) and private(node.attr):
            chain, value = [], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in aliases:
                target = ".".join([aliases[value.id], *reversed(chain)])
                if target in MODULES and target != name:
                    found.append(f"{where}:{node.lineno}: {target}.{node.attr}")
    imports.discard(name)
    return imports, found


SCANNED = {name: scan(name, path.read_text(), str(path.relative_to(ROOT))) for name, path in MODULES.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle():
    graph = {name: imports for name, (imports, _) in SCANNED.items()}
    assert cycles(graph) == []


def test_the_cycle_finder_finds_one():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_private_name_used_across_files():
    assert [use for _, uses in SCANNED.values() for use in uses] == []


def test_the_private_scan_sees_both_forms():
    source = ("def f():\n    from harness.jobs.runner import _x\n"
              "import harness.jobs.runner as r\nr._y()\nr.__name__\n")
    imports, uses = scan("suite.cli", source, "suite/cli.py")
    assert imports == {"harness.jobs.runner"}
    assert uses == ["suite/cli.py:2: from harness.jobs.runner import _x",
                    "suite/cli.py:4: harness.jobs.runner._y"]


def test_results_hold_data_only():
    """Code under results/ (the optimiser's candidates once were) belongs in solutions/ or the cache. Tracked
    files only: an old local run's leftovers in an ignored folder are not the repository's."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = subprocess.run(["git", "ls-files", "results"], cwd=ROOT, capture_output=True, text=True, check=True)
    assert [line for line in tracked.stdout.splitlines() if line.endswith(".py")] == []


LAUNCHER = "harness/children/launcher.py"


def process_starts(source: str, where: str) -> list[str]:
    """Where a file starts a Python child: subprocess.Popen, or sys.executable on a command line."""
    found = []
    for node in ast.walk(ast.parse(source, filename=where)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in {("subprocess", "Popen"), ("sys", "executable")}:
                found.append(f"{where}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_only_the_launcher_starts_children():
    """The engine has one launcher (harness/children/): everything else that needs a child (the runner, the
    pool, pairwise timing, CUDA prebuilds, offline compiles) goes through it. Tools run to an answer (nvcc,
    cuobjdump, nvidia-smi, git) are not children."""
    starts = [hit for name, path in MODULES.items() if name.startswith("harness.")
              and str(path.relative_to(ROOT)) != LAUNCHER
              for hit in process_starts(path.read_text(), str(path.relative_to(ROOT)))]
    assert starts == []
    assert process_starts((ROOT / LAUNCHER).read_text(), LAUNCHER) != []  # the scan sees the launcher's own


def test_the_start_scan_sees_both_forms():
    source = "import subprocess, sys\nsubprocess.Popen([sys.executable, '-m', 'x'])\nsubprocess.run(['nvcc'])\n"
    assert process_starts(source, "x.py") == ["x.py:2: subprocess.Popen", "x.py:2: sys.executable"]
