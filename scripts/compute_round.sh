#!/usr/bin/env bash
# One device call for issue 14 (Hopper-native matmul, causal attention, fused MLP), under T_ROUND seconds
# (530 by default), every step time-bounded by `timeout` (seconds, env T_*):
#   inspect   (CPU only, in the background from the start) `ksuite inspect` of each new solution at its
#             problem's large shapes, SASS kept; the summary counts HGMMA / HMMA / UTMALDG / UTMASTG
#   bench-*   `ksuite bench` of the three solutions at the issue's goal shapes beside torch in one run each:
#             matmul fp16 + bf16 at 4096^3, 8192^3 and five LLM shapes (decode M 7 and 16, split-K; prefill
#             M 127, 509, 1000), against eager (cuBLAS); attention fp16 + bf16 at 2x32x4096x128 and
#             1x32x8192x64 against SDPA; fused MLP bf16 at 4096 and 512 tokens (Llama 3 8B) against eager
#             and torch.compile
#   variants  scripts/hopper_variants.py: hand-picked tunables of each solution against torch, do_bench
#   mlp-max   fused MLP again beside torch.compile max-autotune-no-cudagraphs (the best baseline of run
#             20261130-001902), only if enough time is left (its autotuning takes minutes)
# Outputs under $OUT, 8 files at most: summary.txt (printed last), variants.tsv, inspect.txt, results.tar.gz
# (the new results/<gpu>/ run files, to commit), rest.tar.gz (logs, SASS), ksuite-cache.tar.gz.
# Run from the repository root:
#   OUT=/some/dir scripts/compute_round.sh
set -u
ROUND_START=$(date +%s)
OUT=${OUT:-/tmp/compute_round}
PY=${PY:-python3}
T_ROUND=${T_ROUND:-530}
T_INSPECT=${T_INSPECT:-240}
T_MATMUL=${T_MATMUL:-170}
T_ATTN=${T_ATTN:-90}
T_MLP=${T_MLP:-80}
T_VARIANTS=${T_VARIANTS:-130}
T_MLP_MAX_MIN=${T_MLP_MAX_MIN:-45}
T_TAIL=${T_TAIL:-20}
mkdir -p "$OUT/logs/results" "$OUT/logs/sass"
STEPS="$OUT/logs/steps.tsv"
: > "$STEPS"
export PYTHONUNBUFFERED=1
source "$(dirname "$0")/round_lib.sh"
GPU_SLUG=${GPU_SLUG:-$(this_gpu_slug "$PY")}
use_cache_dir "$PY"

left() { echo $(( T_ROUND - ($(date +%s) - ROUND_START) )); }

