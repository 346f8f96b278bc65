"""conv2d_v2 reference: generate the input from a seed, F.conv2d (stride 1, no padding), and the check.

Device-agnostic so the same file serves the leaderboard (CUDA) and our CPU tests (Triton interpreter):
tensors go on `device` when given, else CUDA when available, else CPU. As on the leaderboard, one
generator seeded `seed` draws the input (batch, channels, size, size) then the kernel
(channels, channels, kernelsize, kernelsize), both float32 randn; the output buffer is uninitialised.
The reference runs with TF32 off and deterministic algorithms on (the leaderboard's
DeterministicContext), and the check is rtol 1e-3, atol 1e-3, element by element, with a shape
mismatch failing at once.
"""

import torch
import torch.nn.functional as F
from task import input_t, output_t

RTOL, ATOL = 1e-3, 1e-3


def _device(device=None) -> torch.device:
    if device is not None:
        return torch.device(device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


class _Deterministic:
    """TF32 off and deterministic algorithms on while the reference runs (the leaderboard's context)."""

    def __enter__(self):
        self.saved = (torch.backends.cudnn.allow_tf32, torch.backends.cudnn.deterministic,
                      torch.are_deterministic_algorithms_enabled())
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.deterministic = True
        torch.use_deterministic_algorithms(True)
        return self

    def __exit__(self, *exc):
        torch.backends.cudnn.allow_tf32, torch.backends.cudnn.deterministic, algorithms = self.saved
        torch.use_deterministic_algorithms(algorithms)


def generate_input(size: int, kernelsize: int, channels: int, batch: int, seed: int, device=None) -> input_t:
    """float32 randn input and kernel from one generator, and an uninitialised output buffer."""
    dev = _device(device)
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed)
    x = torch.randn(batch, channels, size, size, device=dev, dtype=torch.float32, generator=gen).contiguous()
    kernel = torch.randn(channels, channels, kernelsize, kernelsize, device=dev, dtype=torch.float32,
                         generator=gen).contiguous()
    out = size - kernelsize + 1
    output = torch.empty(batch, channels, out, out, device=dev, dtype=torch.float32)
    return x, kernel, output


def ref_kernel(data: input_t) -> output_t:
    """F.conv2d with stride 1 and no padding (the output buffer is not used)."""
    with _Deterministic():
        x, kernel, _ = data
        return F.conv2d(x, kernel, stride=1, padding=0)


def check_implementation(data: input_t, output: output_t) -> tuple[bool, str]:
    """Element-wise |got - expected| <= atol + rtol * |expected|; a shape mismatch or a NaN fails."""
    expected = ref_kernel(data)
    if not isinstance(output, torch.Tensor):
        return False, f"output must be a tensor, got {type(output).__name__}"
    if output.shape != expected.shape:
        return False, f"shape mismatch: expected {tuple(expected.shape)}, got {tuple(output.shape)}"
    got = output.detach().to(expected.device, torch.float32)
    bad = ~torch.isclose(got, expected, rtol=RTOL, atol=ATOL)
    count = int(bad.count_nonzero())
    if count == 0:
        return True, ""
    first = tuple(torch.nonzero(bad)[0].tolist())
    return False, (f"{count} mismatched elements (rtol {RTOL}, atol {ATOL}); first at {first}: "
                   f"expected {expected[first].item():.6g}, got {got[first].item():.6g}")
