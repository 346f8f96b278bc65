#!/usr/bin/env bash
# One device call that works down a queue of planned GPU steps, in order, as far as the call's time goes.
# Starts often fail (ten tries for one machine on 2026-12-06), so a machine that comes should run everything
# planned for its kind, and a call's command should be one short line that cannot be mistyped.
# QUEUE (default scripts/device_queue.tsv): one step a line, four tab-separated fields,
#   GPU   LIMIT_S   NAME   COMMAND
# GPU is a word the GPU's name must contain (H100, H200) or "any"; NAME is letters, digits, '-' and '_'; COMMAND
# runs under bash from the repository root with its own OUT folder, under `timeout LIMIT_S`. A step is skipped
# when its LIMIT_S passes the round's time left (ROUND_S, default 560, less 15 s for packing), so a later,
# shorter one can still run. '#' lines and blank lines are ignored. SKIP (names, space-separated) leaves those
# steps out, as a second call does for the steps its first brought back; ONLY runs the named ones alone.
# DRY_RUN=1 (with GPU_NAME, here without a GPU) runs nothing and lists the steps a call would take, in order,
# each counted at its whole limit (the worst case: a step that ends early leaves more to the next), after
# DRY_SETUP_S (default 25) for the setup a device call spends before its first step (8 s on an H100, 2026-12-06,
# 21 s on a fresh one, 2026-12-07: both times a step listed here was skipped there), and first the MiB the call
# would send with CARRY's paths (default: .whl .cache/cutlass.tar.gz .cache/pmpp_v2 .cache/builds) against the call's 64.
# Outputs under $OUT (within the 8 files a call brings back): summary.txt (printed last: each step's exit code
# and seconds, then the end of its output), queue.tar.gz (each step's OUT folder with its output and, in logs/,
# its stderr; the new run files of results/<this GPU>/ with their options files; the solution files the steps
# changed; the caches the steps packed are left out), both written again after every step, so a call the device
# stops early still brings back the steps that finished. Each step runs through round_lib.sh's `step`. A call that
# lacks a carried folder (the Liger wheel, CUTLASS's headers, GPU MODE's pmpp_v2) runs nothing and exits 2, in a dry
# run too, unless ALLOW_MISSING_CARRY=1. Builds: a call first unpacks .cache/builds/<gpu>.tar.gz (carry .cache/builds)
# into the cache folder, so the CUDA solutions load the libraries a former call built, and last packs this
# machine's builds into $OUT/builds.tar.gz, which scripts/land_queue.py puts at .cache/builds/<gpu>.tar.gz.
#   OUT=/some/dir [SKIP="a b"] [ONLY="c"] scripts/queue_round.sh [QUEUE]
set -u
ROUND_START=$(date +%s)
OUT=${OUT:-/tmp/queue_round}
PY=${PY:-python3}
QUEUE=${1:-scripts/device_queue.tsv}
source "$(dirname "$0")/round_lib.sh"
[ -f "$QUEUE" ] || { echo "queue_round: $QUEUE: no such queue file" >&2; exit 2; }
GPU_NAME=${GPU_NAME:-$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)}
GPU_SLUG=${GPU_SLUG:-$(this_gpu_slug "$PY")}
WORK=$(mktemp -d)
mkdir -p "$OUT" "$WORK/steps"
OUT="$WORK" start_round "$PY"  # $WORK/logs: the steps table, the run files before, the new ones
touch "$WORK/stamp"
echo "GPU: ${GPU_NAME:-none found} (results/$GPU_SLUG); queue $QUEUE; ${ROUND_S:-560} s" > "$WORK/summary_head.txt"
[[ ${DRY_RUN:-0} == 1 ]] && travel_line ${CARRY:-.whl .cache/cutlass.tar.gz .cache/pmpp_v2 .cache/builds} >> "$WORK/summary_head.txt"
carried_line >> "$WORK/summary_head.txt"  # a round without Liger's wheel or CUTLASS's headers says so first
# and runs nothing: on 2026-12-07 a new checkout's first call carried none of them and spent 555 s on a probe without
# Liger's rows and a held-out bench whose best baseline could not be judged (ALLOW_MISSING_CARRY=1 runs anyway)
if [[ ${ALLOW_MISSING_CARRY:-0} != 1 ]] && grep -q "^carried: .*NO (" "$WORK/summary_head.txt"; then
    { cat "$WORK/summary_head.txt"
      echo "queue_round: not run: a carried folder is missing (above); restore it (docs/results-notes.md, \"Still to" \
           "measure\") or set ALLOW_MISSING_CARRY=1"; } | tee "$OUT/summary.txt"
    rm -rf "$WORK"
    exit 2
