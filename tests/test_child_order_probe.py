"""scripts/child_order_probe.py (a GPU probe): which children each condition runs, and the table it prints."""

import pytest
from conftest import load_script


def test_each_condition_runs_the_bench_jobs_in_its_order():
    module = load_script("child_order_probe")
    base = ("eager", "fused", "liger")
    assert module.jobs("bench", base, "fam") == [base, ("fam",)]
    assert module.jobs("reversed", base, "fam") == [("fam",), ("liger", "fused", "eager")]
    assert module.jobs("alone", base, "fam") == [("fam",), ("eager",), ("fused",), ("liger",)]
    assert module.jobs("no-spares", base, "fam") == [base, ("fam",)]
    assert module.jobs("paired", base, "fam") == [(*base, "fam")]
    assert module.CONDITIONS[-2:] == ("no-spares", "paired")  # they stop the bench's spares: last
    with pytest.raises(ValueError):
        module.jobs("sideways", base, "fam")


def test_table_gives_each_condition_over_paired():
    module = load_script("child_order_probe")
    rows = [dict(condition=c, problem="rmsnorm", shape="7x3584", impl="fused", median_us=us)
            for c, us in (("bench", 11.0), ("paired", 10.0), ("alone", 9.5))]
    (row,) = module.pivot(rows)
    cells = dict(zip(module.CONDITIONS, row[3:]))
    assert row[:3] == ["rmsnorm", "7x3584", "fused"]
    assert cells == {"bench": "1.100", "reversed": "-", "alone": "0.950", "busy-host": "-", "bench-again": "-",
                     "no-spares": "-", "paired": "10.00 us"}
