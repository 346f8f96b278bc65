"""Where a profiled command's wall time went: each cProfile file of FOLDER (the harness's workers under
KSUITE_PROFILE_DIR, the parent under `python -m cProfile -o`), its total, its N costliest calls by
cumulative time (the interpreter's own frames and click's left out) and its N/2 costliest by own time.
Usage: python scripts/profile_top.py FOLDER [N]"""

from __future__ import annotations

import io
import pstats
import sys
from pathlib import Path

SKIP = ("<frozen", "builtins.exec", "click/", "{method 'acquire'", "<string>:1(<module>)")


def top(path: Path, n: int) -> str:
    stats = pstats.Stats(str(path), stream=io.StringIO())
    rows = []
    for (file, line, name), (_, calls, own, cumulative, _) in stats.stats.items():
        where = f"{name}" if file == "~" else f"{Path(file).parent.name}/{Path(file).name}:{line}({name})"
        if not any(s in where for s in SKIP):
            rows.append((cumulative, own, calls, where))
    lines = [f"== {path.parent.name}/{path.name}: {stats.total_tt:.1f} s in profiled calls"]
    lines += [f"{c:8.2f} s {calls:8d}x  {where}" for c, _, calls, where in sorted(rows, reverse=True)[:n]]
    lines.append("-- by own time")
    lines += [f"{own:8.2f} s {calls:8d}x  {where}"
              for _, own, calls, where in sorted(rows, key=lambda r: -r[1])[:max(1, n // 2)]]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    folder, n = Path(argv[0]), int(argv[1]) if len(argv) > 1 else 30
    files = sorted(folder.glob("*.prof"))
    if not files:
        print(f"{folder}: no .prof files")
        return 1
    for path in files:
        try:
            print(top(path, n))
        except (OSError, TypeError, ValueError, EOFError) as exc:
            print(f"{path}: not a cProfile file ({exc})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
