"""Corpus aggregates of per-document metric values: micro and macro means, percentiles, a bootstrap interval.

A :class:`MetricAccumulator` collects one metric's per-document values (and, for count-based metrics such as CER,
the numerator and denominator of each document). Accumulators merge exactly: merging the partial accumulators of
several workers gives the same :class:`AggregateStats`, bit for bit, as accumulating every document in one place,
because every statistic is computed from the sorted values with exactly rounded sums (``math.fsum``).

Definitions (``n`` documents, values ``v`` sorted ascending):

- ``micro`` = sum(numerators) / sum(denominators) when counts were given (corpus CER = all edits / all reference
  characters); when the summed denominator is 0 it is the mean of the values if the summed numerator is 0 too, and
  1.0 otherwise (errors against empty references). Without counts, ``micro`` is the mean.
- ``mean`` (the macro average), ``median``, ``p90``, ``p95``, ``min``, ``max``: percentiles interpolate linearly
  between closest ranks, like ``numpy.percentile``'s default: the q-th percentile is at rank ``(n - 1) * q / 100``.
- ``ci_low`` / ``ci_high``: a percentile bootstrap interval of the mean: ``resamples`` resamples of ``n`` values drawn
  with replacement by ``random.Random(seed)``; the interval is the ``(1 - confidence) / 2`` and
  ``(1 + confidence) / 2`` percentiles of the resampled means. Same seed, same values: same interval.
- With no documents every statistic is ``None``.

>>> acc = MetricAccumulator("cer")
>>> acc.add(0.1, 1, 10)
>>> acc.add(0.5, 5, 10)
>>> acc.add(0.0, 0, 30)
>>> stats = acc.result(resamples=200)
>>> stats.micro, round(stats.mean, 4), stats.median, stats.n
(0.12, 0.2, 0.1, 3)
"""

from __future__ import annotations

import math
import random
import sys
from array import array
from dataclasses import dataclass, field
from functools import lru_cache
from operator import itemgetter
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

from pytest_ocrmetrics.metrics.rates import json_float

__all__ = ["MetricAccumulator", "AggregateStats", "bootstrap_ci", "bootstrap_mean_intervals", "percentile", "mean"]

K = TypeVar("K")


