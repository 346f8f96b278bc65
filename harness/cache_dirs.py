"""Where compile artifacts persist: one cache folder per user, split per (GPU, torch, triton).

torch.compile spends most of a baseline's time compiling and, in max-autotune, benchmarking configs at
every shape; a CUDA C++ solution spends 30 s in nvcc. Inductor (FX graph cache, autotune results, its
generated kernels and their .best_config files), Triton's kernel cache and torch's extension builds all
keep their work in folders named by environment variables, so the harness points every child process it
starts at folders under one root:

    $KSUITE_CACHE_DIR            (else $XDG_CACHE_HOME/kernelsuite, else ~/.cache/kernelsuite)
      inductor/<gpu>_torch<v>_triton<v>/       TORCHINDUCTOR_CACHE_DIR
      triton/<gpu>_torch<v>_triton<v>/         TRITON_CACHE_DIR
      torch_extensions/py<xy>_torch<v>_<gpu>/  TORCH_EXTENSIONS_DIR (harness/cuda_build.py)
      baseline_timings/<gpu>/<key>.json        measured baseline timings (harness/baseline_cache.py)
      optimize/<gpu>/<problem>-<run>/          the optimiser's candidate files (suite/optimize/command.py)

A folder the user already chose (the variable set in the environment) is kept. A GPU machine that starts
bare each session can point KSUITE_CACHE_DIR at a folder inside the repository and carry it along.
"""

from __future__ import annotations

import functools
import os
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path

CACHE_ENV = "KSUITE_CACHE_DIR"


def cache_root(env: dict | None = None) -> Path:
    """The cache folder: KSUITE_CACHE_DIR, else the XDG cache home's kernelsuite/."""
    env = os.environ if env is None else env
    if env.get(CACHE_ENV):
        return Path(env[CACHE_ENV]).expanduser().absolute()
    return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kernelsuite"


def package_version(*names: str) -> str:
    """The installed version of the first of `names` found ('none' if none is installed)."""
    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return "none"


def torch_version() -> str:
    return package_version("torch")


def triton_version() -> str:
    return package_version("triton", "pytorch-triton")


def _nvidia_smi_name() -> str | None:
    """The first visible GPU's name without creating a CUDA context in this process."""
    first = (os.environ.get("CUDA_VISIBLE_DEVICES") or "0").split(",")[0].strip() or "0"
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", first],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.strip().splitlines()
    return lines[0].strip() if out.returncode == 0 and lines else None


@functools.cache
def device_tag() -> str:
    """This machine's GPU as a folder name ('nvidia-h200'; 'cpu' without one)."""
    import torch

    from harness.environment import gpu_slug

    if torch.cuda.is_initialized():
        name = torch.cuda.get_device_name(0)
    else:
        name = _nvidia_smi_name() or (torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu")
    return "cpu" if name == "cpu" else gpu_slug(name)


def environment_tag() -> str:
    """<gpu>_torch<v>_triton<v>: artifacts of one combination never meet another's."""
    return f"{device_tag()}_torch{torch_version()}_triton{triton_version()}"


def extensions_folder_name() -> str:
    """Per Python, torch and GPU: a library built against one torch, or for one GPU's architecture, must
    not be loaded by another (load_inline's name hashes only the solution's source)."""
    return f"py{sys.version_info[0]}{sys.version_info[1]}_torch{torch_version()}_{device_tag()}"


def compile_dirs(env: dict | None = None) -> dict[str, str]:
    """The folder each variable names for this machine (inductor, triton, torch extensions)."""
    root, tag = cache_root(env), environment_tag()
    return {"TORCHINDUCTOR_CACHE_DIR": str(root / "inductor" / tag),
            "TRITON_CACHE_DIR": str(root / "triton" / tag),
            "TORCH_EXTENSIONS_DIR": str(root / "torch_extensions" / extensions_folder_name())}


def with_cache_dirs(env: dict) -> dict:
    """`env` (a child's environment, or os.environ) with every compile cache pointed under the cache root,
    each only where the user has not chosen a folder; inductor's FX graph cache switched on unless the
    user set it (its autotune results are cached locally by default, in the same folder)."""
    if env.get(CACHE_ENV):  # absolute, so a child started in another folder finds the same one
        env[CACHE_ENV] = str(cache_root(env))
    for name, folder in compile_dirs(env).items():
        if not env.get(name):
            env[name] = folder
    env.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "1")
    return env



def exports() -> str:
    """Shell lines exporting the cache folders, so a script's own processes use them too:
    eval "$(python3 -c 'from harness.cache_dirs import exports; print(exports())')"."""
    env = with_cache_dirs(dict(os.environ))
    names = [CACHE_ENV] * bool(env.get(CACHE_ENV)) + ["TORCHINDUCTOR_FX_GRAPH_CACHE", *compile_dirs(env)]
    return "\n".join(f"export {name}={shlex.quote(env[name])}" for name in names)
