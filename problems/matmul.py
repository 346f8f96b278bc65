"""Dense matrix multiplication C = A @ B, A [M, K], B [K, N].

get_inputs divides B by sqrt(K), so C has entries of standard deviation about 1 at every K: one
(atol, rtol) pair then fits all shapes, and float16 outputs keep their precision.
"""

import math

import torch

M = 2048
K = 2048
N = 2048


class Model(torch.nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N) / math.sqrt(K)]


def get_init_inputs():
    return []


META = {
    "bound": "compute",
    # the float64 reference in slices of A's rows (B whole: harness/sliced_reference.py), so the compute-bound
    # rule keeps it on the device in the slices that hold least (harness/memory.plan_in_slices)
    "reference_split_dim": 0,
    "reference_whole_inputs": [1],
    "dtypes": ["float16", "bfloat16"],
    # `ksuite goals` on a held-out run: a geometric mean of 1.0x cuBLAS over the held-out LLM shapes, small M included
    "heldout_goals": {"won_share": 0.0, "geomean": 1.0},
    # `ksuite goals` at named shapes (4096^3, 8192^3): 97 % of cuBLAS's speed at each, no geometric-mean bar
    "goals": {"floor": 0.97, "geomean": 0.0},
    "small_shapes": [{"M": 64, "K": 48, "N": 80}],
    "shapes": [{"M": 2048, "K": 2048, "N": 2048}],
    # Workload (harness/workloads.py): the MLP's up projection, tokens x hidden times hidden x intermediate.
    "workload": lambda model, tokens: {"M": tokens, "K": model["hidden"], "N": model["intermediate"]},
    "large_shapes": [{"M": 4096, "K": 4096, "N": 4096}],
    "edge_shapes": [
        {"M": 1, "K": 7, "N": 13},
        {"M": 33, "K": 65, "N": 129},
        {"M": 100, "K": 1, "N": 3},
    ],
    # Tolerances: the eager error is the rounding of C to the dtype (half an ulp: 4.9e-4 relative in
    # float16, 3.9e-3 in bfloat16) plus float32 accumulation (|err| <= 1e-5 + 5e-4 |ref| in float16 on an
    # H200 at 4096^3, <= 8e-6 + 4e-3 |ref| in bfloat16, <= 5e-6 + 1e-4 |ref| in float32). rtol is about
    # 3-4x that rounding; atol is small, so float16 accumulation or a float16 split-K reduction fails,
    # and in float32 a tf32 product (about 7e-4 absolute error here) fails.
    "tolerances": {"float16": (1e-4, 2e-3), "bfloat16": (1e-3, 1.2e-2), "float32": (3e-5, 1e-4)},
    # read A and B once, write C once
    "bytes": lambda s, esize: (s["M"] * s["K"] + s["K"] * s["N"] + s["M"] * s["N"]) * esize,
    "flops": lambda s, esize: 2 * s["M"] * s["N"] * s["K"],
    # "large" (x100 on A and B: C ~ 1e4, a 6.5-sigma entry overflows float16) and "mixed"
    # (rows up to x1000 on both) are left out.
    "stability": ["tiny", "constant_rows"],
    "strided_inputs": True,
    "deterministic": True,
}
