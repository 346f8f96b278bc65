#!/usr/bin/env bash
# The oldest torch and triton the package declares (pyproject.toml: torch>=2.5, triton>=3.2), tested on a CPU
# machine: a venv with TORCH and TRITON (default 2.6.0 and 3.2.0: torch 2.5's wheels pin triton 3.1, so 2.6 is
# the oldest torch pip pairs with triton 3.2; TORCH=2.5.1 forces 3.2 beside it) and the rest of
# requirements-dev.txt, then the test suite under Triton's interpreter on a fresh clone of HEAD. Needs a package
# index (pip's own configuration) and about 6 GB of disk.
#   scripts/floor_check.sh [VENV_DIR]         (default /tmp/ksuite-floor)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-/tmp/ksuite-floor}
torch_version=${TORCH:-2.6.0}
triton_version=${TRITON:-3.2.0}
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q "torch==$torch_version"
"$venv/bin/pip" install -q --no-deps "triton==$triton_version"  # torch pins its own; the floor is what we test
grep -v '^torch\|^triton' "$repo/requirements-dev.txt" > "$venv/requirements-rest.txt"
"$venv/bin/pip" install -q -r "$venv/requirements-rest.txt"
clone=$(mktemp -d /tmp/ksuite-floor-clone.XXXXXX)
git clone -q "$repo" "$clone"
"$venv/bin/pip" install -q --no-deps -e "$clone"  # `ksuite --version` reads the installed package
cd "$clone"
"$venv/bin/python" -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
TRITON_INTERPRET=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider -rs tests
