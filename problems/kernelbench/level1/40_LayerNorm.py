"""KernelBench level 1, problem 40: LayerNorm over the last three dimensions of an NCHW tensor.

Each of the 16 rows holds 4M elements, so one thread block per row (the usual LayerNorm kernel)
leaves most of the GPU idle: the row has to be split across many programs.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Simple model that performs Layer Normalization.
    """

    def __init__(self, normalized_shape: tuple):
        """
        Args:
            normalized_shape (tuple): Shape of the input tensor to be normalized.
        """
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Input tensor of shape (*, normalized_shape).

        Returns:
            torch.Tensor: Output tensor with Layer Normalization applied, same shape as input.
        """
        return self.ln(x)


batch_size = 16
features = 64
dim1 = 256
dim2 = 256


def get_inputs():
    x = torch.rand(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [(features, dim1, dim2)]


# kernelsuite's optional block (KernelBench ignores it): CPU and edge shapes, tolerances, cost model.
META = {
    "bound": "memory",
    "dtypes": ["float32"],
    "small_shapes": [{"batch_size": 2, "features": 4, "dim1": 16, "dim2": 16},
                     {"batch_size": 3, "features": 5, "dim1": 7, "dim2": 9}],
    "shapes": [{"batch_size": batch_size, "features": features, "dim1": dim1, "dim2": dim2}],
    "edge_shapes": [{"batch_size": 1, "features": 1, "dim1": 1, "dim2": 1},
                    {"batch_size": 2, "features": 3, "dim1": 100, "dim2": 101}],
    "tolerances": {"float32": (1e-5, 1e-5)},
    # the fewest: x read once, y written once, weight and bias read once
    "bytes": lambda s, esize: (2 * s["batch_size"] + 2) * s["features"] * s["dim1"] * s["dim2"] * esize,
    "flops": lambda s, esize: 7 * s["batch_size"] * s["features"] * s["dim1"] * s["dim2"],
    "stability": ["large", "tiny"],
}
