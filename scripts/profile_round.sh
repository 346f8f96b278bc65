#!/usr/bin/env bash
# One device call for issue 12: profile -> extract -> (GPT-2, a Hugging Face config) -> bench -> verify on
# Llama-3-8B (4 layers, bf16, batch 4 x 2048, forward). Every step has its own time limit (seconds, env
# T_*), so one failure or hang costs only its own slot. The whole round stays under T_ROUND (465 s, under
# 8 minutes): the bench gets what the other steps leave, measured when it starts (what profile, extract,
# GPT-2 and HF did not use, less verify's slot and the tail). It benches each extracted problem in its own
# `ksuite bench` run, with the solutions `ksuite bench-plan` names (the op's META recommended, else the
# fastest measured, else the starters; CUDA ones only with BENCH_CUDA=1), cheapest problem first, each
# with every baseline side by side in its run; a problem may use the time the ones before it left, but
# T_BENCH_MIN is held back for each one after it, so every problem gets at least its baselines.
# Outputs under $OUT: 8 files at most come back, so there are 7 plus ksuite-cache.tar.gz; the rest (new
# results/ run files included) is in rest.tar.gz. A summary table is printed last. Run from the repository root:
#   OUT=/some/dir scripts/profile_round.sh
set -u
ROUND_START=$(date +%s)
OUT=${OUT:-/tmp/profile_round}
PY=${PY:-python3}
MODEL=${MODEL:-llama3-8b:4-layers}
BATCH=${BATCH:-4}
SEQ=${SEQ:-2048}
HF_CONFIG=${HF_CONFIG:-suite/profile/hf_configs/qwen2.5-7b-4-layers.json}
BENCH_CUDA=${BENCH_CUDA:-}
T_ROUND=${T_ROUND:-465}
T_PROFILE=${T_PROFILE:-30}
T_EXTRACT=${T_EXTRACT:-15}
T_GPT2=${T_GPT2:-25}
T_HF=${T_HF:-35}
T_VERIFY=${T_VERIFY:-90}
T_TAIL=${T_TAIL:-20}  # the summary, the tarballs and the cache pack at the end
T_BENCH_MIN=${T_BENCH_MIN:-35}
mkdir -p "$OUT/logs"
STEPS="$OUT/logs/steps.tsv"
: > "$STEPS"
export PYTHONUNBUFFERED=1
# Caches (README "Caches"): compile artifacts (verify's own torch.compile too) and baseline timings live in
# KSUITE_CACHE_DIR (default .cache/ksuite, ignored by git; carry it). BASELINE_CACHE=fresh (the default)
# times every bench's baselines in its own run and keeps them, cached reuses kept timings, off neither.
# The folder comes back as $OUT/ksuite-cache.tar.gz, its size printed last.
source "$(dirname "$0")/round_lib.sh"
GPU_SLUG=${GPU_SLUG:-$(this_gpu_slug "$PY")}
use_cache_dir "$PY"
case ${BASELINE_CACHE:-fresh} in
    fresh) export KSUITE_FRESH_BASELINES=1 ;;
    cached) export KSUITE_CACHED_BASELINES=1 ;;
esac


step profile "$T_PROFILE" "$OUT/llama_profile.json" \
    $PY -m suite profile "$MODEL" --batch "$BATCH" --seq "$SEQ" --dtype bf16 --json \
    --plot "$OUT/llama_profile.png" --trace "$OUT/logs/llama_trace.json"
step extract "$T_EXTRACT" "$OUT/logs/extract.txt" $PY -m suite extract "$OUT/llama_profile.json" --top 5
step gpt2 "$T_GPT2" "$OUT/gpt2_profile.json" \
    $PY -m suite profile gpt2 --batch 8 --seq 1024 --dtype bf16 --json --plot "$OUT/logs/gpt2_profile.png"
step hf "$T_HF" "$OUT/hf_profile.json" \
    $PY -m suite profile "hf:$HF_CONFIG" --batch "$BATCH" --seq "$SEQ" --dtype bf16 --json \
    --plot "$OUT/logs/hf_profile.png"

