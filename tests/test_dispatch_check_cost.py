"""The watched call must not drag torch._dynamo in: on a GPU image without cached bytecode that import
took ~10 s per child process, 1.5x the rest of a check (the integrity overhead goal is < 25 %)."""

import subprocess
import sys

PROGRAM = """
import sys, torch
from harness.integrity import dispatch_check
with dispatch_check.watch() as act:
    y = torch.randn(4) * 2
assert act.work_ops(), "the mode saw no ops"
print("dynamo imported:", "torch._dynamo" in sys.modules)
"""


def test_watching_a_call_does_not_import_dynamo():
    out = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "dynamo imported: False"
