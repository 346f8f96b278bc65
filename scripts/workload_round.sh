#!/usr/bin/env bash
# One GPU round of the workload work, in one call: calibrate with the harness's clean flush, search the
# dispatch table of each family in SEARCH on its tuning shapes, then bench the held-out shapes of BENCH
# with every baseline (Liger too, installed from .whl/ when carried), and judge the goals.
# torch.compile's kept launch for each kernel it generated goes to results/$GPU_SLUG/rounds/*-compile-launches.tsv
# (scripts/compile_launches.py), inside round.tar.gz.
# Everything comes back under $OUT as at most 8 files (results and solutions in round.tar.gz, the cache
# folder in ksuite-cache.tar.gz).
# GPUMODE_DIR (a reference-kernels pmpp_v2 folder) adds vectorsum_v2's family under GPU MODE's own eval.py,
# first (before any search), in each of GPUMODE_MODES (default "benchmark"; "benchmark leaderboard" for both),
# after scripts/host_path_probe.py (how much of GPU MODE's window is the host's; with leaderboard among the modes,
# again with a fresh input each call; GPUMODE_PROBE=0 skips it). With leaderboard among the modes, a last
# leaderboard run logs each of our calls (scripts/gpumode_call_log.py: gpumode_calls.tsv, its slowest calls).
# SEARCH_MIN is each search's minutes at most (a cap, not a floor: SEARCH_MIN=1 gives a matmul search one minute,
# about its compile warm-up, so it may time nothing); the round's time left less BENCH_RESERVE_S caps it too.
# FAMILY names the file SEARCH starts from (default triton_family; e.g. triton_tma_persistent for matmul);
# BENCH_ARGS adds options to the bench (e.g. "--baselines eager").
# OPT_ARGS adds options to each `ksuite optimize` (e.g. "--probes-only --split rows=256"); OPT_ARGS_<problem>
# (OPT_ARGS_swiglu_act="--bucket '*,rows<=16'") replaces it for that problem, whose buckets have other names.
# CONFIRM=1 then runs `ksuite confirm` on the bench's run (its close calls timed again, paired) in the time left;
# with under a minute left, confirm.log says so and names the command for the next call. CONFIRM_ARGS adds options
# to it (--within, --max-us; a compute-bound problem's long calls are close calls by default since 2026-12-07).
# Usage: SEARCH="rmsnorm" SEARCH_MIN=3 BENCH="rmsnorm" SOLUTIONS="triton_family triton_starter" \
#        DTYPE=all ROUND_S=560 [GPUMODE_DIR=...] [BENCH_RESUME=RUN_ID] scripts/workload_round.sh
# BENCH_RESUME continues a bench a former round's time limit cut (commit its results file first); BENCH
# must still be set (any problem) for the bench step to run.
# Caches (README "Caches"): KSUITE_CACHE_DIR (default .cache/ksuite, ignored by git; carry it) holds compile
# artifacts and baseline timings; BASELINE_CACHE=fresh (default: time every baseline in this run, as goals
# need, and keep the timings), cached (reuse kept timings: fast, but goals judge nothing against them) or
# off. The folder comes back as $OUT/ksuite-cache.tar.gz (its size printed last).
set -uo pipefail
OUT=${OUT:-/tmp/ksuite-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
source "$(dirname "$0")/round_lib.sh"
GPU_SLUG=${GPU_SLUG:-$(this_gpu_slug python3)}  # the results folder of this GPU's runs (set it to bring back another folder)
use_cache_dir python3  # the children and this script's processes
case ${BASELINE_CACHE:-fresh} in
    fresh) cache_flag=--fresh-baselines ;;
    cached) cache_flag=--cached-baselines ;;
    *) cache_flag= ;;
esac
start=$(date +%s)
left() { echo $(( start + ${ROUND_S:-560} - $(date +%s) )); }
use_liger_wheel python3
{
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
    echo "cache $KSUITE_CACHE_DIR at the start: $(du -sh "$KSUITE_CACHE_DIR" | cut -f1)"
    python3 -c "import liger_kernel, importlib.metadata as m; print('liger-kernel', m.version('liger-kernel'))" \
        || echo "liger-kernel: not installed"
    [[ ${CALIBRATE:-1} == 0 ]] || python3 -m suite calibrate --force  # CALIBRATE=0: a round after one that did
} > "$OUT/setup.log" 2>&1
if [[ -n ${GPUMODE_DIR:-} ]]; then  # vectorsum_v2's family under GPU MODE's own eval.py, beside torch.sum
    {
        if [[ ${GPUMODE_PROBE:-1} == 1 ]]; then  # GPUMODE_PROBE=0: eval.py only
            timeout 90 python3 scripts/host_path_probe.py "$OUT/host_path_probe.tsv"
            if [[ " ${GPUMODE_MODES:-benchmark} " == *" leaderboard "* ]]; then  # a fresh input each call, as that mode
                timeout 180 python3 scripts/host_path_probe.py --fresh  # its table into gpumode.log
            fi
        fi
        timeout 120 python3 -m suite submit gpumode vectorsum_v2 solutions/vectorsum_v2/triton_family.py --gpu H100 \
            --mode benchmark --dry-run --out /tmp/vectorsum_family_submission.py
        for mode in ${GPUMODE_MODES:-benchmark}; do
            timeout "${GPUMODE_S:-150}" scripts/gpumode_official.sh "$GPUMODE_DIR" vectorsum_py \
                /tmp/vectorsum_family_submission.py "$mode"
        done
        if [[ " ${GPUMODE_MODES:-benchmark} " == *" leaderboard "* ]]; then  # which calls were slow, and whose time
            python3 scripts/gpumode_call_log.py /tmp/vectorsum_family_submission.py /tmp/vectorsum_logged.py \
                "$OUT/gpumode_calls.tsv"
            timeout "${GPUMODE_S:-150}" scripts/gpumode_official.sh "$GPUMODE_DIR" vectorsum_py /tmp/vectorsum_logged.py \
                leaderboard
            python3 scripts/gpumode_call_log.py --summary "$OUT/gpumode_calls.tsv"
        fi
    } > "$OUT/gpumode.log" 2>&1
