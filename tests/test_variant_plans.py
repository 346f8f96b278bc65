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
