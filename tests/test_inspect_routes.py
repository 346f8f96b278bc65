"""`ksuite inspect`'s routes: for the CUDA solutions that send shapes to their kernels by a rule (a module-level
route()), which kernel each shape runs on the GPU inspected for, without a GPU or a build."""

import torch
from conftest import SOLUTIONS_DIR

from harness.loader import import_file
from suite.inspect_cli import route_lines
from suite.registry import Registry


def solutions(problem: str, *names: str):
    registry = Registry()
    ref = registry.problem(problem)
    return [registry.solution(ref, name) for name in names]


def test_matmul_routes_name_each_shapes_kernel():
    problems = []
    lines = route_lines(solutions("matmul", "cuda_cutlass_dispatch", "triton_tma_persistent"),
                        [{"M": 127, "K": 3072, "N": 8192}, {"M": 6144, "K": 768, "N": 3072},
                         {"M": 127, "K": 2304, "N": 9216}, {"M": 7, "K": 1600, "N": 6400}], "bfloat16", 132, problems)
    assert problems == [] and lines[0] == "\ncuda_cutlass_dispatch: routes (bfloat16, 132 SMs)"
    assert "swapped 128 x 64" in lines[1] and "128 CTAs" in lines[1]  # the thin route
    assert "ping-pong" in lines[2]  # short K at many rows
    assert "triton_tma_persistent" in lines[3]  # 144 swapped CTAs: two waves on 132 SMs
    assert "swapped 128 x 16" in lines[4] and "(decode)" in lines[4]  # up to 16 rows, 10.2 M weights
    assert len(lines) == 5  # the Triton family has no route(): its buckets are dispatch_lines' job


def test_a_smaller_gpu_changes_the_route():
    lines = route_lines(solutions("matmul", "cuda_cutlass_dispatch"), [{"M": 127, "K": 3072, "N": 8192}],
                        "float16", 114, [])
    assert "triton_tma_persistent" in lines[1]  # 128 CTAs are two waves on 114 SMs


def test_attention_routes_follow_the_head_dims_and_the_shortest_sequence():
    lines = route_lines(solutions("attention_causal", "cuda_cutlass_fmha"),
                               [{"batch_size": 2, "num_heads": 32, "seq_len": 4096, "head_dim": 128},
                                {"batch_size": 1, "num_heads": 32, "seq_len": 512, "head_dim": 128}],
                               "float16", 132, [])
    assert "CUTLASS FMHA" in lines[1] and "tile 128" in lines[1]
    assert "triton_flash_tma" in lines[2]  # below MIN_SEQ


def test_route_takes_the_dtype_it_is_given():
    short_k = import_file(SOLUTIONS_DIR / "matmul" / "cuda_cutlass_short_k.py", "ksuite_test_route_short_k")
    shape = {"M": 6144, "K": 768, "N": 3072}
    assert "ping-pong" in short_k.route(shape, torch.float16, 132)
    assert "triton" in short_k.route(shape, torch.float32, 132)  # CUTLASS's kernels take fp16 and bf16 only


def test_dispatch_lines_show_the_table_the_inspected_gpu_runs(tmp_path):
    from types import SimpleNamespace

    from suite.inspect_cli import dispatch_lines
    from suite.optimize import dispatch

    source = (SOLUTIONS_DIR / "rmsnorm" / "triton_family.py").read_text()
    own = {"dim<=4096,batch_size<=64": {"num_warps": 2}}
    path = tmp_path / "triton_family.py"
    path.write_text(dispatch.write_table(source, own, "# a table of its own\n", gpu="nvidia-h100-80gb-hbm3"))
    sols, shape = [SimpleNamespace(name="triton_family", path=path)], [{"dim": 4096, "batch_size": 7}]
    h100 = dispatch_lines(sols, shape, "nvidia-h100-80gb-hbm3")
    assert "'num_warps': 2" in h100[1] and "from DISPATCH_BY_GPU['nvidia-h100-80gb-hbm3']" in h100[1]
    h200 = dispatch_lines(sols, shape, "nvidia-h200")
    assert "'num_warps': 2" not in h200[1] and h200[1].endswith("from DISPATCH")
