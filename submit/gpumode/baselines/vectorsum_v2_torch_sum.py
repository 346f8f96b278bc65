"""vectorsum_v2 with torch.sum: the bar a submission must clear under the leaderboard's own protocol.

`ksuite gpumode-eval problems/gpumode/vectorsum_v2 submit/gpumode/baselines/vectorsum_v2_torch_sum.py
--mode benchmark` times it exactly as a submission is timed (one launch; the 0-dim result, like the
reference's).
"""

import torch


def custom_kernel(data):
    x, output = data
    return torch.sum(x, dim=0, out=output.view(()))