fi
for p in ${SEARCH:-}; do
    budget=$(( $(left) - ${BENCH_RESERVE_S:-240} ))
    (( budget > 60 )) || { echo "$p: no time left for the search" >> "$OUT/optimize.log"; continue; }
    minutes=$(search_minutes "$budget" "${SEARCH_MIN:-3}")
    own="OPT_ARGS_$p"  # a problem's own options (its bucket names), else OPT_ARGS
    mapfile -t args < <(shell_words "${!own:-${OPT_ARGS:-}}")
    timeout "$budget" python3 -m suite optimize "$p" --from "${FAMILY:-triton_family}" --budget "$minutes" \
        --per-bucket "${PER_BUCKET:-12}" "${args[@]}" >> "$OUT/optimize.log" 2>&1
    echo "$p: optimize exit $? after $(( $(date +%s) - start )) s" >> "$OUT/optimize.log"
done
if [[ -n ${BENCH:-} ]]; then
    sols=""
    for s in ${SOLUTIONS:-triton_family}; do sols="$sols --solution $s"; done
    if [[ -n ${BENCH_RESUME:-} ]]; then  # a run a former round's time limit cut: its own selection
        timeout "$(( $(left) - 25 ))" python3 -m suite bench -v --resume "$BENCH_RESUME" $cache_flag \
            > "$OUT/bench.log" 2>&1
    else
        timeout "$(( $(left) - 25 ))" python3 -m suite bench -v ${BENCH} --shapes heldout --dtype "${DTYPE:-all}" $sols \
            ${BENCH_ARGS:-} $cache_flag > "$OUT/bench.log" 2>&1
    fi
    echo "bench exit $? after $(( $(date +%s) - start )) s" >> "$OUT/bench.log"
    python3 -m suite goals --format md > "$OUT/goals.md" 2>&1
    bench_run=$(grep -o 'recorded in .*/[0-9-]*\.jsonl' "$OUT/bench.log" | tail -1 | grep -o '[0-9]\{8\}-[0-9]\{6\}')
    if [[ -n ${CONFIRM:-} && -n $bench_run ]] && (( $(left) > 60 )); then  # its close calls, paired
        timeout "$(( $(left) - 20 ))" python3 -m suite confirm "$bench_run" --timeout "$(( $(left) - 40 ))" \
            ${CONFIRM_ARGS:-} > "$OUT/confirm.log" 2>&1
        echo "confirm exit $? after $(( $(date +%s) - start )) s" >> "$OUT/confirm.log"
    elif [[ -n ${CONFIRM:-} ]]; then  # said, not skipped in silence: the close calls are still unpaired
        echo "confirm: not run (${bench_run:-no bench run}; $(left) s of the round left, it needs 60):" \
            "\`ksuite confirm ${bench_run:-RUN}\` in the next call" > "$OUT/confirm.log"
    fi
fi
if [[ -d $KSUITE_CACHE_DIR/inductor ]]; then  # torch.compile's kept launches per kernel: seeds for the families
    mkdir -p "results/$GPU_SLUG/rounds"
    python3 scripts/compile_launches.py "$KSUITE_CACHE_DIR/inductor" \
        > "results/$GPU_SLUG/rounds/$(date +%Y%m%d-%H%M)-compile-launches.tsv" 2>> "$OUT/setup.log"
fi
tar czf "$OUT/round.tar.gz" "results/$GPU_SLUG" solutions/*/triton_family.py solutions/*/"${FAMILY:-triton_family}".py 2>/dev/null
tail -5 "$OUT/optimize.log" 2>/dev/null; grep -v "^  " "$OUT/confirm.log" 2>/dev/null | tail -12
cat "$OUT/gpumode.log" 2>/dev/null | grep -v "^  stderr"; tail -3 "$OUT/bench.log" 2>/dev/null; cat "$OUT/goals.md" 2>/dev/null | tail -25
scripts/cache_pack.sh "$OUT/ksuite-cache.tar.gz"
echo "round: $(( $(date +%s) - start )) s"
