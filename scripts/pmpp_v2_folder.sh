#!/usr/bin/env bash
# Put GPU MODE's pmpp_v2 problem folder (reference-kernels: problems/pmpp_v2's eval.py, utils.py and
# vectorsum_py/, unmodified) in .cache/pmpp_v2 (ignored by git), so a GPU machine with no network can run
# scripts/gpumode_official.sh on it: carry .cache/pmpp_v2 and pass GPUMODE_DIR=.cache/pmpp_v2 to
# scripts/workload_round.sh. From a git checkout (its HEAD, by git archive) or any folder holding problems/pmpp_v2.
# Usage: scripts/pmpp_v2_folder.sh REFERENCE_KERNELS_CHECKOUT
set -euo pipefail
src=${1:?usage: scripts/pmpp_v2_folder.sh REFERENCE_KERNELS_CHECKOUT}
dest=.cache/pmpp_v2
files=(problems/pmpp_v2/eval.py problems/pmpp_v2/utils.py problems/pmpp_v2/vectorsum_py)
rm -rf "$dest" && mkdir -p "$dest"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    git -C "$src" archive HEAD "${files[@]}" | tar x --strip-components=2 -C "$dest"
else
    test -d "$src/problems/pmpp_v2" || { echo "$src: no problems/pmpp_v2 folder" >&2; exit 1; }
    for f in "${files[@]}"; do cp -r "$src/$f" "$dest/"; done
fi
for f in eval.py utils.py vectorsum_py/task.yml vectorsum_py/reference.py; do
    test -f "$dest/$f" || { echo "$src: no problems/pmpp_v2/$f" >&2; exit 1; }
done
echo "pmpp_v2 folder in $dest ($(du -sh "$dest" | cut -f1))"
