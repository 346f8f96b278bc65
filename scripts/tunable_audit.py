"""Which tunables change nothing at a shape: every single step of a Triton solution's tunables (the values
TUNABLE_CHOICES allows) compiled for sm_90 offline beside the shape's own configuration.

A step whose launches come out the same as the base's (kernel names, grids, warps, stages and PTX) is a
no-op there, and a table search that times it times one kernel twice. Matmul's FLATTEN was one for three
sessions (Triton left the loops apart: the K loop's bounds changed with the tile); rmsnorm's BLOCK_N is one
wherever ONE_PASS holds the row. Each variant is the solution file with TUNABLES set to the shape's
configuration plus the step and DISPATCH emptied, compiled through harness.machine_code.offline_compile
(a child process each: a few seconds). No GPU needed.

Usage: python3 scripts/tunable_audit.py PROBLEM SOLUTION SHAPE [--dtype float16] [--only KEY,...] [--out F.tsv]
  e.g. python3 scripts/tunable_audit.py matmul triton_tma_persistent 6144x768x3072
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.loader import load_problem  # noqa: E402
from harness.machine_code.offline_compile import OfflineCompileError, compile_launches  # noqa: E402
from harness.shape_spec import custom_shapes  # noqa: E402
from suite.optimize import dispatch, tunables  # noqa: E402

CAPABILITY = 90


def fingerprint(launches) -> str:
    """What the GPU would run: each launch's kernel, grid, warps, stages and PTX, hashed."""
    digest = hashlib.sha256()
    for launch in launches:
        digest.update(f"{launch.kernel}|{launch.grid}|{launch.num_warps}|{launch.num_stages}|".encode())
        digest.update(launch.ptx.encode())
    return digest.hexdigest()[:12]


def variant_source(source: str, config: dict) -> str:
    """The solution with every shape running `config` (flat keys): TUNABLES set, DISPATCH emptied."""
    text = tunables.replace(source, tunables.unflatten(config))
    return dispatch.write_table(text, {}) if dispatch.has_dispatch(text) else text


def steps(config: dict, space: dict, only: set[str]) -> list[tuple[str, object]]:
    return [(key, value) for key, values in space.items() if not only or key in only
            for value in values if value != config.get(key)]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("problem")
    ap.add_argument("solution")
    ap.add_argument("shape")
    ap.add_argument("--dtype", default="float16")
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    problem_path = ROOT / "problems" / f"{args.problem}.py"
    solution_path = ROOT / "solutions" / args.problem / f"{args.solution}.py"
    shape = custom_shapes(load_problem(problem_path, "ksuite_audit_problem"), (args.shape,))[0]
    source = solution_path.read_text()
    bucket, config = dispatch.config_for(source, shape) if dispatch.has_dispatch(source) else \
        ("-", tunables.read(source))
    config = tunables.flatten(config)
    rows = [f"# {args.problem}/{args.solution} at {args.shape} {args.dtype}, bucket {bucket}: sm_{CAPABILITY} offline"]
    numbers = itertools.count()
    with tempfile.TemporaryDirectory(prefix="ksuite-audit-") as folder:
        def compiled(cfg: dict) -> str:
            path = Path(folder) / f"v{next(numbers)}_{solution_path.name}"
            path.write_text(variant_source(source, cfg))
            try:
                return fingerprint(compile_launches(problem_path, path, shape, args.dtype, CAPABILITY))
            except OfflineCompileError as exc:
                return "failed: " + str(exc).splitlines()[0][-120:]

        base = compiled(config)
        rows.append(f"base\t{base}\t{config}")
        for key, value in steps(config, tunables.space(source), set(filter(None, args.only.split(",")))):
            got = compiled({**config, key: value})
            verdict = "NO-OP" if got == base else ("failed" if got.startswith("failed") else "changes")
            rows.append(f"{key}\t{config.get(key)}->{value}\t{verdict}\t{got}")
            print(rows[-1], file=sys.stderr, flush=True)  # progress; the table comes last, on stdout
    text = "\n".join(rows) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
