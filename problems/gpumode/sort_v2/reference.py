"""sort_v2 reference: generate the input from a seed, torch.sort's ascending values, and the check.

Device-agnostic so the same file serves the leaderboard (CUDA) and our CPU tests (Triton interpreter):
tensors go on `device` when given, else CUDA when available, else CPU. As on the leaderboard, the data
is a roughly square matrix (rows = int(sqrt(size)), cols = ceil(size / rows)) whose row i is
randn(cols) + (seed + i) from a generator re-seeded with seed + i, flattened and cut to `size`; the
output buffer is uninitialised. The check is the leaderboard's default tolerance (rtol 1e-5,
atol 1e-8), element by element, with a shape mismatch failing at once.
"""

import torch
from task import input_t, output_t

RTOL, ATOL = 1e-5, 1e-8


def _device(device=None) -> torch.device:
    if device is not None:
        return torch.device(device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def generate_input(size: int, seed: int, device=None) -> input_t:
    """float32 rows randn + (seed + i), flattened to (size,), and an uninitialised output buffer."""
    dev = _device(device)
    rows = int(size**0.5)
    cols = (size + rows - 1) // rows
    gen = torch.Generator(device=dev)
    result = torch.empty((rows, cols), device=dev, dtype=torch.float32)
    for i in range(rows):
        row_seed = seed + i
        gen.manual_seed(row_seed)
        result[i, :] = torch.randn(cols, device=dev, dtype=torch.float32, generator=gen) + row_seed
    data = result.flatten()[:size].contiguous()
    return data, torch.empty_like(data)


def ref_kernel(data: input_t) -> output_t:
    """torch.sort's ascending values, written into the output buffer as on the leaderboard."""
    values, output = data
    output[...] = torch.sort(values)[0]
    return output


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
    first = int(torch.nonzero(bad)[0])
    return False, (f"{count} mismatched elements (rtol {RTOL}, atol {ATOL}); first at {first}: "
                   f"expected {expected[first].item():.9g}, got {got[first].item():.9g}")
