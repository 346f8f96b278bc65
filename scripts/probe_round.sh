#!/usr/bin/env bash
# One device call for the compute-bound work and a peak probe: CUTLASS attention's extensions build on the
# host (scripts/fmha_probe.py, in the background) while the GPU runs a worker's whole job under the allocator's
# history (scripts/trial_peak_probe.py --job); then the attention probe times its shapes alone on the GPU; then
# (FMLP_SHAPES set) scripts/fused_mlp_probe.py builds and times the CUDA fused MLP's variants (FMLP_VARIANTS) at
# those shapes (FMLP_DTYPES, default bf16,fp16); then a matmul table search of the named buckets (tuning shapes only) and the held-out matmul
# bench beside cuBLAS; then (T_FUSED_MLP > 0) the fused MLP's held-out shapes: FUSED_MLP_SOLUTIONS (words)
# beside eager and torch.compile (FUSED_MLP_DTYPE, default all), their CUDA C++ extensions built on the host
# from the round's start; last (NCU_CASES set) scripts/ncu_probe.py's counters, one case after another
# ("PROBLEM SHAPE DTYPE IMPL..." separated by ";"), each within T_NCU seconds.
# CMM_PLAN (a plan of scripts/cutlass_matmul_probe.py, e.g. thin) or CMM_SHAPES (MxKxN separated by ";") with
# CMM_VARIANTS: that probe builds the variants of solutions/matmul/cuda_cutlass.py and times them beside cuBLAS and
# the Triton kernel, before the matmul steps (its builds are then cached for the held-out bench's CUTLASS
# solutions of the same configuration). FMLP_PLAN likewise for scripts/fused_mlp_probe.py (or FMLP_SHAPES).
# MATMUL_SOLUTIONS (words, default triton_tma_persistent): the solutions of the held-out matmul bench (carry
# .cache/cutlass for cuda_cutlass_short_k).
# Every step time-bounded (env T_*; 0 leaves a step out). Outputs under $OUT: summary.txt (printed last),
# results.tar.gz (run files, ledgers and the searched solution: commit them), logs.tar.gz.
#   OUT=/some/dir PEAK_JOB="fused_mlp solutions/fused_mlp/cuda_mma.py bfloat16" \
#   FMHA_SHAPES="1x8x6144x256;1x16x2048x256" MATMUL_BUCKETS="M<=256,N<=16384,K<=4096" scripts/probe_round.sh
set -u
ROUND_START=$(date +%s)
OUT=${OUT:-/tmp/probe_round}
PY=${PY:-python3}
T_PEAK=${T_PEAK:-150}
T_FMHA=${T_FMHA:-330}
T_OPTIMIZE=${T_OPTIMIZE:-180}
T_MATMUL=${T_MATMUL:-180}
T_FMLP=${T_FMLP:-240}
T_FUSED_MLP=${T_FUSED_MLP:-0}
FUSED_MLP_SOLUTIONS=${FUSED_MLP_SOLUTIONS:-cuda_cutlass triton_fused_gate_up}
FUSED_MLP_DTYPE=${FUSED_MLP_DTYPE:-all}
source "$(dirname "$0")/round_lib.sh"
GPU_SLUG=${GPU_SLUG:-$(this_gpu_slug "$PY")}
start_round "$PY"
use_liger_wheel "$PY"  # ncu_probe.py's "liger" baseline, when .whl is carried

if [ -n "${FMHA_SHAPES:-}" ] && [ "$T_FMHA" != 0 ]; then  # builds first (host), times after the peak step
    ( step fmha-probe "$T_FMHA" "$OUT/logs/fmha-probe.txt" $PY scripts/fmha_probe.py "$OUT/logs/fmha.tsv" \
        --variants "${FMHA_VARIANTS:-base:}" --shapes "$FMHA_SHAPES" --budget-s $(( T_FMHA - 30 )) ) &
    fmha=$!
fi
if [ "$T_FUSED_MLP" != 0 ]; then  # host-only: the extensions the fused MLP bench will load from the cache
    ( $PY scripts/prebuild_cuda.py fused_mlp > "$OUT/logs/prebuild-fused-mlp.txt" 2>&1 ) &
fi
if [ -n "${PEAK_JOB:-}" ]; then
    # shellcheck disable=SC2086  # PROBLEM SOLUTION DTYPE
    maybe_step peak-job "$T_PEAK" "$OUT/logs/peak-job.txt" $PY scripts/trial_peak_probe.py --job $PEAK_JOB
fi
[ -n "${fmha:-}" ] && wait "$fmha"
if { [ -n "${FMLP_SHAPES:-}" ] || [ -n "${FMLP_PLAN:-}" ]; } && [ "$T_FMLP" != 0 ]; then  # builds, then times
    fmlp_args=()
    [ -n "${FMLP_PLAN:-}" ] && fmlp_args+=(--plan "$FMLP_PLAN")
    [ -n "${FMLP_SHAPES:-}" ] && fmlp_args+=(--shapes "$FMLP_SHAPES")
    [ -n "${FMLP_VARIANTS:-}" ] && fmlp_args+=(--variants "$FMLP_VARIANTS")
    step fused-mlp-probe "$T_FMLP" "$OUT/logs/fused-mlp-probe.txt" $PY scripts/fused_mlp_probe.py \
        "$OUT/logs/fused-mlp.tsv" "${fmlp_args[@]}" --dtypes "${FMLP_DTYPES:-bf16,fp16}" --budget-s $(( T_FMLP - 30 ))
