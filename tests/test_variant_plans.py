"""scripts/hopper_variants.py's tuning plans pick the Hopper tables: a held-out shape among them would let
the held-out bench judge a table on a shape it was chosen on."""

import importlib.util

import pytest
from conftest import PROBLEMS_DIR, ROOT

from harness.loader import load_problem


def variants_script():
    spec = importlib.util.spec_from_file_location("ksuite_hopper_variants", ROOT / "scripts" / "hopper_variants.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("plan", ["TUNING_PLAN", "SPLIT_PLAN", "WIDE_PLAN"])
def test_tuning_plans_hold_tuning_shapes_only(plan):
    script = variants_script()
    workloads = {}
    for problem, shape, _dtypes, variants in getattr(script, plan):
        if problem not in workloads:
            workloads[problem] = load_problem(PROBLEMS_DIR / f"{problem}.py", f"ksuite_plan_{problem}").meta.workload()
        assert workloads[problem].set_of(shape) == "tuning", (problem, shape)
        assert variants[0] == ("table", {})  # each shape's rows start with the committed table


@pytest.mark.parametrize("plan, allowed", [("FILL_PLAN", ("tuning", None)), ("WAVE_PLAN", (None,))])
def test_probe_plans_hold_no_held_out_shape(plan, allowed):
    """Probe plans time shapes the held-out set does not hold (the wave plan: neither set), so the held-out bench
    judges what they pick on shapes it was not picked on."""
    script = variants_script()
    for problem, shape, _dtypes, variants in getattr(script, plan):
        workload = load_problem(PROBLEMS_DIR / f"{problem}.py", f"ksuite_probe_{problem}").meta.workload()
        assert workload.set_of(shape) in allowed, (problem, shape, workload.set_of(shape))
        assert variants[0] == ("table", {})


def test_the_wave_plan_splits_in_one_wave_and_leaves_the_tuning_shape_whole():
    """SPLIT_K 0's rule at the wave plan's shapes: two slices, at most one program per SM; at the bucket's
    tuning shape (72 tiles) no split, so that choosing it there changes nothing the search measured."""
    script = variants_script()
    path = ROOT / "solutions/matmul/triton_tma_persistent.py"
    spec = importlib.util.spec_from_file_location("ksuite_plan_matmul", path)
    matmul = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(matmul)

    def split_rule(M, K, N):
        tunables, table = script.patched(matmul, {"M": M, "K": K, "N": N}, {"SPLIT_K": 0})
        matmul.TUNABLES, matmul.DISPATCH = tunables, table
        return matmul.launch_config(M, N, K, 132)

    for _problem, shape, _dtypes, _variants in script.WAVE_PLAN:
        config = split_rule(shape["M"], shape["K"], shape["N"])
        assert config["SPLIT_K"] == 2 and config["programs"] <= 132, (shape, config)
    assert split_rule(127, 2304, 9216)["SPLIT_K"] == 1


def probe_script(name: str):
    spec = importlib.util.spec_from_file_location(f"ksuite_{name}", ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("script, problem, solution, sizes", [
    ("cutlass_matmul_probe", "matmul", "matmul/cuda_cutlass.py", ("M", "K", "N")),
    ("fused_mlp_probe", "fused_mlp", "fused_mlp/cuda_cutlass.py", ("tokens", "hidden", "intermediate")),
])
def test_cutlass_probe_plans_hold_no_held_out_shape_and_name_real_tunables(script, problem, solution, sizes):
    """The CUTLASS probes' plans (`--plan`) time tuning and probe shapes only, so the held-out bench after them
    judges a route on shapes it was not chosen on; every variant sets tunables the solution has."""
    module = probe_script(script)
    workload = load_problem(PROBLEMS_DIR / f"{problem}.py", f"ksuite_cutlass_plan_{problem}").meta.workload()
    spec = importlib.util.spec_from_file_location(f"ksuite_cutlass_plan_{script}", ROOT / "solutions" / solution)
    cutlass = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cutlass)
    for name, (shapes, variants) in module.PLANS.items():
        for text in shapes.split(";"):
            shape = dict(zip(sizes, (int(x) for x in text.split("x"))))
            assert workload.set_of(shape) in ("tuning", None), (name, shape)
        for variant, overrides in probe_script("fmha_probe").parse_variants(variants):
            assert set(overrides) <= set(cutlass.TUNABLES), (name, variant)
            for key, value in overrides.items():
                assert value in cutlass.TUNABLE_CHOICES[key], (name, variant, key, value)


def test_the_thin_plan_builds_both_dispatch_files_kernels():
    plan = probe_script("cutlass_matmul_probe").PLANS["thin"]
    path = ROOT / "solutions/matmul/cuda_cutlass_dispatch.py"
    spec = importlib.util.spec_from_file_location("ksuite_plan_dispatch", path)
    dispatch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dispatch)
    variants = dict(probe_script("fmha_probe").parse_variants(plan[1]))
    assert {**dispatch._CUTLASS.TUNABLES, **variants["thin"]} == dispatch.TUNABLES
    assert {**dispatch._CUTLASS.TUNABLES, **variants["sw128x16"]} == dispatch.DECODE_TUNABLES
    short_k = dispatch._sibling("cuda_cutlass_short_k")
    assert {**dispatch._CUTLASS.TUNABLES, **variants["short_k"]} == short_k.TUNABLES  # its build, cached for the bench


def test_the_mid_rows_plan_builds_the_stream_k_routes_kernel():
    path = ROOT / "solutions/matmul/cuda_cutlass_dispatch.py"
    spec = importlib.util.spec_from_file_location("ksuite_plan_dispatch_sk", path)
    dispatch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dispatch)
    plan = probe_script("cutlass_matmul_probe").PLANS["mid_rows"]
    variants = dict(probe_script("fmha_probe").parse_variants(plan[1]))
    assert {**dispatch._CUTLASS.TUNABLES, **variants["sk"]} == dispatch.STREAM_K_TUNABLES


def test_the_probes_pivot_shows_each_shapes_winners_failures_and_largest_difference():
    pivot = probe_script("fmha_probe").pivot
    tsv = ("shape\tdtype\timpl\tmedian_us\tx_torch\ttflops\tmax_abs_diff\n"
           "127x2048x6144\tbfloat16\ttorch\t11.7\t1.000\t273\t0.00e+00\n"
           "127x2048x6144\tbfloat16\tcutlass:thin\tfailed: no kernel image\t\t\t\n"
           "127x2048x6144\tbfloat16\tcutlass:c12\t14.5\t0.809\t221\t3.10e-02\n")
    assert pivot(tsv).splitlines() == ["shape\tdtype\ttorch us\tcutlass:thin\tcutlass:c12\tlargest |diff|",
                                       "127x2048x6144\tbfloat16\t11.7\terr\t0.809\t3.10e-02"]
    assert pivot(tsv.splitlines()[0]) == "no row timed"
