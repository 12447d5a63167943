from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ocrmetrics.metrics.aggregate import AggregateStats, MetricAccumulator, bootstrap_ci, mean, percentile
from pytest_ocrmetrics.metrics.text import cer


def _acc(values: list[float], counts: list[tuple[float, float]] | None = None, metric: str = "cer") -> MetricAccumulator:
    acc = MetricAccumulator(metric)
    for i, v in enumerate(values):
        if counts is None:
            acc.add(v)
        else:
            acc.add(v, *counts[i])
    return acc


def test_micro_is_summed_counts_and_mean_is_macro() -> None:
    stats = _acc([0.1, 0.5, 0.0], [(1, 10), (5, 10), (0, 30)]).result(resamples=100)
    assert stats.micro == 6 / 50
    assert stats.mean == pytest.approx(0.2)
    assert (stats.numerator, stats.denominator, stats.n) == (6, 50, 3)


def test_micro_from_real_cer_results() -> None:
    results = [cer("INVOICE #12345", "INV0ICE #12345"), cer("TOTAL", "T0TAL"), cer("", "")]
    acc = MetricAccumulator("cer")
    for r in results:
        acc.add(r.value, r.counts()["errors"], r.counts()["reference_length"])
    assert acc.result(resamples=10).micro == 2 / 19


def test_percentiles_interpolate_like_numpy() -> None:
    stats = _acc([0.1, 0.5, 0.0, 0.3, 0.2]).result(resamples=10)
    # numpy.percentile([0.1, 0.5, 0.0, 0.3, 0.2], [50, 90, 95]) == [0.2, 0.42, 0.46]
    assert stats.median == 0.2
    assert stats.p90 == pytest.approx(0.42, abs=1e-12)
    assert stats.p95 == pytest.approx(0.46, abs=1e-12)
    assert (stats.min, stats.max) == (0.0, 0.5)
    assert stats.micro == stats.mean  # no counts: micro is the mean
    assert stats.numerator is None and stats.denominator is None