def mean(values: Sequence[float]) -> float:
    """The exactly rounded arithmetic mean (``math.fsum``, so the order of ``values`` does not matter).

    Args:
        values: the values.

    Returns:
        Their mean.

    >>> mean([0.25, 0.5, 0.75])
    0.5
    """
    if not values:
        raise ValueError("mean of no values; pass at least one value")
    return math.fsum(values) / len(values)


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ascending ``sorted_values``, interpolating linearly like numpy's default.

    Args:
        sorted_values: the values, ascending.
        q: the percentile, 0 to 100.

    Returns:
        The interpolated value.

    >>> percentile([1.0, 2.0, 3.0, 4.0], 50)
    2.5
    >>> percentile([1.0, 2.0, 3.0, 4.0], 90)
    3.7
    """
    if not sorted_values:
        raise ValueError("percentile of no values; pass at least one value")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q={q} is outside [0, 100]")
    rank = (len(sorted_values) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(sorted_values) - 1)
    fraction = rank - low
    a, b = sorted_values[low], sorted_values[high]
    if fraction == 0 or a == b:
        return a
    return a + (b - a) * fraction


def bootstrap_ci(
    values: Sequence[float],
    *,
    seed: int = 0,
    resamples: int = 1000,
    confidence: float = 0.95,
    statistic: Callable[[Sequence[float]], float] = mean,
) -> tuple[float, float]:
    """A percentile bootstrap confidence interval of ``statistic`` (default: the mean) over ``values``.

    Draws ``resamples`` samples of ``len(values)`` values with replacement using ``random.Random(seed)`` (pure
    Python, no numpy), computes ``statistic`` on each and returns the ``(1 - confidence) / 2`` and
    ``(1 + confidence) / 2`` percentiles of those. Deterministic for a given seed and order of ``values``; a paired
    bootstrap passes per-document differences.

    Args:
        values: the per-document values.
        seed: seed of ``random.Random``: same seed, same interval.
        resamples: how many resamples to draw.
        confidence: the interval's coverage, e.g. 0.95.
        statistic: what is computed on each resample (default: the mean).

    Returns:
        ``(low, high)``.

    >>> bootstrap_ci([0.1, 0.2, 0.3, 0.4], seed=1, resamples=500) == bootstrap_ci([0.1, 0.2, 0.3, 0.4], seed=1, resamples=500)
    True
    >>> low, high = bootstrap_ci([0.1, 0.2, 0.3, 0.4], seed=1, resamples=500)
    >>> 0.1 <= low <= 0.25 <= high <= 0.4
    True
    """
    if not values:
        raise ValueError("bootstrap of no values; pass at least one value")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, not {resamples}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 (e.g. 0.95), not {confidence}")
    population = list(values)
    n = len(population)
    if statistic is mean:
        return bootstrap_mean_intervals({0: population}, seed=seed, resamples=resamples, confidence=confidence)[0]
    rng = random.Random(seed)
    stats = sorted(statistic(rng.choices(population, k=n)) for _ in range(resamples))
    alpha = (1 - confidence) / 2
    return percentile(stats, 100 * alpha), percentile(stats, 100 * (1 - alpha))


def bootstrap_mean_intervals(
    columns: Mapping[K, Sequence[float]], *, seed: int = 0, resamples: int = 1000, confidence: float = 0.95
) -> dict[K, tuple[float, float]]:
    """Percentile bootstrap intervals of the mean of several columns at once (the metrics of one corpus).

    Columns of the same length share their resamples: each resample's indices are drawn once (exactly the draws of
    ``random.Random(seed).choices(column, k=n)``) and picked from every column in C, so a corpus of many metrics
    costs little more than one. Resample means are plain float sums (not ``math.fsum``): the interval moves by at
    most a few ulps, and stays deterministic for a given seed.

    When numpy is installed (it is optional), the same resamples are drawn and summed in numpy, in chunks: the
    Mersenne Twister state of ``random.Random(seed)`` is handed to ``numpy.random.RandomState``, whose
    ``random_sample`` yields the very same doubles, so the indices are identical, and a cumulative sum adds each
    resample left to right like ``sum()``: the same numbers as the pure-Python loop (bit for bit on CPython 3.11; on
    3.12+, whose ``sum()`` compensates rounding, within a few ulps), about 10x faster and linear in the documents.
    Small corpora (under half a million draws) use the loop unless numpy is already imported.

    Args:
        columns: metric (or any key) -> its per-document values, all of one corpus.
        seed: seed of the shared resamples.
        resamples: how many resamples to draw.
        confidence: the intervals' coverage.

    Returns:
        Each key's ``(low, high)`` interval of the mean.

    >>> bootstrap_mean_intervals({"a": [1.0, 1.0], "b": [0.0]}, resamples=10)
    {'a': (1.0, 1.0), 'b': (0.0, 0.0)}
    """
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, not {resamples}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 (e.g. 0.95), not {confidence}")
    alpha = (1 - confidence) / 2
    by_length: dict[int, list[K]] = {}
    for key, column in columns.items():
        if not column:
            raise ValueError(f"bootstrap of no values ({key!r}); pass at least one value")
        by_length.setdefault(len(column), []).append(key)
    intervals: dict[K, tuple[float, float]] = {}
    for n, keys in by_length.items():
        if n == 1:
            intervals.update((key, (columns[key][0], columns[key][0])) for key in keys)
            continue
        populations = [list(columns[key]) for key in keys]
        means = _numpy_resample_means(populations, seed, resamples)
        if means is None:
            means = [[] for _ in keys]
            for draw in _resample_indices(n, seed, resamples):
                pick = itemgetter(*draw)
                for values, population in zip(means, populations):
                    values.append(sum(pick(population)) / n)
        for key, values in zip(keys, means):
            values.sort()
            intervals[key] = (percentile(values, 100 * alpha), percentile(values, 100 * (1 - alpha)))
    return intervals


# index draws per numpy chunk (2 MB of draws, indices and picked values each, two of them alive at once), raised up to
# _NUMPY_MAX_CHUNK so that a chunk holds at least _NUMPY_MIN_ROWS resamples: reducing over the documents adds one row of
# resamples per step, and at 20,000 documents 12 a step (250,000 draws) took 1.7x as long as 48
_NUMPY_CHUNK = 250_000
_NUMPY_MAX_CHUNK = 1_000_000
_NUMPY_MIN_ROWS = 48
# below this many index draws the pure-Python loop is fast enough, and numpy is not imported (a tenth of a second):
# eight metrics' intervals took as long either way (import included) at about 300 documents x 1,000 resamples
_NUMPY_MIN_DRAWS = 300_000


def _numpy_resample_means(populations: Sequence[Sequence[float]], seed: int,
                          resamples: int) -> list[list[float]] | None:
    """The resample means of each population (all of one length ``n``) computed with numpy, or None without it.

    The draws are ``random.Random(seed).choices(population, k=n)``'s: ``floor(random() * n)`` for each index, from
    the same Mersenne Twister stream; the sums are sequential (``cumsum``), as ``sum()`` adds.
    """
    n = len(populations[0])
    if n * resamples < _NUMPY_MIN_DRAWS and "numpy" not in sys.modules:
        return None
    try:
        import numpy
    except ImportError:
        return None
    state = random.Random(seed).getstate()[1]
    generator = numpy.random.RandomState()
    # (name, key, pos, has_gauss, cached_gaussian): no cached Gaussian, as numpy assumes for a 3-tuple
    generator.set_state(("MT19937", numpy.array(state[:624], dtype=numpy.uint32), int(state[624]), 0, 0.0))
    arrays = [numpy.asarray(population, dtype=numpy.float64) for population in populations]
    means: list[list[float]] = [[] for _ in populations]
    per_chunk = max(1, _NUMPY_CHUNK // n, min(_NUMPY_MIN_ROWS, _NUMPY_MAX_CHUNK // n))
    done = 0
    while done < resamples:
        rows = min(per_chunk, resamples - done)
        draws = generator.random_sample((rows, n))
        draws *= float(n)
        indices = draws.astype(numpy.intp)  # >= 0: truncation is floor
        del draws
        if rows >= 8:  # one resample per column: reducing over axis 0 adds row after row, as sum() does, no cumsum
            by_column = indices.T.copy()
            del indices
            for values, array_ in zip(means, arrays):
                values.extend(((numpy.add.reduce(array_[by_column], axis=0) + 0.0) / n).tolist())
            done += rows
            continue
        for values, array_ in zip(means, arrays):
            sums = numpy.cumsum(array_[indices], axis=1)[:, -1] + 0.0  # + 0.0: sum() never returns -0.0
            values.extend((sums / n).tolist())
        done += rows
    return means


@lru_cache(maxsize=8)
def _resample_indices_cached(n: int, seed: int, resamples: int) -> tuple[array[int], ...]:
    return tuple(_draw_indices(n, seed, resamples))


def _draw_indices(n: int, seed: int, resamples: int) -> Iterator[array[int]]:
    rng = random.Random(seed)
    for _ in range(resamples):
        yield array("I", rng.choices(range(n), k=n))  # exactly the draws of rng.choices(population, k=n)


def _resample_indices(n: int, seed: int, resamples: int) -> Iterable[array[int]]:
    """The bootstrap's index draws; kept (4 bytes an index) for corpora up to 5 million draws, regenerated above."""
    if n * resamples <= 5_000_000:
        return _resample_indices_cached(n, seed, resamples)
    return _draw_indices(n, seed, resamples)