fi
# every step's python gets the carried Liger, not only the rounds that install it: a bare `ksuite confirm` step
# without it re-timed layernorm's and softmax's close calls with Liger failing (H100, 2026-12-07)
if [[ ${DRY_RUN:-0} != 1 ]] && ls .whl/liger_kernel-*.whl >/dev/null 2>&1; then
    use_liger_wheel "$PY"
    "$PY" -c 'import liger_kernel' 2>/dev/null && echo "liger-kernel: on every step's path" \
        || echo "liger-kernel: NOT importable though carried: the steps' baselines leave Liger out"
fi >> "$WORK/summary_head.txt"

[[ ${DRY_RUN:-0} != 1 ]] && unpack_builds >> "$WORK/summary_head.txt"

pack_queue() {  # $OUT/summary.txt and $OUT/queue.tar.gz from the steps so far
    collect_runs "$WORK/logs/results_before.txt" "$WORK/logs/results"
    find solutions -newer "$WORK/stamp" -type f -name '*.py' 2>/dev/null | while read -r f; do
        mkdir -p "$WORK/changed/$(dirname "$f")" && cp "$f" "$WORK/changed/$f"
    done
    {
        cat "$WORK/summary_head.txt"
        print_steps
        for dir in "$WORK"/steps/*/; do
            [ -f "$dir/stdout.txt" ] || continue
            name=$(basename "$dir")
            echo; echo "## $name"; tail -"${TAIL_LINES:-25}" "$dir/stdout.txt"
            [ -s "$dir/logs/$name.log" ] && tail -3 "$dir/logs/$name.log" | sed 's/^/  stderr: /'
        done
    } > "$WORK/summary.txt"
    cp "$WORK/summary.txt" "$OUT/summary.txt"
    find "$WORK/steps" -name 'ksuite-cache.tar.gz' -delete
    tar -czf "$OUT/queue.tar.gz.part" -C "$WORK" steps summary.txt -C "$WORK/logs" results \
        $( [ -d "$WORK/changed" ] && echo "-C $WORK changed" ) && mv "$OUT/queue.tar.gz.part" "$OUT/queue.tar.gz"
}

line_no=0
[[ ${DRY_RUN:-0} == 1 ]] && dry_used=${DRY_SETUP_S:-25}
while IFS= read -r line <&3 || [ -n "$line" ]; do
    line_no=$((line_no + 1))
    [[ -z ${line//[[:space:]]/} || $line == \#* ]] && continue
    IFS=$'\t' read -r gpu limit name command <<< "$line"
    if [[ -z ${command:-} || ! $limit =~ ^[0-9]+$ || ! $name =~ ^[A-Za-z0-9_-]+$ ]]; then
        echo "queue_round: $QUEUE line $line_no: want GPU<tab>LIMIT_S<tab>NAME<tab>COMMAND" >&2
        printf '%s\t%s\t%s\n' "line-$line_no" "bad line" 0 >> "$STEPS"
        continue
    fi
    [[ $gpu == any || ${GPU_NAME:-} == *"$gpu"* ]] || continue
    [[ " ${SKIP:-} " == *" $name "* ]] && continue
    [[ -z ${ONLY:-} || " $ONLY " == *" $name "* ]] || continue
    left=$(( ROUND_START + ${ROUND_S:-560} - 15 - $(date +%s) - ${dry_used:-0} ))
    if (( limit > left )); then
        printf '%s\t%s\t%s\n' "$name" "skipped: ${limit} s > ${left} s left" 0 >> "$STEPS"
        continue
    fi
    if [[ ${DRY_RUN:-0} == 1 ]]; then
        printf '%s\t%s\t%s\n' "$name" "would run: limit ${limit} s" 0 >> "$STEPS"
        dry_used=$(( ${dry_used:-0} + limit ))  # the worst case: each step takes its whole limit
        continue
    fi
    mkdir -p "$WORK/steps/$name/logs"  # step's stderr: $OUT/logs/NAME.log, OUT the step's own folder
    OUT="$WORK/steps/$name" step "$name" "$limit" "$WORK/steps/$name/stdout.txt" bash -c "$command"
    pack_queue  # after every step: a call cut short by the device's own limit still brings back what ran
done 3< "$QUEUE"

[[ ${DRY_RUN:-0} != 1 ]] && pack_builds "$OUT/builds.tar.gz" "$WORK/stamp" >> "$WORK/summary_head.txt"
pack_queue
rm -rf "$WORK"
cat "$OUT/summary.txt"
echo "round wall time: $(( $(date +%s) - ROUND_START )) s"
