#!/usr/bin/env bash
# Every solution of the given problems on a GPU machine, in one call: the CUDA C++ ones are built first
# (in parallel, once per machine), then each is checked and timed at the large shapes with no baselines
# (torch.compile's autotuning takes minutes; compare with the newest run that timed them); then
# vectorsum_v2's fastest file under the GPU MODE protocol beside torch.sum. Logs and the run under $OUT.
# Usage: scripts/solutions_gpu.sh PROBLEM...
set -uo pipefail
OUT=${OUT:-/tmp/ksuite-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
start=$(date +%s)
timeout "${BENCH_TIMEOUT:-420}" python3 -m suite bench "$@" --no-baselines 2>&1 | tee "$OUT/solutions.log"
status=${PIPESTATUS[0]}
echo "bench wall time (builds included): $(( $(date +%s) - start )) s" | tee -a "$OUT/solutions.log"
slug_dir=$(ls -td results/*/ | grep -v cpu-interpreter | head -1)
run=$(ls -t "$slug_dir"/*.jsonl | head -1)
cp "$run" "$OUT/"
if [[ " $* " == *" vectorsum_v2 "* ]]; then
    timeout 240 python3 -m suite submit gpumode vectorsum_v2 "${VECTORSUM:-solutions/vectorsum_v2/triton_balanced.py}" \
        --gpu H100 --mode leaderboard --dry-run --out "$OUT/vectorsum_submission.py" 2>&1 | tee "$OUT/vectorsum_protocol.log"
    for mode in benchmark leaderboard; do
        echo "== torch.sum, $mode mode" | tee -a "$OUT/vectorsum_protocol.log"
        timeout 120 python3 -m suite gpumode-eval problems/gpumode/vectorsum_v2 \
            submit/gpumode/baselines/vectorsum_v2_torch_sum.py --mode "$mode" 2>&1 | tee -a "$OUT/vectorsum_protocol.log"
    done
fi
python3 -m suite report "$(basename "$run" .jsonl)" 2>&1 | tail -60
echo "wall time: $(( $(date +%s) - start )) s"
exit "$status"
