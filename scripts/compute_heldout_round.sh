#!/usr/bin/env bash
# One device call: the Hopper matmul and attention on their held-out workload shapes (tables chosen on the
# tuning shapes only), the attention goal shapes, and runs other rounds' limits cut (RESUME, run ids).
# Every step time-bounded (seconds, env T_*). Outputs under $OUT: summary.txt (printed last),
# results.tar.gz (new and resumed run files, to commit), rest.tar.gz (logs), ksuite-cache.tar.gz.
# Run from the repository root:
#   OUT=/some/dir RESUME="20261201-095425 20261201-120218" [MULTI_GPU=1] scripts/compute_heldout_round.sh
# MULTI_GPU=1 adds scripts/multi_gpu_check.sh one (plain bench vs --gpus 0 on a small problem).
# VARIANT_PLAN=split|tuning|goal with T_VARIANTS > 0 first runs scripts/hopper_variants.py --plan VARIANT_PLAN
# (rows in variants.tsv, also under $OUT). A T_* of 0 leaves that step out. EXTRA_BENCH: more bench steps,
# one a line, "NAME|LIMIT|BENCH ARGS", e.g. a resume that needs its selection again (a run from before
# options files were written).
set -u
ROUND_START=$(date +%s)
OUT=${OUT:-/tmp/compute_heldout_round}
PY=${PY:-python3}
RESUME=${RESUME:-}
T_MATMUL=${T_MATMUL:-170}
T_ATTN=${T_ATTN:-120}
T_ATTN_GOAL=${T_ATTN_GOAL:-45}
T_RESUME=${T_RESUME:-55}
ATTN_SOLUTIONS=${ATTN_SOLUTIONS:-triton_flash_tma}  # words: the attention solutions its steps time
attn_solutions=()
for s in $ATTN_SOLUTIONS; do attn_solutions+=(--solution "$s"); done
source "$(dirname "$0")/round_lib.sh"
GPU_SLUG=${GPU_SLUG:-$(this_gpu_slug "$PY")}
start_round "$PY"
use_liger_wheel $PY

EXTRA_BENCH=${EXTRA_BENCH:-}
T_VARIANTS=${T_VARIANTS:-0}
if [ -n "${VARIANT_PLAN:-}" ]; then
    maybe_step variants "$T_VARIANTS" "$OUT/variants.tsv" $PY scripts/hopper_variants.py --plan "$VARIANT_PLAN" \
        --budget-s $(( T_VARIANTS > 25 ? T_VARIANTS - 25 : T_VARIANTS ))
fi
maybe_step matmul-heldout "$T_MATMUL" "$OUT/logs/matmul-heldout.txt" $PY -m suite bench -v matmul --shapes heldout \
    --solution triton_tma_persistent --dtype all --baselines eager --timeout 60
maybe_step attention-heldout "$T_ATTN" "$OUT/logs/attention-heldout.txt" $PY -m suite bench -v attention_causal \
    --shapes heldout "${attn_solutions[@]}" --dtype all --baselines fused --timeout 60
maybe_step attention-goal "$T_ATTN_GOAL" "$OUT/logs/attention-goal.txt" $PY -m suite bench -v attention_causal \
    "${attn_solutions[@]}" --dtype all --baselines fused --timeout 60 \
    --shape batch_size=2,num_heads=32,seq_len=4096,head_dim=128 --shape batch_size=1,num_heads=32,seq_len=8192,head_dim=64
for run in $RESUME; do
    step "resume-$run" "$T_RESUME" "$OUT/logs/resume-$run.txt" $PY -m suite bench -v --resume "$run" --fresh-baselines
done
EXTRA_RUNS=""  # runs the extra steps resume: brought back like RESUME's
while IFS='|' read -r name limit args; do
    [ -n "$name" ] || continue
    # shellcheck disable=SC2086  # the bench arguments are words
    step "$name" "$limit" "$OUT/logs/$name.txt" $PY -m suite bench -v $args < /dev/null
    resumed=$(sed -n 's/.*--resume[ =]\([^ ]*\).*/\1/p' <<< "$args")
    EXTRA_RUNS="$EXTRA_RUNS $resumed"
done <<< "$EXTRA_BENCH"
if [ -n "${MULTI_GPU:-}" ]; then  # issue 15's one-GPU path: plain bench vs --gpus 0, records equal
    step multi-gpu-one "${T_MULTI_GPU:-90}" "$OUT/logs/multi-gpu-one.txt" scripts/multi_gpu_check.sh one \
        --baselines eager --dtype fp16 --solution triton_family --solution triton_rowwise
fi
# shellcheck disable=SC2086  # run ids are words
collect_runs "$OUT/logs/results_before.txt" "$OUT/logs/results" $RESUME $EXTRA_RUNS
{
    print_steps
    for f in "$OUT"/logs/*.txt; do
        echo; echo "## $(basename "$f")"; grep -E " [bs] +[0-9x]+ |measurements|goals:" "$f" | cut -c1-230 | tail -70
    done
    [ -f "$OUT/logs/multi-gpu-one.txt" ] && tail -15 "$OUT/logs/multi-gpu-one.txt"
    [ -f "$OUT/variants.tsv" ] && { echo; echo "## variants"; sed 's/\t/  /g' "$OUT/variants.tsv" | tail -90; }
} > "$OUT/summary.txt"
tar -czf "$OUT/results.tar.gz" -C "$OUT/logs" results
tar -czf "$OUT/rest.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
cat "$OUT/summary.txt"
echo "round wall time: $(( $(date +%s) - ROUND_START )) s"
scripts/cache_pack.sh "$OUT/ksuite-cache.tar.gz"
