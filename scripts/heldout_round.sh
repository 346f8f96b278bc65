#!/usr/bin/env bash
# One device call: held-out benches of several problems, each with its own solutions and baselines, then
# `ksuite goals` on each run; optional probes after them. Everything comes back as at most 4 files under
# $OUT: summary.txt (printed last), results.tar.gz (the new run files, to commit),
# logs.tar.gz, ksuite-cache.tar.gz (carry it unpacked as .cache/ksuite next time).
# BENCHES: one a line, "NAME|LIMIT_S|ksuite bench arguments", e.g.
#   BENCHES=$'vectorsum|200|vectorsum_v2 --shapes heldout --solution triton_family\n'\
#   $'matmul|170|matmul --shapes heldout --dtype all --solution triton_tma_persistent --baselines eager --timeout 60' \
#   OUT=/some/dir scripts/heldout_round.sh
# PROBES: the same form, "NAME|LIMIT_S|command", e.g.
#   "inductor|60|python3 scripts/probe_inductor.py rmsnorm 16384x4096 solutions/rmsnorm/triton_family.py".
# CARRIED: cache tarballs from earlier rounds (default .cache/carry/*.tar.gz), unpacked into the cache folder
# first (the folder itself may be too large to carry; its tarballs are not).
# CALIBRATE=0 skips `ksuite calibrate --force` (a round right after one that calibrated).
set -u
OUT=${OUT:-/tmp/heldout_round}
source "$(dirname "$0")/round_lib.sh"
GPU_SLUG=${GPU_SLUG:-$(this_gpu_slug python3)}
start_round python3
for f in ${CARRIED:-.cache/carry/*.tar.gz}; do [ -f "$f" ] && tar xzf "$f" -C "$KSUITE_CACHE_DIR"; done
use_liger_wheel python3
[ "${CALIBRATE:-1}" = 0 ] || step calibrate 60 "$OUT/logs/calibrate.txt" python3 -m suite calibrate --force
while IFS='|' read -r name limit args; do
    [ -n "$name" ] || continue
    # shellcheck disable=SC2086  # the bench arguments are words
    step "bench-$name" "$limit" "$OUT/logs/bench-$name.txt" python3 -m suite bench -v $args --fresh-baselines
    run=$(grep -o 'recorded in .*/[0-9-]*\.jsonl' "$OUT/logs/bench-$name.txt" | tail -1 | grep -o '[0-9]\{8\}-[0-9]\{6\}')
    [ -n "$run" ] && step "goals-$name" 60 "$OUT/logs/goals-$name.md" python3 -m suite goals "$run" --format md
done <<< "${BENCHES:-}"
while IFS='|' read -r name limit args; do
    [ -n "$name" ] || continue
    # shellcheck disable=SC2086
    step "probe-$name" "$limit" "$OUT/logs/probe-$name.txt" $args
done <<< "${PROBES:-}"
[ -d "$OUT/inductor" ] && mv "$OUT/inductor" "$OUT/logs/"  # probe_inductor.py's kernels
collect_runs "$OUT/logs/results_before.txt" "$OUT/logs/results"
{
    print_steps
    for f in "$OUT"/logs/goals-*.md; do [ -f "$f" ] && { echo "== $(basename "$f")"; tail -20 "$f"; }; done
    for f in "$OUT"/logs/bench-*.txt; do [ -f "$f" ] && { echo "== $(basename "$f")"; tail -4 "$f"; }; done
    for f in "$OUT"/logs/probe-*.txt; do [ -f "$f" ] && { echo "== $(basename "$f")"; tail -12 "$f"; }; done
} > "$OUT/summary.txt" 2>&1
tar czf "$OUT/results.tar.gz" -C "$OUT/logs" results
tar czf "$OUT/logs.tar.gz" -C "$OUT" logs
rm -rf "$OUT/logs"
scripts/cache_pack.sh "$OUT/ksuite-cache.tar.gz" > /dev/null 2>&1
cat "$OUT/summary.txt"
