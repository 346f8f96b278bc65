"""summarize(): median, interquartile range, number of runs and relative standard error of the mean."""

import math
import statistics

import pytest

from harness.timing import Timing, summarize


def test_known_list():
    t = summarize([1.0, 2.0, 3.0, 4.0, 5.0])
    assert t.median_us == 3.0
    assert t.runs == 5
    assert t.iqr_us == pytest.approx(3.0)  # quartiles 1.5 and 4.5
    assert t.rse == pytest.approx(statistics.stdev([1, 2, 3, 4, 5]) / (3.0 * math.sqrt(5)))


def test_order_does_not_matter():
    assert summarize([5.0, 1.0, 4.0, 2.0, 3.0]) == summarize([1.0, 2.0, 3.0, 4.0, 5.0])


def test_even_count_median_is_the_mean_of_the_middle_two():
    assert summarize([10.0, 20.0, 30.0, 40.0]).median_us == 25.0


def test_constant_times_have_no_spread():
    t = summarize([7.5] * 20)
    assert t == Timing(7.5, 0.0, 20, 0.0)


def test_single_run():
    t = summarize([4.0])
    assert t.median_us == 4.0 and t.iqr_us == 0.0 and t.runs == 1 and t.rse == 0.0


def test_median_ignores_one_outlier():
    t = summarize([10.0] * 9 + [10_000.0])
    assert t.median_us == 10.0
    assert t.iqr_us < 1.0


def test_rse_shrinks_with_more_runs_of_the_same_spread():
    few = summarize([9.0, 11.0] * 5)
    many = summarize([9.0, 11.0] * 500)
    assert many.rse < few.rse / 10


def test_p10_holds_the_fast_mode_where_the_median_holds_the_slow_one():
    """Two modes 0.64 us apart, most samples in the slower: the median reports the slow mode, the 10th percentile
    the fast one, and unlike the minimum it stays put when the timer takes ten times the samples."""
    fast, slow = 3.52, 4.16
    few = summarize([fast] * 40 + [slow] * 60)
    many = summarize([fast] * 400 + [slow] * 600 + [fast - 0.3])  # one lucky sample among many
    assert few.median_us == slow and few.p10_us == pytest.approx(fast)
    assert many.p10_us == pytest.approx(fast) and many.min_us == pytest.approx(fast - 0.3)
    assert summarize([4.0]).p10_us == 4.0


def test_empty_list_is_an_error():
    with pytest.raises((ValueError, IndexError, statistics.StatisticsError)):
        summarize([])


def test_the_spin_covers_a_slow_launch_path_and_never_drops_below_the_floor():
    from harness.timing import LEAD_US, MAX_LEAD_US, lead_us_for

    assert lead_us_for([20.0] * 50) == LEAD_US  # a fast path: the floor
    two_kernels = [90.0] * 40 + [140.0] * 10  # a two-launch wrapper: its 90th percentile is 140 us
    assert lead_us_for(two_kernels) == 2 * 140.0
    assert lead_us_for([90.0] * 49 + [50_000.0]) == 180.0  # one pause (a GC, a page fault) does not set it
    assert lead_us_for([5_000.0] * 10) == MAX_LEAD_US
    assert lead_us_for([], 100.0) == 100.0
    assert lead_us_for([500.0] * 10, 0.0) == 0.0  # the spin turned off stays off (scripts/launch_gap_probe.py)


def test_prepare_sizes_one_spin_for_callables_timed_in_turn_from_the_slowest(monkeypatch):
    """The GPU calls stubbed out: what is checked is that the spin follows the host's launch path."""
    import time

    import harness.timing as timing

    monkeypatch.setattr(timing.torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(timing.torch.cuda, "current_device", lambda: 0)
    monkeypatch.setitem(timing._CYCLES_PER_US, 0, 1000.0)
    timer = object.__new__(timing.CudaTimer)
    timer.warmup_ms, timer.floor_lead_us = 5.0, 1000.0

    def slow_launch():  # a launch path of at least 600 us on the host
        begin = time.perf_counter()
        while time.perf_counter() - begin < 600e-6:
            pass

    timer.prepare(lambda: None)
    assert timer.lead_us == 1000.0 and timer.lead_cycles == 1_000_000
    timer.prepare(lambda: None, slow_launch)
    assert timer.lead_us >= 1200.0 and timer.lead_cycles == int(timer.lead_us * 1000.0)