@dataclass(frozen=True)
class AggregateStats:
    """One metric over a corpus (see the module docstring for exact definitions).

    ``numerator`` / ``denominator`` are the summed counts behind ``micro`` (``None`` when no counts were given).
    """

    metric: str
    micro: float | None
    mean: float | None
    median: float | None
    p90: float | None
    p95: float | None
    min: float | None
    max: float | None
    n: int
    ci_low: float | None
    ci_high: float | None
    numerator: float | None = None
    denominator: float | None = None
    confidence: float = 0.95

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict: infinite values (possible only from ``empty_reference="dinglehopper"``) become ``None``."""
        return {
            "metric": self.metric,
            "micro": json_float(self.micro),
            "mean": json_float(self.mean),
            "median": json_float(self.median),
            "p90": json_float(self.p90),
            "p95": json_float(self.p95),
            "min": json_float(self.min),
            "max": json_float(self.max),
            "n": self.n,
            "ci_low": json_float(self.ci_low),
            "ci_high": json_float(self.ci_high),
            "numerator": json_float(self.numerator),
            "denominator": json_float(self.denominator),
            "confidence": self.confidence,
        }


@dataclass
class MetricAccumulator:
    """Collects one metric's per-document values (and counts) and turns them into :class:`AggregateStats`.

    Either every document gives a numerator and a denominator (count-based metrics, micro = summed ratio) or none
    does (micro = mean); mixing the two raises ``ValueError``.
    """

    metric: str
    values: list[float] = field(default_factory=list)
    numerators: list[float] = field(default_factory=list)
    denominators: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not isinstance(self.metric, str):
            raise TypeError(f"metric must be a metric name (str), not {type(self.metric).__name__}")

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def has_counts(self) -> bool:
        return bool(self.numerators)

    def add(self, value: float, numerator: float | None = None, denominator: float | None = None) -> None:
        """Add one document's ``value`` and, for count-based metrics, its ``numerator`` and ``denominator``."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{self.metric}: value must be a number, not {type(value).__name__}")
        if math.isnan(value):
            raise ValueError(f"{self.metric}: value is NaN; every document needs a real number")
        if (numerator is None) != (denominator is None):
            raise ValueError(f"{self.metric}: give both numerator and denominator, or neither")
        with_counts = numerator is not None
        if self.values and with_counts != self.has_counts:
            raise ValueError(
                f"{self.metric}: some documents were added with counts and some without; "
                "pass numerator and denominator for every document or for none"
            )
        self.values.append(float(value))
        if with_counts:
            self.numerators.append(numerator)  # type: ignore[arg-type]
            self.denominators.append(denominator)  # type: ignore[arg-type]

    def merge(self, other: MetricAccumulator) -> MetricAccumulator:
        """A new accumulator holding the documents of both (``self`` and ``other`` are left unchanged)."""
        if other.metric != self.metric:
            raise ValueError(f"cannot merge accumulators of different metrics: {self.metric!r} and {other.metric!r}")
        if self.values and other.values and self.has_counts != other.has_counts:
            raise ValueError(f"{self.metric}: cannot merge an accumulator with counts and one without")
        return MetricAccumulator(
            self.metric,
            self.values + other.values,
            self.numerators + other.numerators,
            self.denominators + other.denominators,
        )

    def result(self, *, seed: int = 0, resamples: int = 1000, confidence: float = 0.95,
               interval: tuple[float, float] | None = None) -> AggregateStats:
        """Compute the corpus statistics (deterministic for a given seed); ``resamples=0`` skips the interval."""
        if not self.values:
            return AggregateStats(self.metric, None, None, None, None, None, None, None, 0, None, None,
                                  confidence=confidence)
        ordered = sorted(self.values)
        average = mean(ordered)
        numerator = denominator = None
        if self.has_counts:
            numerator = math.fsum(self.numerators)
            denominator = math.fsum(self.denominators)
            if denominator:
                micro = numerator / denominator
            else:
                micro = average if numerator == 0 else 1.0
        else:
            micro = average
        # resamples=0: no interval (the terminal table does not show one, and bootstrapping is the costly part)
        ci_low: float | None
        ci_high: float | None
        if interval is not None:  # computed by bootstrap_mean_intervals together with the other metrics
            ci_low, ci_high = interval
        elif resamples:
            ci_low, ci_high = bootstrap_ci(ordered, seed=seed, resamples=resamples, confidence=confidence)
        else:
            ci_low = ci_high = None
        return AggregateStats(
            metric=self.metric,
            micro=micro,
            mean=average,
            median=percentile(ordered, 50),
            p90=percentile(ordered, 90),
            p95=percentile(ordered, 95),
            min=ordered[0],
            max=ordered[-1],
            n=len(ordered),
            ci_low=ci_low,
            ci_high=ci_high,
            numerator=numerator,
            denominator=denominator,
            confidence=confidence,
        )
