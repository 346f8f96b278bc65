"""scripts/autotune_draws.py: a run's held-out verdict again against max-autotune's fastest recorded pick, at the
large calls only (a small call's fastest median is the timer's luck), and only from runs with the same torch."""

import json

from conftest import load_script


def load():
    return load_script("autotune_draws")


def rec(solution, rows, us, kind="baseline", torch="2.11", **extra):
    return {"problem": "p", "solution": solution, "kind": kind, "shape": {"rows": rows, "cols": 8192},
            "dtype": "bfloat16", "correct": True, "median_us": us, "shape_set": "heldout", "flush": "clean",
            "env": {"torch": torch}, **extra}


def test_the_fastest_pick_replaces_a_slow_draw_at_large_calls_only(results_root, capsys):
    folder = results_root / "gpu-z"
    folder.mkdir(parents=True)
    runs = {
        "20261201-000000": [rec("compile-max-autotune", 32768, 261.3), rec("compile-max-autotune", 7, 3.0),
                            rec("compile-max-autotune", 4096, 200.0, torch="2.9")],  # another torch: not a pick
        "20261202-000000": [rec("compile-max-autotune", 32768, 318.6), rec("compile", 32768, 317.6),
                            rec("triton_family", 32768, 256.0, kind="solution"),
                            rec("compile-max-autotune", 7, 4.4), rec("triton_family", 7, 4.2, kind="solution"),
                            rec("compile-max-autotune", 4096, 40.0), rec("triton_family", 4096, 39.0, kind="solution")],
    }
    for run, records in runs.items():
        (folder / f"{run}.jsonl").write_text("".join(json.dumps({**r, "run_id": run}) + "\n" for r in records))
    module = load()
    assert module.main(["gpu-z", "20261202-000000"]) == 0
    printed = capsys.readouterr().out
    # as run: 317.6 / 256, 4.4 / 4.2, 40 / 39 all won; strict: 261.3 / 256 still won, the 3.0 us pick is not used
    assert "as run 3 of 3" in printed and "against max-autotune's fastest pick 3 of 3" in printed
    assert "32768x8192: 1.241 -> 1.021" in printed
    assert "7x8192" not in printed and "4096x8192" not in printed
    assert module.main(["gpu-z", "20261209-000000"]) == 2
