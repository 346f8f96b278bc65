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


def test_empty_list_is_an_error():
    with pytest.raises((ValueError, IndexError, statistics.StatisticsError)):
        summarize([])
