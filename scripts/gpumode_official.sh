#!/usr/bin/env bash
# A submission under GPU MODE's own eval.py (not our copy of the protocol), beside torch.sum, on a GPU
# machine. DIR is a reference-kernels problem set folder holding eval.py and utils.py with the problem's
# reference.py and task.py in PROBLEM/ (e.g. a checkout's problems/pmpp_v2 and vectorsum_py); none of
# their code is kept in this repository. Prints each file's mean, best, worst and spread per benchmark size, in
# microseconds (a mean far above the best is a few slow calls: the worst says how slow).
# Usage: scripts/gpumode_official.sh DIR PROBLEM SUBMISSION.py [MODE=benchmark]
set -uo pipefail
dir=$1; problem=$2; submission=$3; mode=${4:-benchmark}
cases=$(python3 - "$dir/$problem/task.yml" "$mode" <<'PY'
import sys, yaml
task = yaml.safe_load(open(sys.argv[1]))
for case in task["tests" if sys.argv[2] == "test" else "benchmarks"]:
    print("; ".join(f"{k}: {v}" for k, v in case.items()))
PY
)
for sub in "$submission" submit/gpumode/baselines/vectorsum_v2_torch_sum.py; do
    work=$(mktemp -d)
    cp "$dir/eval.py" "$dir/utils.py" "$dir/$problem/reference.py" "$dir/$problem/task.py" "$work/"
    cp "$sub" "$work/submission.py"
    printf '%s\n' "$cases" > "$work/cases.txt"
    (cd "$work" && POPCORN_FD=3 timeout 300 python3 eval.py "$mode" cases.txt 3> result.txt 2> stderr.txt)
    echo "== $(basename "$sub"): GPU MODE eval.py $mode, exit $?"
    python3 - "$work/result.txt" <<'PY'
import sys
lines = dict(line.split(": ", 1) for line in open(sys.argv[1]).read().splitlines() if ": " in line)
n = int(lines.get("benchmark-count", lines.get("test-count", 0)))
for i in range(n):
    spec = lines.get(f"benchmark.{i}.spec", lines.get(f"test.{i}.spec"))
    mean = lines.get(f"benchmark.{i}.mean")
    status = lines.get(f"benchmark.{i}.status", lines.get(f"test.{i}.status", ""))
    us = {k: float(lines.get(f"benchmark.{i}.{k}", "nan")) / 1000 for k in ("best", "worst", "std")}
    print(f"  {spec}: " + (f"mean {float(mean) / 1000:.1f} us, best {us['best']:.1f} us, worst {us['worst']:.1f} us, "
                           f"std {us['std']:.1f} us over {lines.get(f'benchmark.{i}.runs', '?')} runs"
                           if mean else status))
print("  check:", lines.get("check", "-"))
PY
    tail -3 "$work/stderr.txt" | sed 's/^/  stderr: /'
done
