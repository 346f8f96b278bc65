#!/usr/bin/env bash
# One device call: `ksuite confirm RUN` for each run of RUNS in turn (the close calls of a held-out bench
# timed again in one process, interleaved: suite/confirm.py), each problem's child bounded by T_EACH seconds
# (records it finished are kept). Liger is installed from a carried .whl/ folder, as the bench's rounds do.
# Outputs under $OUT: results.tar.gz (the new run files: commit them), confirm-RUN.log per run.
# Usage: OUT=/some/dir RUNS="20261202-023216 20261202-022823" T_EACH=110 scripts/confirm_round.sh
set -uo pipefail
OUT=${OUT:-/tmp/confirm-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
source "$(dirname "$0")/round_lib.sh"
use_cache_dir python3
use_liger_wheel python3
ls results/*/*.jsonl | sort > "$OUT/before.txt"
for run in ${RUNS:?RUNS: the run ids to confirm}; do
    timeout $(( ${T_EACH:-110} + 60 )) python3 -m suite confirm "$run" --timeout "${T_EACH:-110}" \
        > "$OUT/confirm-$run.log" 2>&1
    echo "$run: exit $?" >> "$OUT/confirm-$run.log"
done
ls results/*/*.jsonl | sort | comm -13 "$OUT/before.txt" - | tar czf "$OUT/results.tar.gz" -T -
for log in "$OUT"/confirm-*.log; do grep -v "^  " "$log" | tail -n 22; done
