# Sourced by the GPU round scripts: what every round needs before its steps.
# start_round PY: what each round does first: $OUT/logs/results, an empty $STEPS table, unbuffered Python, the
#   cache folder (use_cache_dir), the CUTLASS headers unpacked (unpack_cutlass) and the listing of the run files
#   there before the round (collect_runs' BEFORE).
# unpack_cutlass: .cache/cutlass from .cache/cutlass.tar.gz (scripts/cutlass_headers.sh writes both) where only
#   the archive was carried: the headers are 29 MB, the archive about 3, and a call carries 64 MiB in all.
# use_cache_dir PY: KSUITE_CACHE_DIR (default .cache/ksuite, ignored by git; carry it) for the harness's
#   children and, through harness.cache_dirs.exports, for the script's own processes.
# travel_line [PATH...]: what a device call would send, the tree (tracked and untracked-not-ignored files) and the
#   carried PATHs, in MiB against the call's 64 MiB: the tree and the CUTLASS headers passed it on 2026-12-07.
# carried_line: one line saying whether the call carried the Liger wheel, the CUTLASS headers and pmpp_v2.
# use_liger_wheel PY: Liger-Kernel (a baseline) from the carried .whl/ folder into LIGER_SITE (/tmp/site), on
#   PYTHONPATH, once.
# print_steps: the $STEPS rows (name, exit code, seconds) as a table.
# step NAME LIMIT STDOUT_FILE CMD...: CMD under `timeout`, stdout to STDOUT_FILE, stderr to
#   $OUT/logs/NAME.log, a row (name, exit code, seconds) in $STEPS.
# maybe_step NAME LIMIT ...: step, unless LIMIT is 0 (a round's T_*=0 leaves that step out).
# unpack_builds: the CUDA C++ builds (torch's extension folders, CUTLASS's 75-102 s a call on a fresh machine) a
#   former call brought back, from .cache/builds/$GPU_SLUG.tar.gz into $KSUITE_CACHE_DIR, keeping any already
#   there; load_inline then finds each library by its source hash and ninja rebuilds only what changed.
# pack_builds TARBALL [NEWER_THAN] [LIMIT_MB (8)]: those folders packed for scripts/land_queue.py, all of them
#   while they fit the limit, else only the ones written after the file NEWER_THAN, else none (said in one line);
#   8 MiB, as both GPUs' tarballs travel beside a 44 MiB tree and the call carries 64.
# this_gpu_slug PY: the results folder ksuite names for this machine's GPU (harness.environment.gpu_slug),
#   GPU_SLUG's default in every round, so a round on an H100 brings back the H100's run files, not the H200's.

