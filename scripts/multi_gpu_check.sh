#!/usr/bin/env bash
# Issue 15 on a GPU machine: `ksuite bench --gpus` against the plain path; prints a short table last.
#   scripts/multi_gpu_check.sh one   the one-GPU machine: a tiny problem, plain vs --gpus 0 (records equal)
#   scripts/multi_gpu_check.sh two   a host with >= 2 GPUs: the default suite on one GPU vs --gpus all
#                                    (wall time of each, record keys equal, every record naming its GPU)
# Extra bench arguments after the mode (e.g. `two --shapes small`). PY picks the python (default python3).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}
mode=${1:-one}
shift || true
out=$(mktemp -d)

bench() {  # bench LABEL ARGS...: one run; its run file path and wall seconds into $out/LABEL
    local label=$1; shift
    local start end
    start=$(date +%s.%N)
    $PY -m suite bench "$@" --json > "$out/$label.json" 2> "$out/$label.err" || true
    end=$(date +%s.%N)
    $PY -c "from suite.results_store import find_run; print(find_run(None).path)" > "$out/$label.path"
    echo "$start $end" > "$out/$label.time"
}

if [ "$mode" = one ]; then
    bench plain rmsnorm --shapes small "$@"
    bench gpus0 rmsnorm --shapes small --gpus 0 "$@"
    labels="plain gpus0"
elif [ "$mode" = two ]; then
    bench one_gpu --gpus 0 "$@"
    bench all_gpus --gpus all "$@"
    labels="one_gpu all_gpus"
else
    echo "usage: $0 one|two [bench args]" >&2; exit 2
fi

$PY - "$out" $labels <<'PY'
import sys
from pathlib import Path

from suite.results_store import RunFile

out, labels = Path(sys.argv[1]), sys.argv[2:]
runs = {}
for label in labels:
    path = Path((out / f"{label}.path").read_text().strip())
    start, end = map(float, (out / f"{label}.time").read_text().split())
    runs[label] = (path, end - start, RunFile(path).read())
base = runs[labels[0]][2]
print(f"\n{'run':<10} {'run file':<48} {'wall s':>7} {'records':>8} {'failed':>7} {'GPUs':>10} keys = {labels[0]}")
for label, (path, wall, records) in runs.items():
    devices = sorted({str(r.env.get("device_index", "-")) for r in records})
    same = {r.key for r in records} == {r.key for r in base}
    print(f"{label:<10} {str(path)[-48:]:<48} {wall:>7.1f} {len(records):>8} "
          f"{sum(r.correct is False for r in records):>7} {','.join(devices):>10} {'yes' if same else 'NO'}")
PY
