"""Every child that checks or times runs float32 as float32: with PyTorch's default, cuDNN convolutions in
float32 use TF32 and miss a 1e-4 tolerance (upstream KernelBench level 1's eager convolutions on the H200)."""

import json

import torch
from conftest import SCALE_ROWS

from harness.jobs.worker import JobRunner, open_job


def test_a_child_s_start_turns_tf32_off(tmp_path):
    saved = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
    job = {"problem_name": "scale_rows", "problem_path": str(SCALE_ROWS), "impls": [],
           "options": {"interpret": True, "time": False, "done": [], "dtypes": ["float32"]}}
    (tmp_path / "job.json").write_text(json.dumps(job))
    try:
        torch.backends.cudnn.allow_tf32 = True  # PyTorch's default
        torch.backends.cuda.matmul.allow_tf32 = True
        assert open_job(JobRunner, str(tmp_path / "job.json"), str(tmp_path / "events.jsonl")) is not None
        assert (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32) == (False, False)
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved
