"""Peak device memory of KernelBench's 36_RMSNorm_ at its upstream size (one 7.5 GB float32 input), in
every implementation, against the bound of 4x inputs + outputs (harness/memory.py), on a GPU machine.

The upstream file is ours (problems/kernelbench/level1/36_RMSNorm_.py) without its META block and with
upstream's size constants (112 x 64 x 512 x 512), written to a temporary tree, so the run is the one an
unmodified KernelBench checkout gets (edge shapes derived from its constants included). Runs
`ksuite kernelbench run` on it with the repo's triton_starter, eager and torch.compile, then prints one
line per record (peak GB, bound GB, within it or not) and copies the run file to $OUT.

Usage: python3 scripts/memory_peak_gpu.py [extra kernelbench run args]; exit 1 if a record is over the
bound or failed for a harness reason (out of memory included).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from harness.memory import BOUND, SLACK  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "problems" / "kernelbench" / "level1" / "36_RMSNorm_.py"
UPSTREAM = {"batch_size": 112, "features": 64, "dim1": 512, "dim2": 512}


def upstream_file(folder: Path) -> Path:
    text = SOURCE.read_text().split("# kernelsuite's optional block")[0]
    for name, value in UPSTREAM.items():
        text = re.sub(rf"^{name} = \d+$", f"{name} = {value}", text, flags=re.M)
    path = folder / "level1" / SOURCE.name
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path


def main(args: list[str]) -> int:
    out = Path(os.environ.get("OUT", "/tmp/ksuite-out"))
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kb-upstream-") as tmp:
        upstream_file(Path(tmp))
        run = subprocess.run([sys.executable, "-m", "suite", "kernelbench", "run", tmp, "--ids", "36", "--json",
                              *args], cwd=ROOT, capture_output=True, text=True)
    (out / "memory_peak_run.log").write_text(run.stdout + run.stderr)
    newest = max((p for p in (ROOT / "results").glob("*/*.jsonl") if "cpu" not in p.parent.name),
                 key=lambda p: p.stat().st_mtime)
    shutil.copy(newest, out / newest.name)
    numel = 1
    for v in UPSTREAM.values():
        numel *= v
    bound = BOUND * (2 * numel * 4) + SLACK
    bad = 0
    for line in newest.read_text().splitlines():
        r = json.loads(line)
        peak = r.get("peak_mem_bytes")
        over = peak is not None and peak > bound
        harness_error = bool(r.get("error")) and r.get("kind") == "baseline"
        bad += over or harness_error
        print(f"{r['solution']:24} {'x'.join(map(str, r['shape'].values())):18} correct={r['correct']!s:5} "
              f"peak={'-' if peak is None else f'{peak / 1e9:.1f}'} GB bound={bound / 1e9:.1f} GB "
              f"{'OVER' if over else 'ok'} {r.get('error') or ''}")
    print(f"kernelbench run exit {run.returncode}; run file {newest}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
