#!/usr/bin/env bash
# The KernelBench level-1 sample on a GPU machine, in one call: run (check + time against eager and
# torch.compile), write baseline JSON in KernelBench's format from that run, and score the run against
# both. Logs, the run file and the JSON under $OUT. Usage: scripts/kernelbench_gpu.sh [kernelbench run args]
set -uo pipefail
OUT=${OUT:-/tmp/ksuite-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
start=$(date +%s)
timeout "${KB_TIMEOUT:-560}" python3 -m suite kernelbench run --level 1 "$@" > "$OUT/kb_run.log" 2>&1
status=$?
echo "kernelbench run exit $status after $(( $(date +%s) - start )) s"
run=$(ls -t results/*/*.jsonl | grep -v cpu-interpreter | head -1)
cp "$run" "$OUT/"
python3 -m suite kernelbench baseline "$run" --out "$OUT/kb_baseline"
for b in baseline_time_torch baseline_time_torch_compile_inductor_default; do
    echo "== score against $b"
    python3 -m suite kernelbench score "$run" --baseline "$OUT/kb_baseline/$b.json"
done 2>&1 | tee "$OUT/kb_score.log"
tr '\r' '\n' < "$OUT/kb_run.log" | grep -vE "^\s*$|it/s|problem/s" | tail -40
exit "$status"
