#!/usr/bin/env bash
# Put CUTLASS's headers (NVIDIA/cutlass: include/cutlass, include/cute, and tools/util/include's cutlass/util
# helpers merged into the same folder; about 30 MB) where solutions/matmul/cuda_cutlass.py looks for them:
# .cache/cutlass/include (ignored by git), and the Hopper attention collectives of CUTLASS's examples/88_hopper_fmha
# (not part of include/) in .cache/cutlass/fmha, for solutions/attention_causal/cuda_cutlass_fmha.py; and both as
# .cache/cutlass.tar.gz (about 3 MB), what a GPU machine without network is carried: the rounds unpack it.
# From a git checkout (its HEAD, by git archive) or any folder holding include/.
# Usage: scripts/cutlass_headers.sh CUTLASS_CHECKOUT   (or set KSUITE_CUTLASS_DIR=CHECKOUT/include instead)
set -euo pipefail
src=${1:?usage: scripts/cutlass_headers.sh CUTLASS_CHECKOUT}
dest=.cache/cutlass
rm -rf "$dest" && mkdir -p "$dest"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    git -C "$src" archive HEAD include | tar x -C "$dest"
    git -C "$src" archive HEAD tools/util/include | tar x --strip-components=3 -C "$dest/include"
    mkdir -p "$dest/fmha"
    git -C "$src" archive HEAD examples/88_hopper_fmha | tar x --strip-components=2 -C "$dest/fmha"
else
    cp -r "$src/include" "$dest/"
    cp -r "$src/tools/util/include/." "$dest/include/"
    mkdir -p "$dest/fmha" && cp -r "$src/examples/88_hopper_fmha/." "$dest/fmha/"
fi
test -f "$dest/include/cutlass/cutlass.h" || { echo "$src: no include/cutlass/cutlass.h" >&2; exit 1; }
tar czf .cache/cutlass.tar.gz -C .cache cutlass  # what a GPU call carries (round_lib.sh's unpack_cutlass)
echo "CUTLASS headers in $dest/include ($(du -sh "$dest" | cut -f1)); archive .cache/cutlass.tar.gz" \
    "($(du -sh .cache/cutlass.tar.gz | cut -f1))"
