"""Sum of a float32 vector: GPU MODE's vectorsum_v2 (pmpp_v2 set), in KernelBench form.

The input is randn(size) * scale + offset, scale in [0.1, 10) and offset in [-100, 100) drawn per
input, so that the sum is large and a kernel cannot lean on a zero mean. Differences from GPU MODE's
reference.py:
- GPU MODE seeds three CUDA generators (seed, seed + 1, seed + 2) for the data, the offset and the
  scale; here all three come, in that order, from torch's global CPU generator, which the harness
  seeds before each trial. Same distributions, different numbers for a given seed.
- GPU MODE also hands the kernel an uninitialised output tensor of shape [1]; here the output is a
  new 0-dim float32 tensor, the shape of GPU MODE's reference result.
Model is the naive eager float32 sum; ModelFused is GPU MODE's reference (a float64 sum cast to
float32), which is also what the harness's float64 reference computes.
"""

import torch

size = 6553600


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.sum(x)


class ModelFused(torch.nn.Module):
    def forward(self, x):
        return x.to(torch.float64).sum().to(torch.float32)


def get_inputs():
    data = torch.randn(size, dtype=torch.float32)
    offset = (torch.rand(1) * 200 - 100).item()
    scale = (torch.rand(1) * 9.9 + 0.1).item()
    return [data * scale + offset]


def get_init_inputs():
    return []


META = {
    "bound": "memory",
    "goal_pct_sol": 93,  # what the best read-mostly kernels (sums, losses) reach on Hopper
    "dtypes": ["float32"],
    "small_shapes": [{"size": 4096}],
    "shapes": [{"size": 3276800}, {"size": 6553600}, {"size": 26214400}],
    # Workload (harness/workloads.py): a sum over one layer's activations (tokens x hidden), plus GPU
    # MODE's six benchmark sizes.
    "workload": lambda model, tokens: {"size": tokens * model["hidden"]},
    "workload_extra": [{"size": n} for n in (1638400, 3276800, 6553600, 13107200, 26214400, 52428800)],
    # The one file users should take for every shape; goals on held-out shapes judge it alone.
    "recommended": "triton_family",
    "large_shapes": [{"size": 1638400}, {"size": 13107200}, {"size": 52428800}],
    "edge_shapes": [{"size": 1}, {"size": 1023}, {"size": 1024}, {"size": 1025}, {"size": 2048}],
    # GPU MODE's check: atol 1e-8, rtol 1e-5 (float32 is the only dtype of this problem).
    "tolerances": {"float32": (1e-8, 1e-5)},
    # read x once, write one float32
    "bytes": lambda s, esize: 4 * s["size"] + 4,
    "flops": lambda s, esize: s["size"],
    # float32 sums: eager passes every transform by 100x or more
    "stability": ["large", "tiny", "mixed", "constant_rows"],
    "strided_inputs": True,
    # float atomics add the block sums in any order: repeated runs may differ by this relative amount
    "deterministic": 1e-6,
    "gpumode": {
        "leaderboard": "vectorsum_v2",
        "tests": [
            {"size": 1023, "seed": 4242},
            {"size": 1024, "seed": 5236},
            {"size": 1025, "seed": 1001},
            {"size": 2048, "seed": 5531},
            {"size": 4096, "seed": 9173},
        ],
        "benchmarks": [
            {"size": 1638400, "seed": 93246},
            {"size": 3276800, "seed": 6256},
            {"size": 6553600, "seed": 8841},
            {"size": 13107200, "seed": 6252},
            {"size": 26214400, "seed": 82135},
            {"size": 52428800, "seed": 12345},
        ],
        "ranking_by": "last",
    },
}
