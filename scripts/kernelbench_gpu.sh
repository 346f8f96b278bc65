#!/usr/bin/env bash
# A KernelBench level on a GPU machine, in one call: run (check + time against eager and torch.compile),
# write baseline JSON in KernelBench's format from that run, and score the run against both. A level that
# does not fit one call goes on in the next: KB_RESUME=<run id> resumes it (its tree, level and ids come
# from the run's options file). Logs, the run file with its options file, the JSON, and the harness's cache
# (compile caches: the next call's baselines start warm) under $OUT.
# Usage: [KB_RESUME=RUN_ID] [KB_TIMEOUT=S] scripts/kernelbench_gpu.sh [kernelbench run args, e.g. TREE --ids 1-50]
set -uo pipefail
OUT=${OUT:-/tmp/ksuite-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
source "$(dirname "$0")/round_lib.sh"
use_cache_dir python3
start=$(date +%s)
if [ -n "${KB_RESUME:-}" ]; then
    set -- --resume "$KB_RESUME" "$@"
fi
timeout -k 10 "${KB_TIMEOUT:-560}" python3 -m suite kernelbench run --level 1 "$@" > "$OUT/kb_run.log" 2>&1
status=$?
echo "kernelbench run exit $status after $(( $(date +%s) - start )) s"
run=${KB_RESUME:+results/${GPU_SLUG:-nvidia-h200}/$KB_RESUME.jsonl}
run=${run:-$(ls -t results/*/*.jsonl | grep -v cpu-interpreter | head -1)}
cp "$run" "${run%.jsonl}.run.json" "$OUT/"
python3 -m suite kernelbench baseline "$run" --out "$OUT/kb_baseline"
for b in baseline_time_torch baseline_time_torch_compile_inductor_default; do
    echo "== score against $b"
    python3 -m suite kernelbench score "$run" --baseline "$OUT/kb_baseline/$b.json"
done 2>&1 | tee "$OUT/kb_score.log"
tar -czf "$OUT/kb_baseline.tar.gz" -C "$OUT" kb_baseline && rm -rf "$OUT/kb_baseline"
scripts/cache_pack.sh "$OUT/ksuite-cache.tar.gz" 40
python3 scripts/peak_table.py "$run" | tee "$OUT/kb_peaks.log" | tail -15
tr '\r' '\n' < "$OUT/kb_run.log" | grep -vE "^\s*$|it/s|problem/s" | tail -40
exit "$status"
