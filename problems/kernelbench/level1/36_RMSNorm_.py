"""KernelBench level 1, problem 36: RMS normalisation over the feature dimension (dim 1) of an NCHW
tensor, without a weight: the reduction runs across a strided axis, not the contiguous one.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Simple model that performs RMS Normalization.
    """

    def __init__(self, num_features: int, eps: float = 1e-5):
        """
        Args:
            num_features (int): Number of features in the input tensor.
            eps (float, optional): A small value added to the denominator to avoid division by zero.
        """
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, num_features, *).

        Returns:
            torch.Tensor: Output tensor with RMS Normalization applied, same shape as input.
        """
        rms = torch.sqrt(torch.mean(x**2, dim=1, keepdim=True) + self.eps)
        return x / rms


batch_size = 16
features = 64
dim1 = 256
dim2 = 256


def get_inputs():
    x = torch.rand(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [features]


# kernelsuite's optional block (KernelBench ignores it): CPU and edge shapes, tolerances, cost model.
META = {
    "bound": "memory",
    "dtypes": ["float32"],
    "small_shapes": [{"batch_size": 2, "features": 8, "dim1": 16, "dim2": 16},
                     {"batch_size": 3, "features": 5, "dim1": 7, "dim2": 9}],
    "shapes": [{"batch_size": batch_size, "features": features, "dim1": dim1, "dim2": dim2}],
    "edge_shapes": [{"batch_size": 1, "features": 1, "dim1": 1, "dim2": 1},
                    {"batch_size": 2, "features": 100, "dim1": 3, "dim2": 5}],
    "tolerances": {"float32": (1e-6, 2e-6)},
    "bytes": lambda s, esize: 2 * s["batch_size"] * s["features"] * s["dim1"] * s["dim2"] * esize,
    "flops": lambda s, esize: 3 * s["batch_size"] * s["features"] * s["dim1"] * s["dim2"],
    "stability": ["large", "tiny"],
}
