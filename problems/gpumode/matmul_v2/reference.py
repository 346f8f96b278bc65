"""matmul_v2 reference: generate the input from a seed, torch's float16 a @ b, and the check.

Device-agnostic so the same file serves the leaderboard (CUDA) and our CPU tests (Triton interpreter):
tensors go on `device` when given, else CUDA when available, else CPU. As on the leaderboard, one
generator seeded `seed` draws a (m, k) then b (k, n), both float16 uniform in [0, 1); c is an
uninitialised (m, n) float16 buffer. The reference runs with TF32 off and deterministic algorithms on
(the leaderboard's DeterministicContext), and the check is the leaderboard's default tolerance
(rtol 1e-5, atol 1e-8), element by element, with a shape mismatch failing at once.
"""

import torch
from task import input_t, output_t

RTOL, ATOL = 1e-5, 1e-8


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


def generate_input(m: int, n: int, k: int, seed: int, device=None) -> input_t:
    """a (m, k) and b (k, n) float16 uniform [0, 1) from one generator, and an uninitialised c (m, n)."""
    dev = _device(device)
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed)
    a = torch.empty(m, k, device=dev, dtype=torch.float16)
    a.uniform_(0, 1, generator=gen)
    b = torch.empty(k, n, device=dev, dtype=torch.float16)
    b.uniform_(0, 1, generator=gen)
    c = torch.empty(m, n, device=dev, dtype=torch.float16)
    return a, b, c


def ref_kernel(data: input_t) -> output_t:
    """torch's a @ b in float16 (c, the output buffer, is not used)."""
    with _Deterministic():
        a, b, _ = data
        return a @ b


def check_implementation(data: input_t, output: output_t) -> tuple[bool, str]:
    """Element-wise |got - expected| <= atol + rtol * |expected|; a shape mismatch or a NaN fails."""
    expected = ref_kernel(data)
    if not isinstance(output, torch.Tensor):
        return False, f"output must be a tensor, got {type(output).__name__}"
    if output.shape != expected.shape:
        return False, f"shape mismatch: expected {tuple(expected.shape)}, got {tuple(output.shape)}"
    got = output.detach().to(expected.device)
    bad = ~torch.isclose(got.float(), expected.float(), rtol=RTOL, atol=ATOL)
    count = int(bad.count_nonzero())
    if count == 0:
        return True, ""
    first = tuple(torch.nonzero(bad)[0].tolist())
    return False, (f"{count} mismatched elements (rtol {RTOL}, atol {ATOL}); first at {first}: "
                   f"expected {expected[first].item():.6g}, got {got[first].item():.6g}")
