"""scripts/min_vs_median.py on hand-written run files: which held-out rows it reads, and that it judges the fast end
by the 10th percentile where every record has one and by the minimum otherwise."""

import json

from conftest import load_script


def script():
    return load_script("min_vs_median")


def record(kind, solution, median, low, p10=None, shape_set="heldout", runs=500):
    return {"problem": "rmsnorm", "shape": {"batch_size": 7, "dim": 3584}, "dtype": "float16", "kind": kind,
            "solution": solution, "shape_set": shape_set, "median_us": median, "min_us": low, "p10_us": p10,
            "runs": runs}


def write(tmp_path, records):
    path = tmp_path / "20261206-000000.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_the_fast_end_is_the_10th_percentile_where_every_record_has_one(tmp_path):
    path = write(tmp_path, [record("solution", "triton_family", 4.9, 3.5, p10=3.7),
                            record("baseline", "compile", 4.2, 3.6, p10=3.9),
                            record("baseline", "eager", 3.0, 2.0, p10=2.5)])  # eager never counts
    (row,) = script().rows_of(path, "triton_family", 8.0)
    assert row[4:8] == (4.9, 4.2, 3.7, 3.9) and row[10] == "p10"


def test_without_percentiles_the_minimum_and_tuning_rows_are_left_out(tmp_path):
    path = write(tmp_path, [record("solution", "triton_family", 4.9, 3.5, p10=3.7),
                            record("baseline", "compile", 4.2, 3.6),  # an older record: no p10
                            record("solution", "triton_family", 4.9, 3.5, shape_set="tuning")])
    (row,) = script().rows_of(path, "triton_family", 8.0)
    assert row[6:8] == (3.5, 3.6) and row[10] == "min"
    assert script().rows_of(path, "triton_family", 4.0) == []  # the best baseline's median is over --max-us
