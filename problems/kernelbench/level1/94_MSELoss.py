"""KernelBench level 1, problem 94: mean squared error, reduced to one number.

With uniform inputs the mean of 67M squared differences is 1/6 to within about 2e-5 for every seed,
so a kernel returning the constant 0.1667 would pass a 1e-4 tolerance. Heavy-tailed inputs (Pareto
with scale 0.01 and shape 1.5, drawn from torch.rand by inverting its CDF) make the loss differ from
draw to draw.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A model that computes the Mean Squared Error loss for regression tasks.

    Parameters:
        None
    """

    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.mean((predictions - targets) ** 2)


batch_size = 4096
dim = 16384


def pareto(*shape):
    """Pareto(scale=0.01, alpha=1.5) by inverse CDF; 1 - rand lies in (0, 1], so never infinite."""
    return 0.01 * (1 - torch.rand(*shape)) ** (-1 / 1.5)


def get_inputs():
    return [pareto(batch_size, dim), pareto(batch_size, dim)]


def get_init_inputs():
    return []


# kernelsuite's optional block (KernelBench ignores it): CPU and edge shapes, tolerances, cost model.
META = {
    "bound": "memory",
    "dtypes": ["float32"],
    "small_shapes": [{"batch_size": 16, "dim": 256}, {"batch_size": 5, "dim": 100}],
    "shapes": [{"batch_size": batch_size, "dim": dim}],
    "edge_shapes": [{"batch_size": 1, "dim": 1}, {"batch_size": 3, "dim": 1000}],
    "tolerances": {"float32": (1e-8, 1e-5)},
    "bytes": lambda s, esize: 2 * s["batch_size"] * s["dim"] * esize,
    "flops": lambda s, esize: 3 * s["batch_size"] * s["dim"],
    "stability": ["large", "tiny"],
    "strided_inputs": True,
}
