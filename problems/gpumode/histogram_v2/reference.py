"""histogram_v2 reference: generate the input from a seed, the bincount reference, and the exact check.

Device-agnostic so the same file serves the leaderboard (CUDA) and our CPU tests (Triton interpreter):
tensors go on `device` when given, else CUDA when available, else CPU. As on the leaderboard, one
generator seeded `seed` draws, in this order, the uint8 data randint(0, 256, (size,)), one "evil"
value randint(0, 256, ()) and rand(size) < contention / 100, which picks the elements set to the evil
value (atomic contention on one bin). The output buffer is torch.empty(256, dtype=int64), never zeroed.
The reference is torch.bincount(data, minlength=256); the check demands exact equality.

Differences from the leaderboard's reference.py: its ref_kernel writes into the output buffer of the
data it is given (under utils.DeterministicContext); here the check counts into a fresh buffer, so it
stays right even when handed the very data the kernel wrote into. The leaderboard's verbose_allequal
compares with torch.not_equal and checks no shape; here a shape mismatch fails at once. Values are
compared as the leaderboard does (torch.not_equal, any dtype whose values are equal passes).
"""

import torch
from task import input_t, output_t

NUM_BINS = 256


def _device(device=None) -> torch.device:
    if device is not None:
        return torch.device(device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def generate_input(size: int, contention: float, seed: int, device=None) -> input_t:
    """uint8 data with `contention` percent set to one value, and an uninitialised int64 (256,) buffer."""
    dev = _device(device)
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed)
    data = torch.randint(0, NUM_BINS, (size,), device=dev, dtype=torch.uint8, generator=gen)
    evil_value = torch.randint(0, NUM_BINS, (), device=dev, dtype=torch.uint8, generator=gen)
    evil_loc = torch.rand((size,), device=dev, dtype=torch.float32, generator=gen) < (contention / 100.0)
    data[evil_loc] = evil_value
    output = torch.empty(NUM_BINS, device=dev, dtype=torch.int64).contiguous()
    return data.contiguous(), output


def ref_kernel(data: input_t) -> output_t:
    """torch.bincount(data, minlength=256), written into the output buffer, as on the leaderboard."""
    values, output = data
    output[...] = torch.bincount(values, minlength=NUM_BINS)
    return output


def check_implementation(data: input_t, output: output_t) -> tuple[bool, str]:
    """Exact equality with the reference counts; a shape mismatch fails at once."""
    values, buffer = data
    expected = ref_kernel((values, torch.empty_like(buffer)))
    if not isinstance(output, torch.Tensor):
        return False, f"output must be a tensor, got {type(output).__name__}"
    if output.shape != expected.shape:
        return False, f"shape mismatch: expected {tuple(expected.shape)}, got {tuple(output.shape)}"
    bad = torch.not_equal(output.detach().to(expected.device), expected)
    if not bad.any():
        return True, ""
    first = int(bad.nonzero()[0].item())
    return False, (f"mismatch in {bad.sum().item()} of {NUM_BINS} bins, first bin {first}: expected "
                   f"{expected[first].item()}, got {output[first].item()}")
