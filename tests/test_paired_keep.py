"""The paired keep rule: a confidence interval over interleaved rounds, decided per bucket."""

import random

from suite.optimize import paired


def rounds(base_us: float, speedup: float, noise: float, n: int = 15, seed: int = 1):
    """(best, candidate) per-round times: a shared drift per round, independent noise on each."""
    rng = random.Random(seed)
    best, cand = [], []
    for _ in range(n):
        drift = 1 + rng.uniform(-0.05, 0.05)  # both see it: a clock change between rounds
        best.append(base_us * drift * (1 + rng.gauss(0, noise)))
        cand.append(base_us / speedup * drift * (1 + rng.gauss(0, noise)))
    return best, cand


def test_a_three_percent_win_with_one_percent_noise_is_kept():
    verdict = paired.decide([rounds(50.0, 1.03, 0.01)])
    assert verdict.keep, verdict.reason
    assert 1.01 < verdict.low < verdict.speedup < verdict.high


def test_a_noisy_tie_is_not_kept():
    for seed in range(5):
        verdict = paired.decide([rounds(50.0, 1.0, 0.05, seed=seed)])
        assert not verdict.keep, verdict.reason


def test_a_slowdown_is_not_kept():
    assert not paired.decide([rounds(50.0, 0.9, 0.01)]).keep


def test_shapes_of_a_bucket_combine_into_one_ratio_per_round():
    """A clear win at two shapes and a tie at a third, in one bucket: the bucket's geomean is a win."""
    verdict = paired.decide([rounds(10.0, 1.08, 0.01, seed=2), rounds(80.0, 1.08, 0.01, seed=3),
                             rounds(40.0, 1.0, 0.01, seed=4)])
    assert verdict.keep and 1.03 < verdict.speedup < 1.08


def test_the_same_numbers_give_the_same_verdict():
    data = [rounds(50.0, 1.015, 0.02)]
    assert paired.decide(data, seed=3) == paired.decide(data, seed=3)


def test_untimed_or_too_few_rounds_keep_nothing():
    assert not paired.decide([([], [])]).keep
    assert "too few" in paired.decide([([10.0, 10.0], [5.0, 5.0])]).reason


def ratios(values: list[float], base_us: float = 10.0):
    """(best, candidate) per-round times whose per-round speedups are `values`."""
    return [base_us] * len(values), [base_us / v for v in values]


def test_a_near_miss_is_faster_on_the_evidence_by_a_gain_worth_having():
    """Alternating 1.06x and 0.99x rounds: 1.024x with an interval from above 1 to above the line; the rule asks it
    again. A tie, a small gain, a kept win and an untimed answer are not near misses."""
    near = paired.decide([ratios([1.06, 0.99] * 7 + [1.06])])
    assert not near.keep and 1.0 < near.low < 1.01 and near.speedup >= 1.02, near
    assert paired.near_miss(near)
    assert not paired.near_miss(paired.decide([ratios([1.01, 0.99] * 7 + [1.0])]))  # a tie: low under 1
    small = paired.decide([ratios([1.012, 1.006] * 7 + [1.009])])  # surely faster, by under 2 %
    assert not small.keep and small.low > 1 and not paired.near_miss(small)
    kept = paired.decide([ratios([1.05, 1.04] * 7 + [1.045])])
    assert kept.keep and not paired.near_miss(kept)
    assert not paired.near_miss(paired.decide([]))
