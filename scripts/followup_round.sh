#!/usr/bin/env bash
# One device call for the work other rounds' time limits left, each step time-bounded (seconds, env T_*):
#   variants   scripts/hopper_variants.py --plan tuning: hand-picked tunables of the Hopper matmul and
#              attention on their tuning-set shapes only (the held-out bench of a later round judges the
#              tables chosen from these rows)
#   extracted  `ksuite bench` of the extracted problems in EXTRACTED (problem=solution[,solution] ...),
#              every baseline side by side, one run each
#   resume     `ksuite bench --resume RESUME` (a run a former round's limit cut), when RESUME is set
# A step whose limit is 0 (T_VARIANTS=0, ...) is left out.
# Outputs under $OUT (8 files at most): summary.txt (printed last), variants.tsv, results.tar.gz (new run
# files and the resumed one, to commit), rest.tar.gz (logs), ksuite-cache.tar.gz. Liger is installed from
# .whl/ when carried. Run from the repository root:
#   OUT=/some/dir RESUME=20261201-095425 scripts/followup_round.sh
set -u
ROUND_START=$(date +%s)
OUT=${OUT:-/tmp/followup_round}
PY=${PY:-python3}
EXTRACTED=${EXTRACTED:-"extracted/llama3-8b-4-layers/swiglu_act__8192x14336_bf16=triton_family"}
RESUME=${RESUME:-}
T_VARIANTS=${T_VARIANTS:-200}
T_EXTRACTED=${T_EXTRACTED:-150}  # torch.compile and max-autotune of swiglu_act took 75 s alone
T_RESUME=${T_RESUME:-70}
source "$(dirname "$0")/round_lib.sh"
GPU_SLUG=${GPU_SLUG:-$(this_gpu_slug "$PY")}
start_round "$PY"
use_liger_wheel $PY

maybe_step variants "$T_VARIANTS" "$OUT/variants.tsv" $PY scripts/hopper_variants.py --plan tuning \
    --budget-s $(( T_VARIANTS > 25 ? T_VARIANTS - 25 : T_VARIANTS ))
for entry in $EXTRACTED; do
    name=${entry%%=*} sols=${entry#*=}
    op=${name##*/}; op=${op%%__*}
    args=(); for s in ${sols//,/ }; do args+=(--solution "$s"); done
    maybe_step "bench-$op" "$T_EXTRACTED" "$OUT/logs/bench-$op.txt" $PY -m suite bench -v "$name" "${args[@]}" \
        --fresh-baselines
done
if [ -n "$RESUME" ]; then
    maybe_step resume "$T_RESUME" "$OUT/logs/resume.txt" $PY -m suite bench -v --resume "$RESUME" --fresh-baselines
fi
collect_runs "$OUT/logs/results_before.txt" "$OUT/logs/results" $RESUME

{
    print_steps
    for f in "$OUT"/logs/bench-*.txt "$OUT/logs/resume.txt"; do
        [ -f "$f" ] && { echo; echo "## $(basename "$f")"; tail -12 "$f"; }
    done
    echo; echo "## variants (tuning shapes)"; sed 's/\t/  /g' "$OUT/variants.tsv" | tail -80
} > "$OUT/summary.txt"
tar -czf "$OUT/results.tar.gz" -C "$OUT/logs" results
tar -czf "$OUT/rest.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
cat "$OUT/summary.txt"
echo "round wall time: $(( $(date +%s) - ROUND_START )) s"
scripts/cache_pack.sh "$OUT/ksuite-cache.tar.gz"
