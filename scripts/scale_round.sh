#!/usr/bin/env bash
# One device call for the scale and compute-bound measurements CPU work left open, each step time-bounded
# (seconds, env T_*; 0 leaves a step out):
#   kb-resume   `ksuite kernelbench run --resume KB_RUN` (the upstream level-1 run a former call's limit cut)
#   kb-sliced   a new `kernelbench run` of KB_SLICED_IDS: the problems whose float64 reference now runs on
#               the device in slices (harness/independence.py), to time against the run before
#   stages      `ksuite check PROBLEM SOLUTION --shapes large` for each PROBLEM:SOLUTION of STAGES: seconds per
#               correctness stage, and each worker under cProfile (KSUITE_PROFILE_DIR): stages-profile.txt
#   bench-part  `ksuite bench BENCH_PART` (every solution and baseline, large shapes, primary dtype): a part of
#               `make bench`, whose records' stages_s and timestamps say what each solution costs cold
#   cutlass     `ksuite bench matmul` of cuda_cutlass beside triton_tma_persistent and cuBLAS (needs
#               .cache/cutlass carried: scripts/cutlass_headers.sh; else the solution is skipped, saying so)
# Outputs under $OUT (8 files at most): summary.txt (printed last), results.tar.gz (new run files and the
# resumed one, with their options files: commit them), rest.tar.gz (logs), kb-peaks.txt, stages-profile.txt
# (each checking worker's 30 costliest calls: scripts/profile_top.py). Run from the
# repository root:   OUT=/some/dir KB_RUN=20261201-173006 scripts/scale_round.sh
set -u
ROUND_START=$(date +%s)
OUT=${OUT:-/tmp/scale_round}
PY=${PY:-python3}
KB_TREE=${KB_TREE:-.cache/kb/KernelBench}
KB_RUN=${KB_RUN:-}
KB_SLICED_IDS=${KB_SLICED_IDS:-25,30,41,42,43,88,91,92}
STAGES=${STAGES:-cross_entropy:triton_family cross_entropy:cuda_online_lse rmsnorm:triton_starter}
T_KB_RESUME=${T_KB_RESUME:-300}
T_KB_SLICED=${T_KB_SLICED:-150}
T_STAGES=${T_STAGES:-60}
T_CUTLASS=${T_CUTLASS:-0}
BENCH_PART=${BENCH_PART:-cross_entropy layernorm}
T_BENCH_PART=${T_BENCH_PART:-0}
source "$(dirname "$0")/round_lib.sh"
GPU_SLUG=${GPU_SLUG:-$(this_gpu_slug "$PY")}
start_round "$PY"

if [ -n "$KB_RUN" ]; then
    maybe_step kb-resume "$T_KB_RESUME" "$OUT/logs/kb-resume.txt" $PY -m suite kernelbench run --level 1 \
        --resume "$KB_RUN"
fi
maybe_step kb-sliced "$T_KB_SLICED" "$OUT/logs/kb-sliced.txt" $PY -m suite kernelbench run "$KB_TREE" --level 1 \
    --ids "$KB_SLICED_IDS" --timeout 120
for pair in $STAGES; do  # each pair a step of its own: T_STAGES seconds each
    export KSUITE_PROFILE_DIR="$OUT/logs/profiles/${pair/:/-}"
    mkdir -p "$KSUITE_PROFILE_DIR"
    maybe_step "stages-${pair/:/-}" "$T_STAGES" \
        "$OUT/logs/stages-${pair/:/-}.txt" $PY -m cProfile -o "$KSUITE_PROFILE_DIR/parent.prof" -m suite check \
        "${pair%%:*}" "${pair#*:}" --shapes large
done
unset KSUITE_PROFILE_DIR
maybe_step bench-part "$T_BENCH_PART" "$OUT/logs/bench-part.txt" $PY -m suite bench $BENCH_PART
maybe_step cutlass "$T_CUTLASS" "$OUT/logs/cutlass.txt" $PY -m suite bench -v matmul --solution cuda_cutlass \
    --solution triton_tma_persistent --baselines eager --dtype all
collect_runs "$OUT/logs/results_before.txt" "$OUT/logs/results" $KB_RUN

for run in "$OUT"/logs/results/*.jsonl; do
    [ -f "$run" ] && $PY scripts/peak_table.py "$run"
done > "$OUT/kb-peaks.txt" 2>&1
for folder in "$OUT"/logs/profiles/*/; do
    [ -d "$folder" ] && $PY scripts/profile_top.py "$folder" 30
done > "$OUT/stages-profile.txt" 2>&1
{
    print_steps
    for f in "$OUT"/logs/kb-resume.txt "$OUT"/logs/kb-sliced.txt "$OUT"/logs/stages-*.txt "$OUT"/logs/bench-part.txt "$OUT"/logs/cutlass.txt; do
        [ -f "$f" ] && { echo; echo "## $(basename "$f")"; tr '\r' '\n' < "$f" | grep -v "no candidate" | tail -24; }
    done
    echo; echo "## peaks"; grep -E "problems with a peak|x  peak" "$OUT/kb-peaks.txt" | head -20
} > "$OUT/summary.txt"
tar -czf "$OUT/results.tar.gz" -C "$OUT/logs" results
tar -czf "$OUT/rest.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
cat "$OUT/summary.txt"
echo "round wall time: $(( $(date +%s) - ROUND_START )) s"
