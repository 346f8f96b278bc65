"""grayscale_v2 reference: generate the input from a seed, the grayscale reference, and the check.

Device-agnostic so the same file serves the leaderboard (CUDA) and our CPU tests (Triton interpreter):
tensors go on `device` when given, else CUDA when available, else CPU. As on the leaderboard, one
generator seeded `seed` draws a float32 torch.rand(size, size, 3) image; the output buffer is
torch.empty(size, size) (never zeroed). The reference is sum(image * [0.2989, 0.5870, 0.1140], dim=-1)
in float32, checked with rtol 1e-4, atol 1e-4.

Differences from the leaderboard's reference.py: the leaderboard's ref_kernel writes into the output
buffer of the data it is given (under utils.DeterministicContext); here the check computes the expected
image into a fresh buffer, so it stays right even when handed the very data the kernel wrote into, and
it fails at once on a shape mismatch or a NaN (the leaderboard's verbose_allclose does too).
"""

import torch
from task import input_t, output_t

RTOL, ATOL = 1e-4, 1e-4
WEIGHTS = (0.2989, 0.5870, 0.1140)


def _device(device=None) -> torch.device:
    if device is not None:
        return torch.device(device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _generator(device: torch.device, seed: int) -> torch.Generator:
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    return gen


def generate_input(size: int, seed: int, device=None) -> input_t:
    """A float32 rand(size, size, 3) RGB image in [0, 1) and an uninitialised (size, size) output buffer."""
    dev = _device(device)
    image = torch.rand(size, size, 3, device=dev, dtype=torch.float32, generator=_generator(dev, seed))
    return image.contiguous(), torch.empty(size, size, device=dev, dtype=torch.float32).contiguous()


def ref_kernel(data: input_t) -> output_t:
    """Y = 0.2989 R + 0.5870 G + 0.1140 B, written into the output buffer, as on the leaderboard."""
    image, output = data
    weights = torch.tensor(WEIGHTS, device=image.device, dtype=image.dtype)
    output[...] = torch.sum(image * weights, dim=-1)
    return output


def check_implementation(data: input_t, output: output_t) -> tuple[bool, str]:
    """allclose (rtol 1e-4, atol 1e-4) against the reference; shape mismatch and NaN fail."""
    image, buffer = data
    expected = ref_kernel((image, torch.empty_like(buffer)))
    if not isinstance(output, torch.Tensor):
        return False, f"output must be a tensor, got {type(output).__name__}"
    if output.shape != expected.shape:
        return False, f"shape mismatch: expected {tuple(expected.shape)}, got {tuple(output.shape)}"
    got = output.detach().to(expected.device, torch.float32)
    bad = ~torch.isclose(got, expected, rtol=RTOL, atol=ATOL)
    if not bad.any():
        return True, ""
    first = tuple(bad.nonzero()[0].tolist())
    return False, (f"mismatch at {bad.sum().item()} of {bad.numel()} pixels, first {first}: expected "
                   f"{expected[first].item():.7g}, got {got[first].item():.7g} (rtol {RTOL}, atol {ATOL})")
