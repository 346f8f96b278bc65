#!/usr/bin/env bash
# One device call: `ksuite confirm RUN` for each run of RUNS in turn (the close calls of a held-out bench
# timed again in one process, interleaved: suite/confirm.py), each problem's child bounded by T_EACH seconds
# (records it finished are kept). Liger is installed from a carried .whl/ folder, as the bench's rounds do.
# Outputs under $OUT: results.tar.gz (the new run files: commit them), logs/confirm-RUN.txt per run.
# Usage: OUT=/some/dir RUNS="20261202-023216 20261202-022823" T_EACH=110 scripts/confirm_round.sh
set -uo pipefail
OUT=${OUT:-/tmp/confirm-out}
source "$(dirname "$0")/round_lib.sh"
GPU_SLUG=${GPU_SLUG:-$(this_gpu_slug python3)}
start_round python3
use_liger_wheel python3
for run in ${RUNS:?RUNS: the run ids to confirm}; do
    step "confirm-$run" $(( ${T_EACH:-110} + 60 )) "$OUT/logs/confirm-$run.txt" \
        python3 -m suite confirm "$run" --timeout "${T_EACH:-110}"
done
collect_runs "$OUT/logs/results_before.txt" "$OUT/logs/results"
tar czf "$OUT/results.tar.gz" -C "$OUT/logs" results
for log in "$OUT"/logs/confirm-*.txt; do grep -v "^  " "$log" | tail -n 22; done
print_steps
