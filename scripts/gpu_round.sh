#!/usr/bin/env bash
# One check-and-bench round on a GPU machine, in one call: calibrate, a smoke bench that must time
# something, then the suite; logs and result files under $OUT.
# Usage: scripts/gpu_round.sh [extra `ksuite bench` arguments]
set -uo pipefail
OUT=${OUT:-/tmp/ksuite-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv \
    | tee "$OUT/gpu.txt"
start=$(date +%s)
make calibrate ARGS="${CALIBRATE_ARGS---force}" 2>&1 | tee "$OUT/calibrate.log"
if [[ ${SMOKE:-1} == 1 ]]; then
    make bench ARGS="vectorsum_v2 --shapes large" > "$OUT/smoke.log" 2>&1
    if ! grep -qE "triton_starter +s +52428800 +float32 +ok +[0-9]" "$OUT/smoke.log"; then
        echo "smoke bench timed nothing: not running the suite"; tail -30 "$OUT/smoke.log"; exit 1
    fi
fi
timeout "${BENCH_TIMEOUT:-520}" make bench ARGS="$*" 2>&1 | tee "$OUT/bench.log"
status=${PIPESTATUS[0]}
echo "wall time of calibrate + smoke + bench: $(( $(date +%s) - start )) s" | tee -a "$OUT/bench.log"
slug_dir=$(ls -td results/*/ | grep -v cpu-interpreter | head -1)
cp "$slug_dir"/calibration.json "$OUT/" 2>/dev/null
for f in $(ls -t "$slug_dir"/*.jsonl 2>/dev/null | head -2); do cp "$f" "$OUT/"; done
exit "$status"
