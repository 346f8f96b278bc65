"""What torch.compile chose for each kernel it generated, read from an inductor cache folder: its kind, sizes, dtypes
and the launch its autotuner kept (XBLOCK, R0_BLOCK, num_warps, num_stages).

Why: a family's search seeds are best when they start from the baselines' own launches. torch.compile's are not
documented per shape, but its cache holds them: each generated kernel file (`@triton_heuristics.pointwise(...)`,
`persistent_reduction`, `reduction`) with the sizes written into its body, and beside it a `.best_config` JSON with
the configuration it kept. Rotary's decode seed came from reading one (solutions/rotary/NOTES.md, 2026-12-05).

A `.best_config` is paired with the kernel file in its folder only where that folder holds one kernel; elsewhere the
row says "ambiguous". Kernels with no `.best_config` (a heuristic launch, not autotuned) say "-".

Usage: python3 scripts/compile_launches.py CACHE_DIR [CACHE_DIR...]   (e.g. .cache/ksuite/inductor; TSV on stdout)
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

COLUMNS = ("kernel", "kind", "sizes", "dtypes", "max_autotune", "XBLOCK", "R0_BLOCK", "num_warps", "num_stages",
           "file")
KIND = re.compile(r"@triton_heuristics\.(\w+)\(")
NAME = re.compile(r"^def (triton_\w+)\(", re.M)
SIZE = re.compile(r"^\s+(\w*numel) = (\d+)$", re.M)
SIGNATURE = re.compile(r"'signature': \{([^}]*)\}")
POINTER = re.compile(r"'(\w+)': '\*(\w+)'")
MAX_AUTOTUNE = re.compile(r"'max_autotune': (True|False)")


def kernel_fields(source: str) -> dict | None:
    """The kernel file's own fields, or None for a file that is not one generated kernel (a graph's wrapper, which
    embeds its kernels in strings and calls async_compile)."""
    kind, name = KIND.search(source), NAME.search(source)
    if not kind or not name or "async_compile.triton(" in source:
        return None
    signature = SIGNATURE.search(source)
    dtypes = sorted({dtype for _, dtype in POINTER.findall(signature.group(1))}) if signature else []
    autotune = MAX_AUTOTUNE.search(source)
    return {"kernel": name.group(1), "kind": kind.group(1),
            "sizes": ",".join(f"{k}={v}" for k, v in SIZE.findall(source)),
            "dtypes": ",".join(dtypes), "max_autotune": autotune.group(1) if autotune else "-"}


def kept_launch(folder: Path, kernels_here: int) -> dict:
    """The folder's one `.best_config`, if it can be told whose it is."""
    configs = sorted(folder.glob("*.best_config"))
    if not configs:
        return {}
    if kernels_here != 1 or len(configs) != 1:
        return {"XBLOCK": "ambiguous"}
    try:
        return json.loads(configs[0].read_text())
    except (OSError, json.JSONDecodeError) as exc:
        return {"XBLOCK": f"unreadable: {exc}"}


def launches(root: Path) -> list[dict]:
    rows = []
    for folder in sorted({path.parent for path in root.rglob("*.py")}):
        kernels = [(path, fields) for path in sorted(folder.glob("*.py"))
                   if (fields := kernel_fields(path.read_text(errors="replace")))]
        kept = kept_launch(folder, len(kernels))
        for path, fields in kernels:
            rows.append({**fields, **{k: kept.get(k, "-") for k in COLUMNS[5:9]}, "file": str(path.relative_to(root))})
    return rows


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    print("\t".join(COLUMNS))
    for arg in argv:
        root = Path(arg)
        if not root.is_dir():
            print(f"{arg}: not a folder", file=sys.stderr)
            return 1
        for row in launches(root):
            print("\t".join(str(row[c]) for c in COLUMNS))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
