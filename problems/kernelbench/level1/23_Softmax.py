"""KernelBench level 1, problem 23: Softmax over dim 1.

Inputs are torch.rand stretched to [-10, 10). On torch.rand's [0, 1) every one of the 16,384 outputs
of a row is below 1e-4, so under KernelBench's atol of 1e-4 an all-zeros kernel passes.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Simple model that performs a Softmax activation.
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, num_features).

        Returns:
            torch.Tensor: Output tensor with Softmax applied, same shape as input.
        """
        return torch.softmax(x, dim=1)


batch_size = 4096
dim = 16384


def get_inputs():
    x = torch.rand(batch_size, dim) * 20 - 10
    return [x]


def get_init_inputs():
    return []  # No special initialization inputs needed


# kernelsuite's optional block (KernelBench ignores it): CPU and edge shapes, tolerances, cost model.
META = {
    "bound": "memory",
    "dtypes": ["float32"],
    "small_shapes": [{"batch_size": 16, "dim": 256}, {"batch_size": 5, "dim": 1000}],
    "shapes": [{"batch_size": batch_size, "dim": dim}],
    "edge_shapes": [{"batch_size": 1, "dim": 1}, {"batch_size": 3, "dim": 5000}],
    # outputs span e^-20 relative to the row maximum: a tiny atol, so every one of them is checked
    "tolerances": {"float32": (1e-12, 2e-5)},
    "bytes": lambda s, esize: 2 * s["batch_size"] * s["dim"] * esize,
    "flops": lambda s, esize: 5 * s["batch_size"] * s["dim"],
    "stability": ["large", "tiny", "constant_rows"],
    "strided_inputs": True,
}
