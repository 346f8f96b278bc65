"""cuBLAS's Hopper kernels read as tiles: for each row of a scripts/cublas_draw_probe.py TSV, the nvjet tile cuBLAS
launched, the rows and columns it computes, how full its waves are, and the token-fitted width rule's width beside it.

Why: at 520-800 tokens cuBLAS leads both our kernels by 10-40 % on the H100 (solutions/matmul/NOTES.md, "The H100's
weak mid rows"), and its kernel names there (nvjet_sm90_tst_128x176_64x5_4x1_v_bz_NNT at 520x8192x10240) look like
tiles whose token side is cut to the rows: read as N x M, 520 rows in three tiles of 176. The rule under test: split
the rows into as few tiles of at most 176 as fit, each rounded up to 8 (wgmma's N step). Each name is shown under both
readings (N x M and M x N), so the rows decide the reading rather than this script. The rule is about mid rows
(500-1000): at thousands of rows its width is printed but means nothing.

    python3 scripts/nvjet_tiles.py TSV [TSV ...] [--sms 132] [--widest 176]
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import sys
from pathlib import Path

NAME = re.compile(r"nvjet_sm90_\w*?_(\d+)x(\d+)_(\d+)x(\d+)_(\d+)x(\d+)_([a-z])_")


def parse(kernel: str) -> dict | None:
    """The tile of an nvjet kernel name (the first of ';'-joined names that is one), or None."""
    match = next((m for m in map(NAME.search, kernel.split(";")) if m), None)
    if match is None:
        return None
    first, second, k, stages, c1, c2, raster = match.groups()
    return {"first": int(first), "second": int(second), "k": int(k), "stages": int(stages),
            "cluster": (int(c1), int(c2)), "raster": raster}


def fitted_width(rows: int, widest: int = 176) -> int:
    """The token side the rule names: `rows` in as few tiles of at most `widest` as fit, rounded up to 8."""
    tiles = math.ceil(rows / widest)
    return 8 * math.ceil(rows / tiles / 8)


def fill(m: int, n: int, tile_m: int, tile_n: int, sms: int) -> tuple[float, float, int]:
    """(share of computed elements that are C's, share of the waves' slots busy, tile count)."""
    tiles_m, tiles_n = math.ceil(m / tile_m), math.ceil(n / tile_n)
    tiles = tiles_m * tiles_n
    return m * n / (tiles_m * tile_m * tiles_n * tile_n), tiles / (math.ceil(tiles / sms) * sms), tiles


def describe(shape: str, kernel: str, sms: int, widest: int) -> str:
    m, _k, n = (int(v) for v in shape.split("x"))
    tile = parse(kernel)
    if tile is None:
        return f"{shape}\t-\tnot an nvjet kernel: {kernel}"
    cells = []
    readings = (("NxM", (tile["second"], tile["first"])), ("MxN", (tile["first"], tile["second"])))
    for reading, (tile_m, tile_n) in readings:
        padding, waves, tiles = fill(m, n, tile_m, tile_n, sms)
        cells.append(f"{reading}: {tiles} tiles, rows {padding:.2f}, waves {waves:.2f}")
    width = fitted_width(m, widest)
    verdict = "same" if width == tile["second"] else "other"
    return (f"{shape}\t{tile['first']}x{tile['second']} {tile['cluster'][0]}x{tile['cluster'][1]} {tile['raster']}\t"
            + "\t".join(cells) + f"\trule {width} ({verdict})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tsv", nargs="+", type=Path)
    parser.add_argument("--sms", type=int, default=132)
    parser.add_argument("--widest", type=int, default=176)
    args = parser.parse_args(argv)
    for path in args.tsv:
        try:
            rows = list(csv.DictReader(path.open(), delimiter="\t"))
        except OSError as exc:
            print(f"{path}: cannot read: {exc.strerror}", file=sys.stderr)
            return 2
        if rows and not {"shape", "kernel"} <= set(rows[0]):
            print(f"{path}: not a cublas_draw_probe TSV (no shape and kernel columns)", file=sys.stderr)
            return 2
        for row in rows:
            print(describe(row["shape"], row["kernel"], args.sms, args.widest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
