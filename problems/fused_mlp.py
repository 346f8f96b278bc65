"""Llama-style gated MLP: down(silu(gate(x)) * up(x)).

Three bias-free linear layers with torch's default init (so activations stay around 1):
gate and up map hidden -> intermediate, down maps intermediate -> hidden. x is [tokens, hidden].
"""

import torch
import torch.nn.functional as F

tokens = 1024
hidden = 2048
intermediate = 5632


class Model(torch.nn.Module):
    def __init__(self, hidden, intermediate):
        super().__init__()
        self.gate_proj = torch.nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = torch.nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = torch.nn.Linear(intermediate, hidden, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


def get_inputs():
    return [torch.randn(tokens, hidden)]


def get_init_inputs():
    return [hidden, intermediate]


META = {
    "bound": "compute",
    # tokens are independent: the float64 reference runs a few hundred tokens at a time where the whole
    # call would pass the memory bound (its weights stay whole, in their dtype: harness/float64_model.py)
    "reference_split_dim": 0,
    "dtypes": ["bfloat16", "float16"],
    # `ksuite goals` at named shapes (512 and 4096 tokens): 1.1x the best baseline at each, no geometric-mean bar
    "goals": {"floor": 1.1, "geomean": 0.0},
    "small_shapes": [{"tokens": 32, "hidden": 64, "intermediate": 128}],
    "shapes": [{"tokens": 1024, "hidden": 2048, "intermediate": 5632}],
    # Workload (harness/workloads.py): one gated MLP of the model over `tokens` tokens.
    "workload": lambda model, tokens: {"tokens": tokens, "hidden": model["hidden"],
                                       "intermediate": model["intermediate"]},
    "large_shapes": [{"tokens": 4096, "hidden": 4096, "intermediate": 14336}],
    "edge_shapes": [
        {"tokens": 1, "hidden": 7, "intermediate": 13},
        {"tokens": 17, "hidden": 100, "intermediate": 257},
        {"tokens": 33, "hidden": 65, "intermediate": 129},
    ],
    # Tolerances: about 3x the error of the eager Model in each dtype against the float64 reference,
    # measured on the CPU and on an H200 at every shape (worst case: float16 |err| <= 2.3e-4 + 1e-3 |ref|,
    # bfloat16 <= 1.8e-3 + 8e-3 |ref|, float32 <= 1.5e-6 + 1e-5 |ref|). Outputs are ~0.1-1, so the atol
    # term dominates; float16 accumulation over intermediate=14336, or tf32 for float32, fails them.
    "tolerances": {"float16": (1e-3, 3e-3), "bfloat16": (8e-3, 2e-2), "float32": (5e-6, 3e-5)},
    # read x and the three weight matrices once, write out once
    "bytes": lambda s, esize: (
        2 * s["tokens"] * s["hidden"] + 3 * s["hidden"] * s["intermediate"]
    ) * esize,
    # three matmuls of tokens x hidden x intermediate, 2 flops per multiply-add
    "flops": lambda s, esize: 2 * s["tokens"] * s["hidden"] * s["intermediate"] * 3,
    # "large" and "mixed" overflow float16 in silu(gate) * up (x100 gives products up to ~1e5);
    # "constant_rows" gives outputs several times larger, past the fixed atol for the eager Model.
    "stability": ["tiny"],
    "strided_inputs": True,
    "deterministic": True,
}