fi
if { [ -n "${CMM_SHAPES:-}" ] || [ -n "${CMM_PLAN:-}" ]; } && [ "${T_CMM:-300}" != 0 ]; then  # builds, then times
    cmm_args=()
    [ -n "${CMM_PLAN:-}" ] && cmm_args+=(--plan "$CMM_PLAN")
    [ -n "${CMM_SHAPES:-}" ] && cmm_args+=(--shapes "$CMM_SHAPES")
    [ -n "${CMM_VARIANTS:-}" ] && cmm_args+=(--variants "$CMM_VARIANTS")
    step cutlass-matmul-probe "${T_CMM:-300}" "$OUT/logs/cutlass-matmul-probe.txt" $PY scripts/cutlass_matmul_probe.py \
        "$OUT/logs/cutlass-matmul.tsv" "${cmm_args[@]}" --dtypes "${CMM_DTYPES:-bf16,fp16}" \
        --budget-s $(( ${T_CMM:-300} - 30 ))
fi
if [ -n "${MATMUL_BUCKETS:-}" ]; then
    args=()
    IFS=';' read -ra buckets <<< "$MATMUL_BUCKETS"
    for b in "${buckets[@]}"; do args+=(--bucket "$b"); done
    maybe_step matmul-optimize "$T_OPTIMIZE" "$OUT/logs/matmul-optimize.txt" $PY -m suite optimize matmul \
        --from triton_tma_persistent "${args[@]}" --budget $(( T_OPTIMIZE / 60 ))
fi
matmul_args=()
for name in ${MATMUL_SOLUTIONS:-triton_tma_persistent}; do matmul_args+=(--solution "$name"); done
maybe_step matmul-heldout "$T_MATMUL" "$OUT/logs/matmul-heldout.txt" $PY -m suite bench -v matmul --shapes heldout \
    "${matmul_args[@]}" --dtype all --baselines eager --timeout 60
if [ "$T_FUSED_MLP" != 0 ]; then
    wait  # the prebuilds
    fused_args=()
    for name in $FUSED_MLP_SOLUTIONS; do fused_args+=(--solution "$name"); done
    maybe_step fused-mlp-heldout "$T_FUSED_MLP" "$OUT/logs/fused-mlp-heldout.txt" $PY -m suite bench -v fused_mlp \
        --shapes heldout "${fused_args[@]}" --dtype "$FUSED_MLP_DTYPE" --baselines eager,compile --timeout 60
fi
if [ -n "${NCU_CASES:-}" ]; then
    IFS=';' read -ra ncu_cases <<< "$NCU_CASES"
    for i in "${!ncu_cases[@]}"; do
        # shellcheck disable=SC2086  # PROBLEM SHAPE DTYPE IMPL...
        maybe_step "ncu-$i" "${T_NCU:-240}" "$OUT/logs/ncu-$i.txt" $PY scripts/ncu_probe.py run ${ncu_cases[$i]} \
            --out "$OUT/logs/ncu" --timeout $(( ${T_NCU:-240} - 10 ))
    done
fi
collect_runs "$OUT/logs/results_before.txt" "$OUT/logs/results"
cp -r results/"$GPU_SLUG"/optimize "$OUT/logs/results/" 2>/dev/null
cp solutions/matmul/triton_tma_persistent.py "$OUT/logs/results/" 2>/dev/null
{
    print_steps
    for f in "$OUT"/logs/peak-job.txt "$OUT"/logs/fmha-probe.txt "$OUT"/logs/fused-mlp-probe.txt \
             "$OUT"/logs/cutlass-matmul-probe.txt \
             "$OUT"/logs/ncu-*.txt; do
        [ -f "$f" ] && { echo; echo "## $(basename "$f")"; tail -60 "$f"; }
    done
    [ -f "$OUT/logs/matmul-optimize.txt" ] && { echo; echo "## matmul-optimize"; grep -E "kept|stopped|exit" \
        "$OUT/logs/matmul-optimize.txt" | cut -c1-230 | tail -20; }
    [ -f "$OUT/logs/fused-mlp-heldout.txt" ] && { echo; echo "## fused-mlp-heldout"; cat "$OUT"/logs/prebuild-*.txt; \
        grep -E " [bs] +[0-9x]+ |measurements|goals:" "$OUT/logs/fused-mlp-heldout.txt" | cut -c1-200 | tail -60; }
    [ -f "$OUT/logs/matmul-heldout.txt" ] && { echo; echo "## matmul-heldout"; grep -E " [bs] +[0-9x]+ |measurements|goals:" \
        "$OUT/logs/matmul-heldout.txt" | cut -c1-200 | tail -40; }
} > "$OUT/summary.txt" 2>&1
cp "$OUT/logs/fmha.tsv" "$OUT/logs/fused-mlp.tsv" "$OUT/logs/cutlass-matmul.tsv" "$OUT/" 2>/dev/null
tar -czf "$OUT/results.tar.gz" -C "$OUT/logs" results
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
cat "$OUT/summary.txt"
echo "round wall time: $(( $(date +%s) - ROUND_START )) s"
