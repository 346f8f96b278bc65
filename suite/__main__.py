"""`python -m suite`: the command line.

With KSUITE_NEED_CUDA=1 (how `make bench` first tries the machine's own python) it exits with NO_CUDA_EXIT
before anything else where torch, triton or a CUDA device is missing, and make falls back to the venv. The
check is the run's own torch import: a separate interpreter asking first cost `make bench` seconds of its
start on the H200 (torch and triton imported twice, CUDA initialised twice).
"""

import os
import sys

NO_CUDA_EXIT = 86

if os.environ.pop("KSUITE_NEED_CUDA", None) == "1":  # popped: the run's children never see it
    try:
        import torch
        import triton  # noqa: F401 - the suite needs both

        found = torch.cuda.is_available()
    except Exception:  # noqa: BLE001 - any failure to import means: not this python
        found = False
    if not found:
        sys.exit(NO_CUDA_EXIT)
    print(f"using {sys.executable} (CUDA torch and triton found; installing nothing)", flush=True)

from suite.cli import main  # noqa: E402 - after the check, which must come before every other import

main()