start_round() {
    mkdir -p "$OUT/logs/results"
    STEPS="$OUT/logs/steps.tsv"
    : > "$STEPS"
    export PYTHONUNBUFFERED=1
    use_cache_dir "$1"
    unpack_cutlass
    ls results/"$GPU_SLUG"/*.jsonl 2>/dev/null | sort > "$OUT/logs/results_before.txt"
}

unpack_cutlass() {
    [ -d .cache/cutlass/include/cute ] || [ ! -f .cache/cutlass.tar.gz ] && return 0
    tar xzf .cache/cutlass.tar.gz -C .cache || echo "round_lib: .cache/cutlass.tar.gz would not unpack" >&2
}

unpack_builds() {
    local tarball=.cache/builds/${GPU_SLUG:-none}.tar.gz
    [ -f "$tarball" ] || { echo "builds: none carried for ${GPU_SLUG:-this GPU} (CUDA solutions build here)"; return 0; }
    if tar xzf "$tarball" -C "$KSUITE_CACHE_DIR" --skip-old-files 2>/dev/null; then
        echo "builds: $(tar tzf "$tarball" | grep -c '\.so$') libraries carried in $tarball, unpacked where none was"
    else
        echo "builds: $tarball would not unpack (CUDA solutions build here)"
    fi
}

pack_builds() {
    local out=$1 newer=${2:-} limit=${3:-8} root=$KSUITE_CACHE_DIR folders mib
    folders=$(cd "$root" 2>/dev/null && find torch_extensions -mindepth 2 -maxdepth 2 -type d ! -name logs 2>/dev/null | sort)
    [ -n "$folders" ] || { echo "builds: none to pack"; return 0; }
    for pass in all new; do
        if [[ $pass == new ]]; then
            [ -n "$newer" ] || break
            folders=$(cd "$root" && for f in $folders; do [ -n "$(find "$f" -newer "$newer" -name '*.so')" ] && echo "$f"; done)
            [ -n "$folders" ] || break
        fi
        # shellcheck disable=SC2086
        tar czf "$out" -C "$root" $folders || break
        mib=$(( $(stat -c %s "$out") / 1048576 ))
        if (( mib < limit )); then
            echo "builds: $(echo "$folders" | wc -w) folders packed ($pass), $(du -h "$out" | cut -f1)"
            return 0
        fi
    done
    rm -f "$out"
    echo "builds: not packed (over $limit MiB)"
}

this_gpu_slug() {
    "$1" -c 'from harness.environment import gpu_slug; print(gpu_slug())' && return
    echo "round_lib: $1 cannot name this GPU's results folder (harness.environment); set GPU_SLUG" >&2
    echo unnamed-gpu
}

use_cache_dir() {
    export KSUITE_CACHE_DIR=${KSUITE_CACHE_DIR:-$PWD/.cache/ksuite}
    mkdir -p "$KSUITE_CACHE_DIR"
    eval "$("$1" -c 'from harness.cache_dirs import exports; print(exports())')"
}

travel_line() {
    local tree carried=0 mib
    tree=$(git ls-files -co --exclude-standard -z | xargs -0 -r stat -c %s 2>/dev/null \
        | awk '{s += $1} END {print s + 0}')
    [ $# -gt 0 ] && carried=$(du -scb "$@" 2>/dev/null | tail -1 | cut -f1)
    mib=$(( (tree + carried) / 1048576 ))
    local near=""  # the device's own count came out over 64 where this one said 62 (2026-12-07)
    (( mib >= 56 )) && near=" - NEAR THE LIMIT: carry less"
    echo "travels: ${mib} MiB of 64 (tree $(( tree / 1048576 )), carried $(( carried / 1048576 )): $*)$near"
}

carried_line() {  # what the call carried of the ignored folders a round may need, in one line
    local w c p
    w=$(ls .whl/liger_kernel-*.whl 2>/dev/null | head -1)
    [ -n "$w" ] && w="yes" || w="NO (no .whl/liger_kernel-*.whl: the baselines leave Liger out)"
    [ -d .cache/cutlass/include/cute ] && c="yes" || c="NO (no .cache/cutlass: the CUTLASS solutions are skipped)"
    [ -f .cache/pmpp_v2/eval.py ] && p="yes" || p="NO (no .cache/pmpp_v2)"
    echo "carried: Liger wheel $w; CUTLASS headers $c; GPU MODE pmpp_v2 $p"
}

use_liger_wheel() {
    local site=${LIGER_SITE:-/tmp/site}
    ls .whl/liger_kernel-*.whl >/dev/null 2>&1 || return 0
    [[ ":${PYTHONPATH:-}:" == *":$site:"* ]] && return 0  # a queue step: its queue put it there
    "$1" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" \
        .whl/liger_kernel-*.whl && export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
}

print_steps() {
    local name rc secs
    printf '%-28s %-6s %s\n' step rc seconds
    while IFS=$'\t' read -r name rc secs; do printf '%-28s %-6s %s\n' "$name" "$rc" "$secs"; done < "$STEPS"
}

step() {
    local name=$1 limit=$2 stdout=$3 start rc
    shift 3
    start=$(date +%s)
    echo "== $name (limit ${limit}s): $*" >&2
    timeout -k 5 "$limit" "$@" > "$stdout" 2> "$OUT/logs/$name.log"
    rc=$?
    [ "$rc" = 124 ] && echo "   $name: TIMED OUT after ${limit}s" >&2
    printf '%s\t%s\t%s\n' "$name" "$rc" "$(( $(date +%s) - start ))" >> "$STEPS"
}

# collect_runs BEFORE DEST [RUN_ID...]: copy into DEST the run files of results/$GPU_SLUG/ made since BEFORE (a
#   sorted listing of its *.jsonl taken at the round's start) and the named runs, each with its options
#   file (RUN.run.json), without which a later round cannot resume it with its own selection.
collect_runs() {
    local before=$1 dest=$2 f
    shift 2
    { ls results/"$GPU_SLUG"/*.jsonl 2>/dev/null | sort | comm -13 "$before" -
      for f in "$@"; do echo "results/$GPU_SLUG/$f.jsonl"; done; } | sort -u | while read -r f; do
        cp "$f" "$dest/" 2>/dev/null
        cp "${f%.jsonl}.run.json" "$dest/" 2>/dev/null || true  # runs from before options files: none
    done
    return 0
}

maybe_step() {
    [ "$2" = 0 ] || step "$@"
}

# search_minutes BUDGET_S MAX_MIN: the minutes (one decimal) a table search may take of BUDGET_S seconds: at most
#   MAX_MIN, 90 s kept for its start and the table's check, at least 1. Whole minutes wasted up to 59 s of a round
#   (2026-12-05: a search given 1 of its 2 minutes for want of 5 s).
search_minutes() {
    python3 -c 'import sys; b, m = int(sys.argv[1]), float(sys.argv[2]); print(f"{max(1.0, min(m, (b - 90) / 60)):.1f}")' \
        "$1" "$2"
}

# shell_words TEXT: the words of TEXT as the shell splits a command line, one a line: a quoted glob stays one
#   word without its quotes, and < and > are plain characters (OPT_ARGS="--bucket 'dim<=4096,batch_size>8192'").
shell_words() {
    python3 -c 'import shlex, sys; sys.stdout.write("".join(w + "\n" for w in shlex.split(sys.argv[1])))' "$1"
}
