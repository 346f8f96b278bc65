"""KernelBench level 1, problem 22: Tanh.

Inputs are torch.rand stretched to [-5, 5): negative inputs and saturation are checked too.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Simple model that performs a Tanh activation.
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Input tensor of any shape.

        Returns:
            torch.Tensor: Output tensor with Tanh applied, same shape as input.
        """
        return torch.tanh(x)


batch_size = 4096
dim = 16384


def get_inputs():
    x = torch.rand(batch_size, dim) * 10 - 5
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
    "tolerances": {"float32": (1e-6, 2e-6)},
    "bytes": lambda s, esize: 2 * s["batch_size"] * s["dim"] * esize,
    "flops": lambda s, esize: 5 * s["batch_size"] * s["dim"],
    "stability": ["large", "tiny"],
    "strided_inputs": True,
}
