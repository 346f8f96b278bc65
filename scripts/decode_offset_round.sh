#!/usr/bin/env bash
# One device call: is the bench's decode verdict the kernels or the bench's method? scripts/timing_method_probe.py
# times ours, torch.compile's and Liger's kernels at its four decode cases by every method in one process, then
# `ksuite bench` times the same cases the bench's way (a fresh worker each), so the two sit side by side.
# On the H100 (2026-12-05, results/nvidia-h100-80gb-hbm3/rounds/20261205-05*) they agreed: no offset there.
# Outputs under $OUT: timing-method.tsv (+ .raw.tsv), decode-bench.txt, results.tar.gz (the bench's run files),
# summary.txt (printed last). Carry .whl for Liger.
#   OUT=/some/dir [GPU_SLUG=...] [T_PROBE=250] scripts/decode_offset_round.sh
set -u
OUT=${OUT:-/tmp/decode_offset_round}
PY=${PY:-python3}
source "$(dirname "$0")/round_lib.sh"
GPU_SLUG=${GPU_SLUG:-$(this_gpu_slug "$PY")}
start_round "$PY"
use_liger_wheel "$PY"
step timing-method "${T_PROBE:-250}" "$OUT/timing-method.txt" $PY scripts/timing_method_probe.py "$OUT/timing-method.tsv"
# the probe's cases (CASES in scripts/timing_method_probe.py), each through the bench
for case in "rotary 1x32x1x128" "rmsnorm 7x3584" "layernorm 7x1600" "swiglu_act 127x3072"; do
    read -r problem shape <<< "$case"
    step "bench-$problem" 90 "$OUT/logs/bench-$problem.txt" $PY -m suite bench "$problem" --shape "$shape" \
        --dtype fp16 --solution triton_family --baselines compile,liger
    cat "$OUT/logs/bench-$problem.txt" >> "$OUT/decode-bench.txt"
done
collect_runs "$OUT/logs/results_before.txt" "$OUT/logs/results"
tar czf "$OUT/results.tar.gz" -C "$OUT/logs" results
{
    print_steps
    grep -E "^(rotary|rmsnorm|layernorm|swiglu_act) " "$OUT/decode-bench.txt"
    cat "$OUT/timing-method.txt"
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"