# Machine code, on the CPU cores, while the GPU steps run (each inspect bounded by T_INSPECT).
INSPECT_PIDS=()
for pair in matmul:triton_tma_persistent attention_causal:triton_flash_tma fused_mlp:triton_fused_gate_up; do
    p=${pair%%:*} s=${pair##*:}
    step "inspect-$p" "$T_INSPECT" "$OUT/logs/inspect-$p.txt" \
        $PY -m suite inspect "$p" "$s" --shapes large --sass "$OUT/logs/sass/$p" &
    INSPECT_PIDS+=($!)
done

ls results/"$GPU_SLUG"/*.jsonl 2>/dev/null | sort > "$OUT/logs/results_before.txt"
MATMUL_SHAPES=(M=4096,K=4096,N=4096 M=8192,K=8192,N=8192 M=7,K=4096,N=14336 M=16,K=14336,N=4096
               M=127,K=3072,N=8192 M=509,K=8192,N=28672 M=1000,K=4096,N=14336)
args=(); for s in "${MATMUL_SHAPES[@]}"; do args+=(--shape "$s"); done
step bench-matmul "$T_MATMUL" "$OUT/logs/bench-matmul.txt" $PY -m suite bench -v matmul \
    --solution triton_tma_persistent --dtype all --baselines eager "${args[@]}" --timeout 90
step bench-attention "$T_ATTN" "$OUT/logs/bench-attention.txt" $PY -m suite bench -v attention_causal \
    --solution triton_flash_tma --dtype all --baselines fused --timeout 60 \
    --shape batch_size=2,num_heads=32,seq_len=4096,head_dim=128 --shape batch_size=1,num_heads=32,seq_len=8192,head_dim=64
MLP_SHAPES=(--shape tokens=4096,hidden=4096,intermediate=14336 --shape tokens=512,hidden=4096,intermediate=14336)
step bench-mlp "$T_MLP" "$OUT/logs/bench-mlp.txt" $PY -m suite bench -v fused_mlp \
    --solution triton_fused_gate_up --dtype bf16 --baselines eager,compile --timeout 60 "${MLP_SHAPES[@]}"
step variants "$T_VARIANTS" "$OUT/variants.tsv" $PY scripts/hopper_variants.py --budget-s $(( T_VARIANTS - 30 ))
limit=$(( $(left) - T_TAIL ))
if [ "$limit" -ge "$T_MLP_MAX_MIN" ]; then
    step bench-mlp-max "$limit" "$OUT/logs/bench-mlp-max.txt" $PY -m suite bench -v fused_mlp \
        --solution triton_fused_gate_up --dtype bf16 --baselines compile-max-autotune --timeout 60 "${MLP_SHAPES[@]}"
else
    printf 'bench-mlp-max\tskipped (%ss left)\t0\n' "$limit" >> "$STEPS"
fi
wait "${INSPECT_PIDS[@]}"  # long done: each had T_INSPECT from the start
collect_runs "$OUT/logs/results_before.txt" "$OUT/logs/results"

$PY - "$OUT" "$STEPS" > "$OUT/summary.txt" 2> "$OUT/logs/summary.log" <<'PYEOF'
import json, re, sys
from collections import Counter
from pathlib import Path
out, steps = Path(sys.argv[1]), Path(sys.argv[2])
print(f"{'step':<18} {'rc':<18} seconds")
for line in steps.read_text().splitlines():
    name, rc, secs = line.split("\t")
    print(f"{name:<18} {rc:<18} {secs}")
try:
    cal = json.loads(Path("results/nvidia-h200/calibration.json").read_text())
except (OSError, ValueError):
    cal = {}
print("\n## bench (new run files in results.tar.gz); % rate = TFLOP/s over this GPU's calibrated matmul rate")
print(f"{'problem':<17} {'shape':<22} {'dtype':<9} {'implementation':<22} {'median us':>10} {'TFLOP/s':>8} "
      f"{'% rate':>7} {'x best':>7}  best baseline")
for run in sorted((out / "logs" / "results").glob("*.jsonl")):
    for line in run.read_text().splitlines():
        r = json.loads(line)
        shape = "x".join(str(v) for v in r["shape"].values())
        rate = cal.get(f"matmul_{'bf16' if r['dtype'] == 'bfloat16' else 'fp16'}_flops") or cal.get("matmul_flops")
        med = r.get("median_us")
        tf = r.get("tflops")
        pct = f"{100 * tf * 1e12 / rate:.0f}" if tf and rate else "-"
        vs = r.get("speedup_vs_best_baseline") if r["kind"] == "solution" else None
        status = f"{med:.1f}" if med else ("FAILED" if r.get("correct") is False else "-")
        print(f"{r['problem']:<17} {shape:<22} {r['dtype']:<9} {r['solution']:<22} {status:>10} "
              f"{(f'{tf:.0f}' if tf else '-'):>8} {pct:>7} {(f'{vs:.3f}' if vs else '-'):>7}  "
              f"{r.get('best_baseline') or ''}{'  ' + str(r.get('error'))[:150] if r.get('error') else ''}")
print("\n## machine code (ksuite inspect, sm_90): instruction counts per kernel in its SASS")
for sass in sorted((out / "logs" / "sass").rglob("*.sass")):
    ops = Counter(re.findall(r"\b(HGMMA\.[0-9x]+|HMMA\.[0-9]+|UTMALDG\.\dD|UTMASTG\.\dD|LDGSTS|LDG\.E[.0-9A-Z]*)", sass.read_text()))
    print(f"{sass.parent.name:<17} {sass.name[:90]:<90} {dict(sorted(ops.items()))}")
for txt in sorted((out / "logs").glob("inspect-*.txt")):
    print(f"\n### {txt.name}\n{txt.read_text().strip()[:3000]}")
PYEOF
sed -n '/## machine code/,$p' "$OUT/summary.txt" > "$OUT/inspect.txt"
tar -czf "$OUT/results.tar.gz" -C "$OUT/logs" results
tar -czf "$OUT/rest.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
cat "$OUT/summary.txt"
echo "round wall time: $(( $(date +%s) - ROUND_START )) s"
scripts/cache_pack.sh "$OUT/ksuite-cache.tar.gz"