# The bench: one run per extracted problem, in bench-plan's order, each limited as described above.
SLUG=$(echo "$MODEL" | tr -c 'A-Za-z0-9.\n' '-' | tr 'A-Z' 'a-z')
BENCH_START=$(date +%s)
BENCH_BUDGET=$(( T_ROUND - (BENCH_START - ROUND_START) - T_VERIFY - T_TAIL ))
echo "== bench: ${BENCH_BUDGET}s for the extracted problems of $SLUG" >&2
ls results/"$GPU_SLUG"/*.jsonl 2>/dev/null | sort > "$OUT/logs/results_before.txt"
step bench-plan 30 "$OUT/logs/bench_plan.tsv" \
    $PY -m suite bench-plan "extracted/$SLUG" --gpu "$GPU_SLUG" ${BENCH_CUDA:+--cuda}
mapfile -t PLAN < "$OUT/logs/bench_plan.tsv"
for i in "${!PLAN[@]}"; do
    IFS=$'\t' read -r name sols _why <<< "${PLAN[$i]}"
    op=${name##*/}; op=${op%%__*}
    left=$(( BENCH_BUDGET - ($(date +%s) - BENCH_START) ))
    limit=$(( left - T_BENCH_MIN * (${#PLAN[@]} - i - 1) ))
    [ "$limit" -lt "$T_BENCH_MIN" ] && limit=$(( left < T_BENCH_MIN ? left : T_BENCH_MIN ))
    if [ -z "$sols" ] || [ "$limit" -lt 10 ]; then
        printf 'bench-%s\tskipped (%s)\t0\n' "$op" "$([ -z "$sols" ] && echo 'no solution' || echo 'no time left')" \
            >> "$STEPS"
        continue
    fi
    args=()
    for s in ${sols//,/ }; do args+=(--solution "$s"); done
    step "bench-$op" "$limit" "$OUT/logs/bench-$op.txt" $PY -m suite bench -v "$name" "${args[@]}" \
        --shapes large --dtype primary --baselines eager,fused,compile,liger --timeout 60
done
mkdir -p "$OUT/logs/results"
collect_runs "$OUT/logs/results_before.txt" "$OUT/logs/results"

step verify "$T_VERIFY" "$OUT/llama_verify.json" \
    $PY -m suite verify "$MODEL" --use best --batch "$BATCH" --seq "$SEQ" --dtype bf16 \
    --profile "$OUT/llama_profile.json" --inputs 2 --rounds 10 --json

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
print(f"{'step':<22} {'rc':<4} seconds")
for line in steps.read_text().splitlines():
    name, rc, secs = line.split("\t")
    print(f"{name:<22} {rc:<4} {secs}")
for name in ("llama_profile.json", "gpt2_profile.json", "hf_profile.json"):
    p = load(name)
    if p:
        text = totals(p) + "\n\n" + table(p, 10)
        (out / "logs" / name.replace(".json", ".txt")).write_text(text + "\n")
        print(f"\n## {name}\n" + totals(p) + "\n" + table(p, 10 if name.startswith("llama") else 5))
    else:
        print(f"\n## {name}: missing (see logs/)")
print("\n## bench of the extracted problems (new run files in logs/results/)")
print(f"{'problem':<42} {'implementation':<20} {'kind':<9} {'median us':>10} {'vs best baseline':>17}")
for run in sorted((out / "logs" / "results").glob("*.jsonl")):
    for line in run.read_text().splitlines():
        r = json.loads(line)
        median = f"{r['median_us']:.1f}" if r.get("median_us") else ("FAILED" if r.get("correct") is False else "-")
        vs = r.get("speedup_vs_best_baseline") if r["kind"] == "solution" else None
        print(f"{r['problem'].rsplit('/', 1)[-1]:<42} {r['solution']:<20} {r['kind']:<9} {median:>10} "
              f"{(f'{vs:.2f}x ' + str(r.get('best_baseline') or '')) if vs else '-':>17}")
v = load("llama_verify.json")
print("\n## verify --use best\n" + (render(v) if v else "missing (see logs/verify.log)"))
PYEOF
cp -r problems/extracted "$OUT/logs/extracted" 2>/dev/null
tar -czf "$OUT/rest.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
cat "$OUT/summary.txt"
scripts/cache_pack.sh "$OUT/ksuite-cache.tar.gz"
