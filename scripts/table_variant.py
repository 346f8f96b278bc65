"""A copy of a family file with one bucket's entry changed in one GPU's table, for `ksuite ab FILE COPY`.

A table search discards a step whose interval's lower end misses its keep line, measured at the bucket's tuning
shapes; whether that step helps a held-out shape of the bucket (the row a bench loses) is a direct question: time
the file against this copy there, two draws (`--again`). The copy differs from the file in that one entry only.
A diagnostic, not a tuner: an entry picked at a held-out row is picked on the set that judges the table, so a change
goes into a table only through `ksuite optimize`'s keep rule at tuning shapes (README, "Shapes: what a user has,
and what we judge on").
Run from the repository root:
    python3 scripts/table_variant.py rmsnorm 'dim<=3072,batch_size<=8192' num_warps=4 HINTS=False \\
        --gpu nvidia-h100-80gb-hbm3 --out /tmp/rmsnorm-variant.py
Values are Python literals (4, False, 'rows'); a bare word is taken as a string.
"""

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def literal(text: str):
    """'4' -> 4, 'False' -> False, 'rows' -> 'rows'."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_settings(pairs: list[str]) -> dict:
    settings = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"{pair!r}: expected KEY=VALUE")
        settings[key] = literal(text)
    return settings


def variant_source(source: str, bucket: str, settings: dict, gpu: str) -> str:
    """The source with `bucket`'s entry of the table `gpu` runs set to its tunables updated by `settings`;
    ValueError for a bucket that table lacks or a key TUNABLES does not declare."""
    from suite.optimize import dispatch, tunables

    known = tunables.read(source)
    unknown = sorted(set(settings) - set(known))
    if unknown:
        raise ValueError(f"not in TUNABLES: {', '.join(unknown)} (it has {', '.join(known)})")
    configs = dispatch.read_configs(source, gpu)
    if bucket not in configs:
        raise ValueError(f"no bucket {bucket!r} in the table {gpu} runs ({dispatch.runs_from(source, gpu)})")
    table = {b: dict(entry) for b, entry in dispatch.read_table(source, gpu).items()}
    table[bucket] = {**configs[bucket], **settings}
    return dispatch.replace_entries(source, table, gpu)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem")
    parser.add_argument("bucket")
    parser.add_argument("settings", nargs="+", metavar="KEY=VALUE")
    parser.add_argument("--gpu", required=True, help="the results folder name of the GPU whose table changes")
    parser.add_argument("--solution", default="triton_family")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    path = ROOT / "solutions" / args.problem / f"{args.solution}.py"
    if not path.is_file():
        print(f"table_variant: {path}: no such solution file", file=sys.stderr)
        return 2
    try:
        text = variant_source(path.read_text(), args.bucket, parse_settings(args.settings), args.gpu)
    except Exception as exc:  # noqa: BLE001 - one line naming the file, never a traceback
        print(f"table_variant: {path}: {exc}", file=sys.stderr)
        return 2
    args.out.write_text(text)
    print(f"{args.out}: {args.problem}/{args.solution} with {args.bucket} on {args.gpu} set to {args.settings}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
