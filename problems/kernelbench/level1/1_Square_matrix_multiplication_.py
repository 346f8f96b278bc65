"""KernelBench level 1, problem 1: C = A @ B for square fp32 matrices.

Inputs are torch.rand shifted to [-1, 1): with all-positive entries every output is about N/4 and its
relative error averages out, so a TF32 kernel (10-bit mantissa inputs) would pass unnoticed; signed
entries keep outputs near zero too, where TF32's error shows.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Simple model that performs a single square matrix multiplication (C = A * B).
    """

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A (torch.Tensor): Input matrix A of shape (N, N).
            B (torch.Tensor): Input matrix B of shape (N, N).

        Returns:
            torch.Tensor: Output matrix C of shape (N, N).
        """
        return torch.matmul(A, B)


N = 4096


def get_inputs():
    A = torch.rand(N, N) * 2 - 1
    B = torch.rand(N, N) * 2 - 1
    return [A, B]


def get_init_inputs():
    return []  # No special initialization inputs needed


# kernelsuite's optional block (KernelBench ignores it): CPU and edge shapes, tolerances, cost model.
META = {
    "bound": "compute",
    "dtypes": ["float32"],
    "small_shapes": [{"N": 64}, {"N": 48}],
    "shapes": [{"N": N}],
    "edge_shapes": [{"N": 1}, {"N": 33}, {"N": 127}],
    "tolerances": {"float32": (5e-4, 1e-5)},
    "bytes": lambda s, esize: 3 * s["N"] ** 2 * esize,
    "flops": lambda s, esize: 2 * s["N"] ** 3,
    "deterministic": True,
}
