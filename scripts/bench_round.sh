#!/usr/bin/env bash
# `make bench` (the default suite) on a GPU machine, in one device call, cut at T_BENCH seconds, with the
# harness's cache in .cache/ksuite (ignored by git): a second call on the same warm machine finds the first
# call's compile caches there, so two calls in a row measure the cold and the warm suite.
# Outputs under $OUT: summary.txt (printed last: scripts/run_timeline.py of the run), results.tar.gz (the
# new run file with its options file: commit it), bench.log. Run from the repository root:
#   OUT=/some/dir T_BENCH=540 scripts/bench_round.sh [make bench ARGS...]
set -u
ROUND_START=$(date +%s)
OUT=${OUT:-/tmp/bench_round}
PY=${PY:-python3}
T_BENCH=${T_BENCH:-540}
source "$(dirname "$0")/round_lib.sh"
GPU_SLUG=${GPU_SLUG:-$(this_gpu_slug "$PY")}
start_round "$PY"
echo "cache folder before: $(du -sh "$KSUITE_CACHE_DIR" 2>/dev/null | cut -f1)" > "$OUT/bench.log"
started=$(date +%s)
step make-bench "$T_BENCH" "$OUT/logs/make-bench.txt" make bench ${1:+ARGS="$*"}
collect_runs "$OUT/logs/results_before.txt" "$OUT/logs/results"
{
    print_steps
    for run in "$OUT"/logs/results/*.jsonl; do
        [ -f "$run" ] && { echo; echo "## $(basename "$run")"; $PY scripts/run_timeline.py "$run" "$started"; }
    done
    echo; echo "## make bench (last lines)"; tr '\r' '\n' < "$OUT/logs/make-bench.txt" | tail -6
} > "$OUT/summary.txt" 2>&1
cat "$OUT/logs/make-bench.log" "$OUT/logs/make-bench.txt" >> "$OUT/bench.log" 2>/dev/null
tar -czf "$OUT/results.tar.gz" -C "$OUT/logs" results && rm -rf "$OUT/logs"
cat "$OUT/summary.txt"
echo "round wall time: $(( $(date +%s) - ROUND_START )) s"
