"""KernelBench level 1, problem 47: sum over dim 1 of a 3-D tensor, keeping the dimension.

The reduced axis is the middle one, so each output element sums a strided column; dim2 = 4095 is
deliberately not a multiple of any block size.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Simple model that performs sum reduction over a specified dimension.
    """

    def __init__(self, dim: int):
        """
        Args:
            dim (int): Dimension to reduce over.
        """
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Input tensor of shape (..., dim, ...).

        Returns:
            torch.Tensor: Output tensor after sum reduction, shape (..., 1, ...).
        """
        return torch.sum(x, dim=self.dim, keepdim=True)


batch_size = 16
dim1 = 2048
dim2 = 4095
reduce_dim = 1


def get_inputs():
    x = torch.rand(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]


# kernelsuite's optional block (KernelBench ignores it): CPU and edge shapes, tolerances, cost model.
META = {
    "bound": "memory",
    "dtypes": ["float32"],
    # every shape names reduce_dim: a shape sets only the constants it names, and the others keep their
    # last value, so one edge shape reducing dim 2 would otherwise change what the next shape computes
    "small_shapes": [{"batch_size": 2, "dim1": 64, "dim2": 33, "reduce_dim": 1},
                     {"batch_size": 3, "dim1": 100, "dim2": 7, "reduce_dim": 1}],
    "shapes": [{"batch_size": batch_size, "dim1": dim1, "dim2": dim2, "reduce_dim": reduce_dim}],
    "edge_shapes": [{"batch_size": 1, "dim1": 1, "dim2": 1, "reduce_dim": 1},
                    {"batch_size": 2, "dim1": 3000, "dim2": 5, "reduce_dim": 1},
                    {"batch_size": 2, "dim1": 7, "dim2": 1, "reduce_dim": 2}],
    "tolerances": {"float32": (1e-5, 1e-5)},
    "bytes": lambda s, esize: s["batch_size"] * (s["dim1"] + 1) * s["dim2"] * esize,
    "flops": lambda s, esize: s["batch_size"] * s["dim1"] * s["dim2"],
    "stability": ["large", "tiny"],
}