def test_percentile_function() -> None:
    ordered = sorted([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
    # numpy.percentile(values, [50, 90, 95, 2.5, 97.5])
    expected = [3.5, 6.9, 7.95, 1.0, 8.475]
    for q, value in zip([50, 90, 95, 2.5, 97.5], expected):
        assert percentile(ordered, q) == pytest.approx(value, abs=1e-12)
    assert percentile([7.0], 90) == 7.0
    with pytest.raises(ValueError, match="outside"):
        percentile([1.0], 101)
    with pytest.raises(ValueError, match="no values"):
        percentile([], 50)


def test_bootstrap_is_seeded_and_brackets_the_mean() -> None:
    values = [0.01, 0.02, 0.05, 0.1, 0.2, 0.03, 0.04, 0.0, 0.5, 0.07]
    first = bootstrap_ci(values, seed=7, resamples=500)
    assert first == bootstrap_ci(values, seed=7, resamples=500)
    assert first != bootstrap_ci(values, seed=8, resamples=500)
    low, high = first
    assert min(values) <= low <= mean(values) <= high <= max(values)
    narrow = bootstrap_ci(values, seed=7, resamples=500, confidence=0.5)
    assert low <= narrow[0] <= narrow[1] <= high


def test_bootstrap_statistic_and_arguments() -> None:
    assert bootstrap_ci([2.0, 2.0, 2.0], statistic=max, resamples=20) == (2.0, 2.0)
    assert bootstrap_ci([0.3]) == (0.3, 0.3)
    with pytest.raises(ValueError, match="no values"):
        bootstrap_ci([])
    with pytest.raises(ValueError, match="resamples must be at least 1"):
        bootstrap_ci([1.0], resamples=0)
    with pytest.raises(ValueError, match="confidence must be between 0 and 1"):
        bootstrap_ci([1.0], confidence=95)


def test_result_is_deterministic_for_a_seed() -> None:
    acc = _acc([0.1, 0.4, 0.2, 0.9, 0.0, 0.3])
    assert acc.result(seed=3) == acc.result(seed=3)
    assert acc.result(seed=3).ci_low is not None


def test_zero_resamples_skips_the_interval() -> None:
    stats = _acc([0.1, 0.3]).result(resamples=0)
    assert (stats.ci_low, stats.ci_high) == (None, None) and stats.mean == 0.2


def test_empty_accumulator_has_no_numbers() -> None:
    stats = MetricAccumulator("wer").result()
    assert stats.n == 0 and stats.micro is None and stats.ci_low is None
    assert json.loads(json.dumps(stats.to_dict(), allow_nan=False))["mean"] is None


def test_zero_denominator_policy() -> None:
    # every reference empty: no errors -> the mean of the values (0.0), errors -> 1.0
    assert _acc([0.0, 0.0], [(0, 0), (0, 0)]).result(resamples=5).micro == 0.0
    assert _acc([0.0, 1.0], [(0, 0), (3, 0)]).result(resamples=5).micro == 1.0
    # a higher-is-better share over empty references keeps the documents' own value
    assert _acc([1.0, 1.0], [(0, 0), (0, 0)], metric="token_accuracy").result(resamples=5).micro == 1.0


def test_infinite_values_are_written_as_null() -> None:
    stats = _acc([math.inf, 0.5], [(3, 0), (1, 2)]).result(resamples=20)
    assert stats.max == math.inf
    d = stats.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["max"] is None and d["micro"] == 2.0 and d["min"] == 0.5


def test_bad_adds() -> None:
    acc = MetricAccumulator("cer")
    with pytest.raises(ValueError, match="NaN"):
        acc.add(math.nan)
    with pytest.raises(ValueError, match="both numerator and denominator"):
        acc.add(0.1, 1)
    with pytest.raises(TypeError, match="value must be a number, not str"):
        acc.add("0.1")  # type: ignore[arg-type]
    acc.add(0.1, 1, 10)
    with pytest.raises(ValueError, match="some documents were added with counts and some without"):
        acc.add(0.2)
    with pytest.raises(ValueError, match="different metrics"):
        acc.merge(MetricAccumulator("wer"))
    with pytest.raises(ValueError, match="with counts and one without"):
        acc.merge(_acc([0.3]))


def test_merge_leaves_its_inputs_unchanged() -> None:
    a, b = _acc([0.1]), _acc([0.2])
    merged = a.merge(b)
    assert (a.n, b.n, merged.n) == (1, 1, 2)
    assert MetricAccumulator("cer").merge(a).result(resamples=5) == a.result(resamples=5)


_documents = st.lists(
    st.tuples(st.integers(0, 50), st.integers(0, 60)).map(lambda t: (t[0] / t[1] if t[1] else float(t[0] > 0), *t)),
    min_size=1,
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(_documents, st.integers(0, 30), st.integers(0, 2**32))
def test_merging_partials_equals_accumulating_all(docs: list[tuple[float, int, int]], cut: int, seed: int) -> None:
    everything = MetricAccumulator("cer")
    left, right = MetricAccumulator("cer"), MetricAccumulator("cer")
    for i, (value, errors, length) in enumerate(docs):
        everything.add(value, errors, length)
        (left if i < cut else right).add(value, errors, length)
    expected = everything.result(seed=seed, resamples=50)
    assert left.merge(right).result(seed=seed, resamples=50) == expected
    assert right.merge(left).result(seed=seed, resamples=50) == expected  # order does not matter either


def test_to_dict_fields() -> None:
    d = _acc([0.25, 0.75]).result(resamples=10).to_dict()
    assert list(d)[:11] == ["metric", "micro", "mean", "median", "p90", "p95", "min", "max", "n", "ci_low", "ci_high"]
    assert isinstance(AggregateStats.__dataclass_params__.frozen, bool) and AggregateStats.__dataclass_params__.frozen


def test_intervals_of_several_columns_equal_one_at_a_time_and_the_choices_bootstrap() -> None:
    import math
    import random

    from pytest_ocrmetrics.metrics.aggregate import bootstrap_ci, bootstrap_mean_intervals, percentile

    rng = random.Random(3)
    columns = {"cer": sorted(rng.random() for _ in range(40)), "wer": sorted(rng.random() for _ in range(40)),
               "f1": sorted(rng.random() for _ in range(7))}
    together = bootstrap_mean_intervals(columns, seed=5, resamples=300)
    for name, values in columns.items():
        assert together[name] == bootstrap_ci(values, seed=5, resamples=300)
        draws = random.Random(5)  # the documented resampling: random.Random(seed).choices(values, k=n)
        means = sorted(math.fsum(draws.choices(values, k=len(values))) / len(values) for _ in range(300))
        expected = (percentile(means, 2.5), percentile(means, 97.5))
        assert together[name] == pytest.approx(expected, abs=1e-12)
