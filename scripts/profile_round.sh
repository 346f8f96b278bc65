#!/usr/bin/env bash
# One device call for issue 12: profile -> extract -> bench -> verify on Llama-3-8B (4 layers, bf16,
# batch 4 x 2048, forward), then the GPT-2-style model and a Hugging Face config. Every step has its own
# time limit (seconds, env T_*), so one failure or hang costs only its own slot; the limits add up to
# under 7 minutes. Outputs under $OUT (8 files at most come back: the rest is in rest.tar.gz); a summary
# table is printed last. Run from the repository root:  OUT=/some/dir scripts/profile_round.sh
set -u
OUT=${OUT:-/tmp/profile_round}
PY=${PY:-python3}
MODEL=${MODEL:-llama3-8b:4-layers}
BATCH=${BATCH:-4}
SEQ=${SEQ:-2048}
GPU_SLUG=${GPU_SLUG:-nvidia-h200}
HF_CONFIG=${HF_CONFIG:-suite/profile/hf_configs/qwen2.5-7b-4-layers.json}
T_PROFILE=${T_PROFILE:-75}
T_EXTRACT=${T_EXTRACT:-20}
T_BENCH=${T_BENCH:-100}
T_VERIFY=${T_VERIFY:-140}
T_GPT2=${T_GPT2:-35}
T_HF=${T_HF:-45}
mkdir -p "$OUT/logs"
STEPS="$OUT/logs/steps.tsv"
: > "$STEPS"
export PYTHONUNBUFFERED=1
# Caches (README "Caches"): compile artifacts (verify's own torch.compile too) and baseline timings live in
# KSUITE_CACHE_DIR (default .cache/ksuite, ignored by git; carry it). BASELINE_CACHE=fresh (the default)
# times every bench's baselines in its own run and keeps them, cached reuses kept timings, off neither.
# The folder comes back as $OUT/ksuite-cache.tar.gz, its size printed last.
export KSUITE_CACHE_DIR=${KSUITE_CACHE_DIR:-$PWD/.cache/ksuite}
mkdir -p "$KSUITE_CACHE_DIR"
eval "$($PY -c 'from harness.cache_dirs import exports; print(exports())')"
case ${BASELINE_CACHE:-fresh} in
    fresh) export KSUITE_FRESH_BASELINES=1 ;;
    cached) export KSUITE_CACHED_BASELINES=1 ;;
esac

# step NAME LIMIT STDOUT_FILE CMD...: stdout to STDOUT_FILE, stderr to logs/NAME.log, a row in steps.tsv
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

step profile "$T_PROFILE" "$OUT/llama_profile.json" \
    $PY -m suite profile "$MODEL" --batch "$BATCH" --seq "$SEQ" --dtype bf16 --json \
    --plot "$OUT/llama_profile.png" --trace "$OUT/logs/llama_trace.json"
step extract "$T_EXTRACT" "$OUT/logs/extract.txt" $PY -m suite extract "$OUT/llama_profile.json" --top 5
SLUG=$(echo "$MODEL" | tr -c 'A-Za-z0-9.\n' '-' | tr 'A-Z' 'a-z')
NAMES=$(ls problems/extracted/"$SLUG"/*.py 2>/dev/null | sed 's#^problems/##; s#\.py$##' | tr '\n' ' ')
BEFORE=$(ls results/"$GPU_SLUG"/*.jsonl 2>/dev/null | sort | tail -1)
if [ -n "$NAMES" ]; then
    # shellcheck disable=SC2086
    step bench "$T_BENCH" "$OUT/logs/bench.txt" $PY -m suite bench $NAMES --shapes large --dtype primary \
        --baselines eager,fused,compile,liger --timeout 60
else
    printf 'bench\tskipped (nothing extracted)\t0\n' >> "$STEPS"
fi
AFTER=$(ls results/"$GPU_SLUG"/*.jsonl 2>/dev/null | sort | tail -1)
[ -n "$AFTER" ] && [ "$AFTER" != "$BEFORE" ] && cp "$AFTER" "$OUT/bench_extracted.jsonl"
step verify "$T_VERIFY" "$OUT/llama_verify.json" \
    $PY -m suite verify "$MODEL" --use best --batch "$BATCH" --seq "$SEQ" --dtype bf16 \
    --profile "$OUT/llama_profile.json" --inputs 2 --rounds 10 --json
step gpt2 "$T_GPT2" "$OUT/gpt2_profile.json" \
    $PY -m suite profile gpt2 --batch 8 --seq 1024 --dtype bf16 --json --plot "$OUT/logs/gpt2_profile.png"
step hf "$T_HF" "$OUT/hf_profile.json" \
    $PY -m suite profile "hf:$HF_CONFIG" --batch "$BATCH" --seq "$SEQ" --dtype bf16 --json \
    --plot "$OUT/logs/hf_profile.png"

# Tables of each JSON (readable copies in the tarball) and the summary, printed last.
$PY - "$OUT" "$STEPS" > "$OUT/summary.txt" 2> "$OUT/logs/summary.log" <<'PYEOF'
import json, sys
from pathlib import Path
out, steps = Path(sys.argv[1]), Path(sys.argv[2])
from suite.profile.render import table, totals
from suite.profile.verify_run import render
def load(name):
    try:
        return json.loads((out / name).read_text())
    except (OSError, ValueError):
        return None
print("step      rc   seconds")
for line in steps.read_text().splitlines():
    name, rc, secs = line.split("\t")
    print(f"{name:<9} {rc:<4} {secs}")
for name in ("llama_profile.json", "gpt2_profile.json", "hf_profile.json"):
    p = load(name)
    if p:
        text = totals(p) + "\n\n" + table(p, 10)
        (out / "logs" / name.replace(".json", ".txt")).write_text(text + "\n")
        print(f"\n## {name}\n" + totals(p) + "\n" + table(p, 10 if name.startswith("llama") else 5))
    else:
        print(f"\n## {name}: missing (see logs/)")
v = load("llama_verify.json")
print("\n## verify --use best\n" + (render(v) if v else "missing (see logs/verify.log)"))
PYEOF
cp -r problems/extracted "$OUT/logs/extracted" 2>/dev/null
tar -czf "$OUT/rest.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
cat "$OUT/summary.txt"
scripts/cache_pack.sh "$OUT/ksuite-cache.tar.gz"
