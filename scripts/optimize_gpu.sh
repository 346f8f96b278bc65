#!/usr/bin/env bash
# `ksuite optimize --strategy search` on a GPU machine, in one call: the given problems from their plain
# starters, each under BUDGET minutes, then the progress plots; everything it wrote lands in
# $OUT/optimize.tar.gz (ledgers, plots, kept solutions) with the log beside it.
# Usage: BUDGET=3 scripts/optimize_gpu.sh matmul attention_causal fused_mlp
set -uo pipefail
OUT=${OUT:-/tmp/ksuite-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
problems=("$@")
start=$(date +%s)
python3 -m suite optimize "${problems[@]}" --from triton_starter --strategy search \
    --budget "${BUDGET:-3}" --total-budget "${TOTAL_BUDGET:-9}" --plateau "${PLATEAU:-12}" \
    --check-shapes large 2>&1 | tee "$OUT/optimize.log"
status=${PIPESTATUS[0]}
python3 -m suite optimize --report "${problems[@]}" 2>&1 | tee -a "$OUT/optimize.log"
echo "wall time: $(( $(date +%s) - start )) s" | tee -a "$OUT/optimize.log"
slug_dir=$(ls -td results/*/ | grep -v cpu-interpreter | head -1)
kept=$(for p in "${problems[@]}"; do ls solutions/"$p"/triton_starter_opt.py 2>/dev/null; done)
tar czf "$OUT/optimize.tar.gz" "$slug_dir/optimize" $kept
exit "$status"
