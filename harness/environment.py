"""The environment fingerprint carried by every record: what ran, where, with which versions."""

from __future__ import annotations

import os
import platform
import re
import subprocess

import torch


def gpu_name() -> str:
    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"


def gpu_slug(name: str | None = None) -> str:
    """'NVIDIA H200' -> 'nvidia-h200': the results folder of this GPU."""
    name = name or gpu_name()
    if name == "cpu":
        return "cpu-interpreter"
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _driver() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None
    except (OSError, subprocess.SubprocessError):
        return None


def _commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
                             timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return (out.stdout.strip() + ("-dirty" if dirty else "")) if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def capability_number(text: str | None) -> int | None:
    """A fingerprint's capability ("9.0") as the compilers take it (90); None where there is none."""
    try:
        major, minor = (int(v) for v in str(text).split("."))
    except ValueError:
        return None
    return major * 10 + minor


def fingerprint() -> dict:
    import triton

    props = torch.cuda.get_device_properties(0) if torch.cuda.is_available() else None
    return {
        "gpu": gpu_name(),
        "sm_count": props.multi_processor_count if props else None,
        "capability": f"{props.major}.{props.minor}" if props else None,
        "driver": _driver() if props else None,
        "cuda": torch.version.cuda,
        "torch": torch.__version__,
        "triton": triton.__version__,
        "python": platform.python_version(),
        "commit": os.environ.get("KSUITE_COMMIT") or _commit(),  # a copied tree may have no .git
    }
