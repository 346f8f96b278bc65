"""scripts/process_spread.py: how far one file's small-call median moves between runs, the evidence behind
`ksuite confirm`'s window; a paired record, a slow call and another file's records are not part of it."""

import json

from conftest import load_script


def load():
    return load_script("process_spread")


def rec(us, source="abc", **extra):
    return {"problem": "p", "solution": "fam", "kind": "solution", "shape": {"rows": 7}, "dtype": "float16",
            "correct": True, "median_us": us, "source_hash": source, "flush": "clean", **extra}


def test_pairs_of_runs_of_one_file_give_the_ratios(results_root, capsys):
    folder = results_root / "gpu-x"
    folder.mkdir(parents=True)
    runs = {"20261201-000000": [rec(4.0), rec(40.0, solution="big")],
            "20261202-000000": [rec(5.2), rec(9.0, solution="paired", paired={"run": "x"})],
            "20261203-000000": [rec(4.2), rec(9.0, solution="paired"), rec(30.0, solution="big")],  # 30 us: too slow
            "20261204-000000": [rec(8.0, source="changed")],  # the file changed: another file
            # a run confirm wrote: the first run's record as it was (same timing, same stamp) is not a second draw
            "20261205-000000": [rec(4.0, timestamp="t1")]}
    runs["20261201-000000"][0]["timestamp"] = "t1"
    for run, records in runs.items():
        (folder / f"{run}.jsonl").write_text("".join(json.dumps({**r, "run_id": run}) + "\n" for r in records))
    module = load()
    assert module.pair_ratios(module.medians_by_key("gpu-x", 20.0)) == sorted([5.2 / 4.0, 4.2 / 4.0, 5.2 / 4.2])
    assert module.main(["gpu-x"]) == 0
    printed = capsys.readouterr().out
    assert "gpu-x, every implementation at one shape under 20 us: 3 pairs;" in printed
    assert "over 1.05: 67%, over 1.10: 67%, over 1.25: 33%" in printed  # 4.2 / 4.0 is not over 1.05
    assert module.main(["gpu-x", "--max-us", "1"]) == 1


def test_calls_above_a_floor_per_problem(results_root, capsys):
    """--min-us keeps only the large calls (the compute-bound window's evidence), --by problem groups them."""
    folder = results_root / "gpu-y"
    folder.mkdir(parents=True)
    runs = {f"2026120{i}-000000": [rec(4.0 + i), rec(100.0 * (1 + i / 100), problem="mm"),
                                   rec(200.0, problem="mm", solution="eager", source=None)] for i in range(1, 4)}
    for run, records in runs.items():
        (folder / f"{run}.jsonl").write_text("".join(json.dumps({**r, "run_id": run}) + "\n" for r in records))
    module = load()
    seen = module.medians_by_key("gpu-y", 1e9, 20.0)
    assert {key[0] for key in seen} == {"mm"}  # the 5-7 us calls are under the floor
    assert module.main(["gpu-y", "--min-us", "20", "--max-us", "1e9", "--by", "problem"]) == 0
    printed = capsys.readouterr().out
    assert "under 1e+09 us and from 20 us: 6 pairs;" in printed
