"""scripts/bench_vs_paired.py: each paired record of a confirm run beside the bench record it re-timed, the evidence
of which implementations the bench times slower than confirm does; cached and unmatched records are left out."""

import json

import pytest
from conftest import load_script


def rec(solution, us, fastest=None, kind="baseline", shape=7, **extra):
    return {"problem": "p", "solution": solution, "kind": kind, "shape": {"rows": shape}, "dtype": "float16",
            "correct": True, "median_us": us, "min_us": fastest, **extra}


def write(folder, run, records):
    (folder / f"{run}.jsonl").write_text("".join(json.dumps({**r, "run_id": run}) + "\n" for r in records))


def test_ratios_per_implementation_and_length(results_root, capsys):
    folder = results_root / "gpu-x"
    folder.mkdir(parents=True)
    write(folder, "20261201-000000", [rec("fused", 11.0, 10.0), rec("fam", 5.0, 4.0, kind="solution"),
                                      rec("eager", 230.0, 220.0, shape=4096),
                                      rec("liger", 9.0, 8.0, cached_from={"run_id": "older"})])
    paired = {"run": "20261201-000000", "with": ["fam"]}
    write(folder, "20261202-000000", [rec("fused", 10.0, 8.0, paired=paired),
                                      rec("fam", 5.0, 4.0, kind="solution", paired=paired),
                                      rec("eager", 200.0, 200.0, shape=4096, paired=paired),
                                      rec("liger", 8.0, 8.0, paired=paired),  # its bench record came from the cache
                                      rec("compile", 6.0, 5.0, paired=paired)])  # no bench record of it
    module = load_script("bench_vs_paired")
    rows = {(r["implementation"], r["length"]): r for r in module.ratio_pairs("gpu-x")}
    assert set(rows) == {("fused", "short"), ("ours", "short"), ("eager", "long")}
    assert rows["fused", "short"]["median_ratio"] == pytest.approx(1.1)
    assert rows["fused", "short"]["fastest_ratio"] == pytest.approx(1.25)
    assert rows["eager", "long"]["median_ratio"] == pytest.approx(1.15)
    assert module.main(["gpu-x", "--min-pairs", "1"]) == 0
    printed = capsys.readouterr().out
    assert "gpu-x, every implementation: 3 pairs;" in printed
    assert "  eager long: 1 pairs; bench / paired, median 1.150, fastest call 1.100; over 1.05: 100%" in printed
    assert "  ours short: 1 pairs; bench / paired, median 1.000, fastest call 1.000; over 1.05: 0%" in printed


def test_no_paired_records_is_said(results_root, capsys):
    (results_root / "gpu-y").mkdir(parents=True)
    write(results_root / "gpu-y", "20261201-000000", [rec("fused", 11.0, 10.0)])
    assert load_script("bench_vs_paired").main(["gpu-y"]) == 1
    assert "no paired record with its bench record" in capsys.readouterr().out
