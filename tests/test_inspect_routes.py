"""`ksuite inspect`'s routes: for the CUDA solutions that send shapes to their kernels by a rule (a module-level
route()), which kernel each shape runs on the GPU inspected for, without a GPU or a build."""

import pytest
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


def test_a_routed_cuda_file_is_read_as_each_shape_runs_it(monkeypatch):
    """Each shape's row is the kernel it runs: the CUTLASS build its route names (compiled from that build's
    source, not the file's TUNABLES) or the Triton family's launch at that shape."""
    from harness.machine_code.kernel_inspect import Target
    from suite import inspect_cli

    compiled, triton_calls = [], []

    def fake_build_rows(label, path, shapes_text, source, target, dtype, sass_dir, problems):
        compiled.append((label, shapes_text, source))
        return [[label, shapes_text]]

    def fake_triton_rows(label, problem_path, solution_path, baseline, shapes, *rest):
        triton_calls.append((label, solution_path.name, shapes))
        return [[label, shapes]]

    monkeypatch.setattr(inspect_cli, "_cuda_build_rows", fake_build_rows)
    monkeypatch.setattr(inspect_cli, "_triton_rows", fake_triton_rows)
    sol = solutions("matmul", "cuda_cutlass_dispatch")[0]
    dispatch = inspect_cli._routing_module(sol.path)
    decode, thin = {"M": 7, "K": 1600, "N": 6400}, {"M": 127, "K": 3072, "N": 8192}
    two_waves = {"M": 127, "K": 2304, "N": 9216}  # 144 swapped tiles on 132 SMs: the Triton family's
    problems = []
    rows = inspect_cli._cuda_rows(sol, SOLUTIONS_DIR.parent / "problems" / "matmul.py", [decode, thin, two_waves],
                                  Target(90, 132, 3.0e12), "bfloat16", None, problems)
    assert problems == [] and len(rows) == 3
    assert compiled == [("cuda_cutlass_dispatch [decode]", "7x1600x6400", dispatch.route_source("decode", None)),
                        ("cuda_cutlass_dispatch [thin]", "127x3072x8192", dispatch.route_source("thin", None))]
    assert "TILE_N = 16;" in compiled[0][2] and "TILE_N = 64;" in compiled[1][2]  # each route's own tile
    assert triton_calls == [("cuda_cutlass_dispatch > triton_tma_persistent", "triton_tma_persistent.py", [two_waves])]


def test_route_kernel_and_route_agree_for_every_routed_file():
    """route() (the text inspect prints) and route_kernel() (what it compiles) name the same kernel."""
    cases = [("matmul", "cuda_cutlass_dispatch", [{"M": m, "K": k, "N": n} for m in (1, 7, 16, 64, 127, 2048, 6144)
                                                  for k in (768, 1600, 4096) for n in (3072, 6400, 9216)]),
             ("matmul", "cuda_cutlass_short_k", [{"M": m, "K": k, "N": 4096} for m in (7, 2048, 8192)
                                                 for k in (768, 1024, 1600)]),
             ("attention_causal", "cuda_cutlass_fmha", [{"batch_size": 1, "num_heads": 8, "seq_len": s, "head_dim": d}
                                                        for s in (512, 2048, 8192) for d in (64, 96, 128, 256)])]
    from suite import inspect_cli

    for problem, name, shapes in cases:
        module = inspect_cli._routing_module(solutions(problem, name)[0].path)
        for dtype in (torch.float16, torch.bfloat16, torch.float32):
            for shape in shapes:
                kernel, text = module.route_kernel(shape, dtype, 132), module.route(shape, dtype, 132)
                assert (kernel is None) == ("triton" in text), (name, shape, dtype, kernel, text)
                if kernel is not None:
                    assert module.route_source(kernel, dtype).endswith(module.CUDA_SOURCE)


def test_the_decode_route_follows_the_gpu_named():
    """matmul's decode route is the H200's rule: the H100's own probe put the Triton kernel ahead there, so inspect
    with --gpu nvidia-h100-80gb-hbm3 must show (and compile) the Triton kernel at a decode shape."""
    from suite import inspect_cli

    module = inspect_cli._routing_module(solutions("matmul", "cuda_cutlass_dispatch")[0].path)
    decode = {"M": 7, "K": 1600, "N": 6400}
    assert module.route_kernel(decode, torch.bfloat16, 132, "nvidia-h200") == "decode"
    assert module.route_kernel(decode, torch.bfloat16, 132, "nvidia-h100-80gb-hbm3") is None
    assert "triton" in module.route(decode, torch.bfloat16, 132, "nvidia-h100-80gb-hbm3")
    thin = {"M": 127, "K": 3072, "N": 8192}  # the thin route stays on both
    assert {module.route_kernel(thin, torch.bfloat16, 132, gpu) for gpu in ("nvidia-h200", "nvidia-h100-80gb-hbm3")} \
        == {"thin"}


def test_a_rule_that_raises_is_one_line_and_compiles_nothing(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from harness.machine_code.kernel_inspect import Target
    from suite import inspect_cli

    path = tmp_path / "cuda_broken.py"
    path.write_text("def route_kernel(shape, dtype, sms, gpu=None):\n    return shape['M'] // 0\n\n\n"
                    "def route(shape, dtype, sms, gpu=None):\n    return 'CUTLASS'\n")
    monkeypatch.setattr(inspect_cli, "_cuda_build_rows", lambda *a: pytest.fail("compiled despite the error"))
    problems = []
    rows = inspect_cli._cuda_rows(SimpleNamespace(name="cuda_broken", path=path), path, [{"M": 7, "K": 8, "N": 8}],
                                  Target(90, 132, 3.0e12), "float16", None, problems)
    assert rows == [] and problems == ["cuda_broken: routes: ZeroDivisionError: integer division or modulo by zero"]
