"""The held-out shapes of a problem that fall in some buckets of its family, as `--shape` options: what a table
search of those buckets changed, asked where it was not tuned.

Why: `ksuite ab PROBLEM BEFORE triton_family --again` at every held-out shape spends most of its rounds on shapes a
search of two buckets cannot have moved; these are the ones it can (rmsnorm's search of rows of 4097-8192 columns,
2026-12-06: 3001x8192 and 4096x8192 of the 13). Prints nothing (and exits 1) where no held-out shape is in them.
Usage: python3 scripts/heldout_in_buckets.py PROBLEM [--family FILE] --bucket GLOB [--bucket GLOB ...]
  e.g. python3 -m suite ab rmsnorm BEFORE triton_family $(python3 scripts/heldout_in_buckets.py rmsnorm \
       --bucket 'dim<=8192,batch_size<=8192') --again
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def heldout_in(problem: str, family: Path, patterns: list[str]) -> list[dict]:
    """The problem's held-out shapes whose bucket in `family` matches one of the glob patterns, in the set's order."""
    from harness.loader import load_problem
    from suite.optimize import dispatch

    buckets = dispatch.read_buckets(family.read_text())
    meta = load_problem(ROOT / "problems" / f"{problem}.py", "ksuite_heldout_in_buckets").meta
    return [s for s in meta.sweep("heldout") if dispatch.matches(dispatch.bucket_of(s, buckets), patterns)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem")
    parser.add_argument("--family", type=Path, help="the family file (default solutions/PROBLEM/triton_family.py)")
    parser.add_argument("--bucket", action="append", required=True, help="a bucket glob, as `ksuite optimize` takes")
    args = parser.parse_args(argv)
    family = args.family or ROOT / "solutions" / args.problem / "triton_family.py"
    if not family.is_file():
        parser.error(f"{family}: no such family file")
    from suite.confirm import shape_spec
    from suite.optimize import dispatch

    stray = dispatch.stray_pattern_error(family, family.read_text(), args.bucket)
    if stray:
        parser.error(stray)
    shapes = heldout_in(args.problem, family, args.bucket)
    print(" ".join(f"--shape {shlex.quote(shape_spec(s))}" for s in shapes))
    return 0 if shapes else 1


if __name__ == "__main__":
    sys.exit(main())
