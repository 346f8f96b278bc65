"""scripts/compile_launches.py on a stand-in inductor cache: a kernel file with its kept launch, a graph's wrapper
(not a kernel), a kernel autotuned by nobody, and a folder whose one `.best_config` cannot be told apart."""

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "compile_launches.py"
KERNEL = '''import triton
@triton_heuristics.{kind}(
    size_hints={{'x': 4096}},
    triton_meta={{'signature': {{'in_ptr0': '*bf16', 'out_ptr0': '*bf16', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}}}},
    inductor_meta={{'max_autotune': {autotune}}},
)
@triton.jit
def {name}(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = {numel}
    xoffset = tl.program_id(0) * XBLOCK
'''


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_each_kernel_with_the_launch_its_autotuner_kept(tmp_path):
    write(tmp_path / "ab" / "cab1.py", KERNEL.format(kind="pointwise", autotune=False, name="triton_poi_a", numel=4096))
    write(tmp_path / "ab" / "0f.best_config", json.dumps({"XBLOCK": 128, "num_warps": 4, "num_stages": 1}))
    write(tmp_path / "cd" / "ccd1.py", "x = async_compile.triton('k', '''" + KERNEL.format(
        kind="pointwise", autotune=False, name="triton_poi_b", numel=8) + "''')\n")  # a wrapper: no row
    write(tmp_path / "ef" / "cef1.py", KERNEL.format(kind="reduction", autotune=True, name="triton_red_c", numel=7))
    write(tmp_path / "gh" / "cgh1.py", KERNEL.format(kind="pointwise", autotune=True, name="triton_poi_d", numel=1))
    write(tmp_path / "gh" / "cgh2.py", KERNEL.format(kind="pointwise", autotune=True, name="triton_poi_e", numel=2))
    write(tmp_path / "gh" / "1a.best_config", json.dumps({"XBLOCK": 64, "num_warps": 2}))
    out = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True, check=True)
    header, *rows = [line.split("\t") for line in out.stdout.splitlines()]
    got = {row[0]: dict(zip(header, row)) for row in rows}
    assert set(got) == {"triton_poi_a", "triton_red_c", "triton_poi_d", "triton_poi_e"}
    a = got["triton_poi_a"]
    assert (a["kind"], a["sizes"], a["dtypes"], a["max_autotune"]) == ("pointwise", "xnumel=4096", "bf16", "False")
    assert (a["XBLOCK"], a["num_warps"], a["num_stages"], a["R0_BLOCK"]) == ("128", "4", "1", "-")
    assert got["triton_red_c"]["XBLOCK"] == "-" and got["triton_red_c"]["kind"] == "reduction"
    assert got["triton_poi_d"]["XBLOCK"] == got["triton_poi_e"]["XBLOCK"] == "ambiguous"


def test_a_missing_folder_is_one_line(tmp_path):
    out = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "nope")], capture_output=True, text=True)
    assert out.returncode == 1 and out.stderr.strip() == f"{tmp_path / 'nope'}: not a folder"
