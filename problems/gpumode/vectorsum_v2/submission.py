#!POPCORN leaderboard vectorsum_v2
#!POPCORN gpu H100
"""Sample vectorsum_v2 submission: a float64 torch sum written into the given output buffer."""

import torch
from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    x, output = data
    output.copy_(x.to(torch.float64).sum().reshape(1))
    return output.view(())
