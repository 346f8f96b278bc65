"""KernelBench level 1, problem 88: the tanh approximation of GELU from minGPT (and BERT, GPT-2).

Inputs are torch.rand stretched to [-5, 5): the negative side, where 1 + tanh(.) cancels, is checked.
"""

import math

import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Implementation of the GELU activation function currently in Google BERT repo (identical to OpenAI GPT).
    Reference: Gaussian Error Linear Units (GELU) paper: https://arxiv.org/abs/1606.08415
    """

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


batch_size = 8192
dim = 8192


def get_inputs():
    return [torch.rand(batch_size, dim) * 10 - 5]


def get_init_inputs():
    return []


# kernelsuite's optional block (KernelBench ignores it): CPU and edge shapes, tolerances, cost model.
META = {
    "bound": "memory",
    "dtypes": ["float32"],
    "small_shapes": [{"batch_size": 16, "dim": 256}, {"batch_size": 5, "dim": 100}],
    "shapes": [{"batch_size": batch_size, "dim": dim}],
    "edge_shapes": [{"batch_size": 1, "dim": 1}, {"batch_size": 3, "dim": 1000}],
    "tolerances": {"float32": (1e-6, 2e-6)},
    "bytes": lambda s, esize: 2 * s["batch_size"] * s["dim"] * esize,
    "flops": lambda s, esize: 9 * s["batch_size"] * s["dim"],
    "stability": ["large", "tiny"],
    "strided_inputs": True,
}
