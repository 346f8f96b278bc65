"""vectorsum_v2 reference: generate the input from a seed, the float64 reference sum, and the check.

Device-agnostic so the same file serves the leaderboard (CUDA) and our CPU tests (Triton interpreter):
tensors go on `device` when given, else CUDA when available, else CPU. As on the leaderboard, three
generators seeded seed, seed + 1 and seed + 2 draw the data, the offset and the scale; the scale and
offset keep the sum far from zero so that a kernel cannot lean on a zero mean.
"""

import torch
from task import input_t, output_t

RTOL, ATOL = 1e-5, 1e-8


def _device(device=None) -> torch.device:
    if device is not None:
        return torch.device(device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _generator(device: torch.device, seed: int) -> torch.Generator:
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    return gen


def generate_input(size: int, seed: int, device=None) -> input_t:
    """float32 randn(size) * scale + offset, and an uninitialised (1,) output buffer (never zeroed)."""
    dev = _device(device)
    data = torch.randn(size, device=dev, dtype=torch.float32, generator=_generator(dev, seed))
    offset = torch.rand(1, device=dev, generator=_generator(dev, seed + 1)) * 200 - 100
    scale = torch.rand(1, device=dev, generator=_generator(dev, seed + 2)) * 9.9 + 0.1
    data = (data * scale + offset).contiguous()
    return data, torch.empty(1, device=dev, dtype=torch.float32)


def ref_kernel(data: input_t) -> output_t:
    """The sum in float64 (no float32 rounding drift), returned as a float32 0-dim tensor."""
    x, _ = data
    return x.to(torch.float64).sum().to(torch.float32)


def check_implementation(data: input_t, output: output_t) -> tuple[bool, str]:
    """allclose against the reference; a shape mismatch fails at once, NaN never passes."""
    expected = ref_kernel(data)
    if not isinstance(output, torch.Tensor):
        return False, f"output must be a tensor, got {type(output).__name__}"
    if output.shape != expected.shape:
        return False, f"shape mismatch: expected {tuple(expected.shape)}, got {tuple(output.shape)}"
    got = output.detach().to(expected.device, torch.float32)
    if torch.allclose(got, expected, rtol=RTOL, atol=ATOL):
        return True, ""
    return False, f"mismatch: expected {expected.item():.9g}, got {got.item():.9g} (rtol {RTOL}, atol {ATOL})"
