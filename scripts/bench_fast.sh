#!/usr/bin/env bash
# Bench the fast Triton solutions (triton_rowwise, triton_split, triton_heads, triton_flat,
# triton_balanced) beside the starters (and vectorsum_v2's triton_single_pass) and the baselines, at
# the large shapes, on a GPU machine, into one run file; the log, the run file and a summary land in $OUT.
# A --solution name must exist in every problem of a `ksuite bench` call, so there is one call per
# solution name; the calls after the first resume the first call's run, so the records share one file.
# Usage: scripts/bench_fast.sh [PROBLEM...]   (only these problems; BASELINES=0 times the solutions only)
set -uo pipefail
OUT=${OUT:-/tmp/ksuite-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
log="$OUT/bench_fast.log"
: > "$log"
extra=()
[[ ${BASELINES:-1} == 0 ]] && extra+=(--no-baselines)

# "new solutions: problems", benched with each problem's triton_starter
groups=(
    "triton_rowwise: rmsnorm layernorm softmax reduce_rows"
    "triton_split: cross_entropy"
    "triton_heads: rotary"
    "triton_flat: swiglu_act"
    "triton_balanced triton_single_pass: vectorsum_v2"
)
start=$(date +%s)
run_id=""
status=0
for group in "${groups[@]}"; do
    read -r -a solutions <<< "${group%%:*}"
    read -r -a problems <<< "${group#*:}"
    if (( $# )); then  # keep the asked-for problems of this group
        wanted=()
        for p in "${problems[@]}"; do [[ " $* " == *" $p "* ]] && wanted+=("$p"); done
        (( ${#wanted[@]} )) || continue
        problems=("${wanted[@]}")
    fi
    args=(--shapes large --solution triton_starter)
    for s in "${solutions[@]}"; do args+=(--solution "$s"); done
    [[ -n $run_id ]] && args+=(--resume "$run_id")
    python3 -m suite bench "${problems[@]}" "${args[@]}" "${extra[@]}" 2>&1 | tee -a "$log"
    rc=${PIPESTATUS[0]}
    (( rc != 0 )) && status=$rc
    if [[ -z $run_id ]]; then  # "recorded in results/<gpu>/<run id>.jsonl"
        run_id=$(grep -o 'recorded in [^ ]*\.jsonl' "$log" | tail -1 | sed 's#.*/##; s#\.jsonl$##')
    fi
done
echo "wall time: $(( $(date +%s) - start )) s; run ${run_id:-none}" | tee -a "$log"
if [[ -n $run_id ]]; then
    cp results/*/"$run_id".jsonl "$OUT/" 2>/dev/null
    python3 -m suite report "$run_id" --summary --format md > "$OUT/bench_fast_summary.md" 2>&1
fi
exit "$status"
