# Sourced by the GPU round scripts: what every round needs before its steps.
# use_cache_dir PY: KSUITE_CACHE_DIR (default .cache/ksuite, ignored by git; carry it) for the harness's
#   children and, through harness.cache_dirs.exports, for the script's own processes.
# step NAME LIMIT STDOUT_FILE CMD...: CMD under `timeout`, stdout to STDOUT_FILE, stderr to
#   $OUT/logs/NAME.log, a row (name, exit code, seconds) in $STEPS.

use_cache_dir() {
    export KSUITE_CACHE_DIR=${KSUITE_CACHE_DIR:-$PWD/.cache/ksuite}
    mkdir -p "$KSUITE_CACHE_DIR"
    eval "$("$1" -c 'from harness.cache_dirs import exports; print(exports())')"
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
