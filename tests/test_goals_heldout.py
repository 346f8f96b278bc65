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


def run_at_ceiling(baseline_over_sol: float, floor_us: float = 4.0):
    """Two held-out shapes: a large one whose best baseline takes baseline_over_sol times its copy-ceiling
    time, and a small one where the baseline already runs at the run's launch floor."""
    records = []
    for shape, sol, base in (({"batch_size": 16384, "dim": 4096}, 40.0, 40.0 * baseline_over_sol),
                             ({"batch_size": 7, "dim": 1600}, 0.05, floor_us)):
        records += [{**rec("compile", "baseline", shape, base), "sol_us": sol},
                    {**rec("triton_family", "solution", shape, base * 1.05), "sol_us": sol}]
    return records


def test_a_row_says_when_the_geomean_goal_is_out_of_every_kernels_reach():
    """Where torch.compile runs at the copy ceiling and the launch floor, no kernel can score 1.15x: the
    verdict says so, with the most a kernel at the ceiling would score in that run."""
    (row,) = goals.evaluate(run_at_ceiling(1.05))
    assert abs(row.reach - 1.05 ** 0.5) < 1e-9  # 1.05x above the ceiling at one shape, at the floor at the other
    assert "out of reach in this run: at the copy ceiling and the launch floor 1.02x" in row.verdict
    (room,) = goals.evaluate(run_at_ceiling(2.0))  # the baseline at half the ceiling: 1.41x is there to take
    assert abs(room.reach - 2.0 ** 0.5) < 1e-9 and "out of reach" not in room.verdict


def test_a_kernel_below_the_ceiling_at_a_shape_sets_what_is_conceivable_there():
    """An implementation already faster than the copy ceiling (L2 reuse) is what that shape allows: the reach
    never asks for less than has been done."""
    records = run_at_ceiling(1.0)
    records[0]["median_us"] = 30.0  # the baseline at 40 us against a 40 us ceiling; this one at 30
    records[0]["solution"], records[0]["kind"] = "liger", "baseline"
    records.append({**rec("compile", "baseline", {"batch_size": 16384, "dim": 4096}, 40.0), "sol_us": 40.0})
    (row,) = goals.evaluate(records)
    assert abs(row.reach - 1.0) < 1e-9  # best baseline 30 us, least conceivable 30 us; 4 us at the floor


def test_compute_bound_problems_have_no_reach():
    """matmul's bytes say nothing of its ceiling: no reach is claimed."""
    records = [{**r, "sol_us": 1.0} for r in run_matmul([1.1] * 15)]
    (row,) = goals.evaluate(records)
    assert row.reach is None


def test_a_problem_names_its_own_goals_at_named_shapes():
    """A run of named shapes (not held-out) is judged by META "goals": attention needs SDPA's speed at each shape
    and no geometric mean over weak baselines; matmul 0.97 of cuBLAS's."""
    def named(speedups, problem):
        return [{**r, "shape_set": None} for r in run_matmul(speedups, problem=problem)]

    (attention,) = goals.evaluate(named([1.03, 1.0], "attention_causal"))  # under the default 1.2x geomean bar
    assert attention.verdict == "met", attention.verdict
    (slow,) = goals.evaluate(named([1.03, 0.96], "attention_causal"))
    assert slow.verdict.startswith("missed: 0.96x the best baseline at 1x32x2048x128"), slow.verdict
    (matmul,) = goals.evaluate(named([0.98, 0.97], "matmul"))
    assert matmul.verdict == "met", matmul.verdict
    (short,) = goals.evaluate(named([0.98, 0.96], "matmul"))
    assert "0.96x the best baseline at 128x4096x14336 < 0.97x" in short.verdict, short.verdict


def test_a_verdict_on_a_table_searched_on_another_gpu_says_so():
    """An H100 run of a family with only the H200's table: `ksuite goals` names that table under the verdicts;
    once the H100 has its own, or for records older than the field, nothing is said."""
    def on_h100(records, table_gpu):
        return [{**r, "gpu": "NVIDIA H100 80GB HBM3",
                 **({"table_gpu": table_gpu} if r["kind"] == "solution" and table_gpu else {})} for r in records]

    (borrowed,) = goals.evaluate(on_h100(run([1.2] * 20), "nvidia-h200"))
    assert borrowed.verdict == "met"  # the verdict is the run's; the line says whose table it was
    assert goals.borrowed_tables([borrowed]) == [
        "rmsnorm triton_family: the dispatch table searched on nvidia-h200 (nvidia-h100-80gb-hbm3 has no table of "
        "its own)"]
    for table_gpu in ("nvidia-h100-80gb-hbm3", None):
        assert goals.borrowed_tables(goals.evaluate(on_h100(run([1.2] * 20), table_gpu))) == []


def test_no_liger_record_is_not_met():
    """A run whose python lacked liger-kernel judged against the others only: never 'met' (rmsnorm names Liger)."""
    records = [r for r in run([1.2] * 20) if r["solution"] != "liger"]
    (row,) = goals.evaluate(records)
    assert row.verdict.startswith("not measured: no Liger baseline in this run"), row.verdict
    assert goals.unmet_pairs([row]) == [("rmsnorm", "float16")]
    (missed,) = goals.evaluate([r for r in run([1.05] * 20) if r["solution"] != "liger"])
    assert missed.verdict.startswith("missed: ") and "Liger" not in missed.verdict


def test_a_problem_without_liger_or_an_eager_only_run_needs_none():
    (matmul,) = goals.evaluate(run_matmul([1.1] * 15))  # matmul names no Liger baseline
    assert matmul.verdict == "met", matmul.verdict
    eager_only = [dict(r, solution="eager") if r["solution"] == "compile" else r
                  for r in run([1.2] * 20) if r["solution"] != "liger"]
    (row,) = goals.evaluate(eager_only)  # --baselines eager: the run asked for eager alone
    assert row.verdict == "met", row.verdict
