"""Build every CUDA C++ solution of the given problems (all problems if none), in parallel, once per
machine: later `ksuite bench` / `check` runs then find them cached.
Usage: python3 scripts/prebuild_cuda.py [PROBLEM...]"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import cuda_build  # noqa: E402
from harness.spec import Options  # noqa: E402
from suite.registry import Registry  # noqa: E402

registry = Registry()
problems = [registry.problem(name) for name in sys.argv[1:]] or registry.problems()
pairs = [(p.path, s.path) for p in problems for s in registry.solutions(p)]
cuda_build.prebuild_for(pairs, Options(), echo=print)
