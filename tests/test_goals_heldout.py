"""Workload goals on a held-out run: the recommended solution alone, won share and geometric mean."""

from suite import goals


def rec(solution, kind, shape, us, dtype="float16", shape_set="heldout", problem="rmsnorm"):
    return {"problem": problem, "solution": solution, "kind": kind, "shape": shape, "dtype": dtype,
            "correct": True, "median_us": us, "pct_sol": 50.0, "shape_set": shape_set}


def run(speedups, solution="triton_family"):
    records = []
    for i, s in enumerate(speedups):
        shape = {"batch_size": 1 + i, "dim": 4096}
        records += [rec("compile", "baseline", shape, 10.0), rec("liger", "baseline", shape, 12.0),
                    rec(solution, "solution", shape, 10.0 / s)]
    return records


def test_met_when_won_everywhere_with_a_geomean_above_the_bar():
    (row,) = goals.evaluate(run([1.2] * 20))
    assert row.heldout and row.won == 20 and row.verdict == "met"
    assert not goals.unmet_pairs([row])


def test_one_loss_in_twenty_is_allowed_two_are_not():
    (ok,) = goals.evaluate(run([1.3] * 19 + [0.9]))
    assert ok.verdict == "met", ok.verdict
    (bad,) = goals.evaluate(run([1.3] * 18 + [0.9, 0.9]))
    assert "18 of 20" in bad.verdict


def test_a_geomean_under_the_bar_misses():
    (row,) = goals.evaluate(run([1.05] * 20))
    assert "geomean 1.050x" in row.verdict and goals.unmet_pairs([row]) == [("rmsnorm", "float16")]


def test_only_the_recommended_solution_can_meet_the_goal():
    (row,) = goals.evaluate(run([2.0] * 20, solution="triton_rowwise"))
    assert row.not_recommended == "triton_family" and "for comparison" in row.verdict
    assert goals.unmet_pairs([row]) == [("rmsnorm", "float16")]


def run_matmul(speedups, problem="matmul"):
    records = []
    for i, s in enumerate(speedups):
        shape = {"M": 127 + i, "K": 4096, "N": 14336} if problem == "matmul" else \
            {"batch_size": 1, "num_heads": 32, "seq_len": 1024 * (i + 1), "head_dim": 128}
        solution = "triton_tma_persistent" if problem == "matmul" else "cuda_cutlass_fmha"
        records += [rec("eager", "baseline", shape, 10.0, problem=problem),
                    rec(solution, "solution", shape, 10.0 / s, problem=problem)]
    return records


def test_a_problem_names_its_own_heldout_goals():
    """matmul's goal is a geometric mean of 1.0 against cuBLAS (no won share); attention's 0.9x at every shape."""
    (met,) = goals.evaluate(run_matmul([1.1] * 8 + [0.9] * 7))  # 8 of 15 won, geomean 1.005
    assert met.verdict == "met", met.verdict
    (short,) = goals.evaluate(run_matmul([1.1] * 7 + [0.9] * 8))  # geomean 0.988
    assert "geomean 0.988x < 1.0x" in short.verdict
    (attention,) = goals.evaluate(run_matmul([1.2] * 11 + [0.85], problem="attention_causal"))
    assert "0.85x at 1x32x12288x128 < 0.9x" in attention.verdict, attention.verdict
    (attention_ok,) = goals.evaluate(run_matmul([0.95] * 12, problem="attention_causal"))
    assert attention_ok.verdict == "met", attention_ok.verdict
