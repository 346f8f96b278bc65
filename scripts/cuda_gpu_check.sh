#!/usr/bin/env bash
# The CUDA C++ solutions of the memory-bound problems on a GPU machine, in one call: `bench` builds each
# once (in parallel, one "built ... in N s" line each), runs the five correctness stages, then times
# every solution of each problem (the Triton starter beside the CUDA one) on the large shapes in every
# dtype; then a second build pass must find every library cached. Logs and the run's records under $OUT.
# Usage: scripts/cuda_gpu_check.sh [problem ...]   (default: rmsnorm layernorm softmax cross_entropy
#        reduce_rows rotary; under a 10-minute limit run them in two calls of three). DTYPE=float16 times
#        one dtype only; BASELINES=1 times the PyTorch baselines too (torch.compile takes minutes).
set -uo pipefail
OUT=${OUT:-/tmp/ksuite-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
PY=${PY:-python3}
problems=("$@")
[[ ${#problems[@]} -gt 0 ]] || problems=(rmsnorm layernorm softmax cross_entropy reduce_rows rotary)
baselines=(--no-baselines)
[[ ${BASELINES:-0} == 1 ]] && baselines=()
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1
  $PY -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"
} 2>&1 | tee "$OUT/cuda_env.txt"
start=$(date +%s)
timeout "${BENCH_TIMEOUT:-540}" $PY -m suite bench "${problems[@]}" --dtype "${DTYPE:-all}" "${baselines[@]}" 2>&1 \
    | tee "$OUT/cuda_bench.log"
status=${PIPESTATUS[0]}
echo "bench wall time (builds included): $(( $(date +%s) - start )) s" | tee -a "$OUT/cuda_bench.log"
# Build cache: every CUDA solution again, in fresh processes; each line must say "cached".
$PY - "${problems[@]}" <<'EOF' 2>&1 | tee "$OUT/cuda_cache.log"
import sys

from harness import cuda_build
from harness.spec import Options
from suite.registry import Registry

registry = Registry()
pairs = [(p.path, s.path) for p in map(registry.problem, sys.argv[1:]) for s in registry.solutions(p)]
cuda_build.prebuild_for(pairs, Options(), echo=print)
EOF
grep -q "^cached " "$OUT/cuda_cache.log" && ! grep -qv "^cached " "$OUT/cuda_cache.log" \
    || { echo "cache check: not every build was cached"; status=1; }
$PY -m suite report --format md > "$OUT/cuda_report.md" 2>&1
$PY -m suite report --summary > "$OUT/cuda_summary.txt" 2>&1
slug_dir=$(ls -td results/*/ | grep -v cpu-interpreter | head -1)
cp "$(ls -t "$slug_dir"/*.jsonl | head -1)" "$OUT/" 2>/dev/null
cp -r "$($PY -c 'from harness import cuda_build; print(cuda_build.log_path("x/y.py").parent)')" "$OUT/build_logs" \
    2>/dev/null
exit "$status"
