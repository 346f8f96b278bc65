"""KernelBench level 1, problem 19: ReLU.

Inputs are torch.rand shifted to [-1, 1): on torch.rand's [0, 1) ReLU is the identity and a plain
copy would pass.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Simple model that performs a ReLU activation.
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Input tensor of any shape.

        Returns:
            torch.Tensor: Output tensor with ReLU applied, same shape as input.
        """
        return torch.relu(x)


batch_size = 4096
dim = 16384


def get_inputs():
    x = torch.rand(batch_size, dim) * 2 - 1
    return [x]


def get_init_inputs():
    return []  # No special initialization inputs needed


# kernelsuite's optional block (KernelBench ignores it): CPU and edge shapes, tolerances, cost model.
META = {
    "bound": "memory",
    "dtypes": ["float32"],
    "small_shapes": [{"batch_size": 16, "dim": 256}, {"batch_size": 5, "dim": 100}],
    "shapes": [{"batch_size": batch_size, "dim": dim}],
    "edge_shapes": [{"batch_size": 1, "dim": 1}, {"batch_size": 3, "dim": 1000}],
    "tolerances": {"float32": (0.0, 0.0)},  # exact: max(x, 0) rounds nothing
    "bytes": lambda s, esize: 2 * s["batch_size"] * s["dim"] * esize,
    "stability": ["large", "tiny"],
    "strided_inputs": True,
}
