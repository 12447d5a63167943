"""The paired bootstrap of a baseline comparison: how sure is "CER went up by 0.008"?

Documents present in both runs are resampled with replacement; each resample recomputes every metric's aggregate in
both runs from summed terms (counts for micro metrics), so the interval of ``new - old`` respects how the metric
aggregates. Seeded with :class:`random.Random` and summed in draw order: the same seed gives the same intervals on
every platform. With numpy installed (the ``speed`` extra), large runs draw and sum the very same resamples in numpy.
"""

from __future__ import annotations

import array
import math
import operator
import random
import sys
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from pytest_ocrmetrics.gating._numbers import finite
from pytest_ocrmetrics.metrics.registry import METRICS

__all__ = ["MetricSeries", "metric_series", "paired_bootstrap_intervals"]


@dataclass(frozen=True)
class MetricSeries:
    """One metric over a group's paired documents, as ratio-of-sums terms: aggregate = sum(num) / sum(den).

    Micro metrics with counts carry their numerator and denominator counts; other metrics carry (value, 1), so the
    ratio is their mean. A document without the metric on both sides contributes (0, 0).
    """

    metric: str
    old_num: list[float]
    old_den: list[float]
    new_num: list[float]
    new_den: list[float]
    n: int  # documents with the metric in both runs

    def values(self) -> tuple[float | None, float | None]:
        """(old, new) aggregates over every paired document."""
        od, nd = math.fsum(self.old_den), math.fsum(self.new_den)
        return (math.fsum(self.old_num) / od if od else None, math.fsum(self.new_num) / nd if nd else None)


def metric_series(metric: str, docs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> MetricSeries | None:
    """The series of ``metric`` over ``(old, new)`` document pairs, or ``None`` when no pair has it on both sides."""
    spec = METRICS[metric]
    present = [finite(o.get("metrics", {}).get(metric)) and finite(n.get("metrics", {}).get(metric)) for o, n in docs]
    count = sum(present)
    if not count:
        return None
    if spec.aggregation == "micro" and spec.numerator and spec.denominator:

        def counts(side: int, key: str) -> list[float]:
            """Count ``key`` of the old (side 0) or new (side 1) document of each pair; 0 where the metric is absent."""
            return [float(pair[side]["counts"][metric][key]) if here else 0.0 for pair, here in zip(docs, present)]

        try:
            old_num, old_den = counts(0, spec.numerator), counts(0, spec.denominator)
            new_num, new_den = counts(1, spec.numerator), counts(1, spec.denominator)
        except (KeyError, TypeError, ValueError):
            pass  # counts missing somewhere: fall back to the mean of the values
        else:
            if sum(old_den) > 0 and sum(new_den) > 0:
                return MetricSeries(metric, old_num, old_den, new_num, new_den, n=count)
    ones = [1.0 if here else 0.0 for here in present]
    old = [float(o["metrics"][metric]) if here else 0.0 for (o, _), here in zip(docs, present)]
    new = [float(n["metrics"][metric]) if here else 0.0 for (_, n), here in zip(docs, present)]
    return MetricSeries(metric, old, ones, new, list(ones), n=count)


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile (numpy's default ``linear`` method)."""
    pos = (len(sorted_values) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


_WORD = next(code for code in ("I", "L") if array.array(code).itemsize == 4)


def _draw(rng: random.Random, n: int) -> list[int]:
    """``n`` indices in ``range(n)`` drawn with replacement: 32 random bits each, little-endian, modulo ``n``.

    Three times faster than ``rng.choices`` and the same on every platform; the modulo bias (below n / 2**32) is
    far under the bootstrap's own noise.
    """
    words = array.array(_WORD)
    words.frombytes(rng.randbytes(4 * n))
    if sys.byteorder == "big":
        words.byteswap()
    return [w % n for w in words]


def paired_bootstrap_intervals(
    series: Sequence[MetricSeries], n_docs: int, *, level: float, resamples: int, seed: str,
) -> dict[str, tuple[float, float]]:
    """Percentile intervals of ``aggregate(new) - aggregate(old)``, per metric, resampling documents.

    Each resample draws ``n_docs`` paired documents with replacement (the same draw for both runs and for every
    metric of the group) and recomputes each aggregate from its summed terms, so micro metrics are recomputed from
    counts. ``random.Random(seed)`` makes the draws, and the sums run in draw order, so the same seed gives the
    same intervals on every platform.

    When numpy is installed (the optional ``speed`` extra) and the run is large (at least ``_NUMPY_MIN_DRAWS`` index
    draws, or numpy already imported), the resamples are drawn and summed in numpy, in chunks (see
    :func:`_numpy_deltas`): the same draws and the same sequential sums, so the same intervals as the pure-Python
    loop (bit for bit on CPython 3.11; on 3.12+, whose ``sum()`` compensates rounding, within a few ulps).
    """
    if n_docs == 0 or resamples <= 0 or not series:
        return {}
    rng = random.Random(seed)
    # a mean over documents that all have the metric needs one sum per resample: of the per-document differences
    differences = {s.metric: [b - a for a, b in zip(s.old_num, s.new_num)] for s in series
                   if s.n == n_docs and all(d == 1.0 for d in s.old_den) and all(d == 1.0 for d in s.new_den)}
    deltas = _numpy_deltas(series, differences, n_docs, rng, resamples)
    if deltas is None:
        deltas = _pure_deltas(series, differences, n_docs, rng, resamples)
    alpha = 1.0 - level
    intervals: dict[str, tuple[float, float]] = {}
    for metric, values in deltas.items():
        if values:
            values.sort()
            intervals[metric] = (_quantile(values, alpha / 2), _quantile(values, 1 - alpha / 2))
    return intervals


def _pure_deltas(series: Sequence[MetricSeries], differences: Mapping[str, list[float]], n_docs: int,
                 rng: random.Random, resamples: int) -> dict[str, list[float]]:
    """Each metric's resampled deltas, in pure Python: the reference the numpy path must equal, and its fallback."""
    deltas: dict[str, list[float]] = {s.metric: [] for s in series}
    for _ in range(resamples):
        idx = _draw(rng, n_docs)
        pick = operator.itemgetter(*idx) if n_docs > 1 else (lambda seq: (seq[idx[0]],))  # noqa: B023 - used now
        for s in series:
            diff = differences.get(s.metric)
            if diff is not None:
                deltas[s.metric].append(sum(pick(diff)) / n_docs)
                continue
            old_den, new_den = sum(pick(s.old_den)), sum(pick(s.new_den))
            if old_den and new_den:
                deltas[s.metric].append(sum(pick(s.new_num)) / new_den - sum(pick(s.old_num)) / old_den)
    return deltas


_NUMPY_CHUNK = 1_000_000  # index draws per numpy chunk (8 bytes an index, 8 bytes a picked term)
# below this many index draws the pure-Python loop is fast enough, and numpy is not imported (a tenth of a second)
_NUMPY_MIN_DRAWS = 500_000


def _numpy_deltas(series: Sequence[MetricSeries], differences: Mapping[str, list[float]], n_docs: int,
                  rng: random.Random, resamples: int) -> dict[str, list[float]] | None:
    """:func:`_pure_deltas` computed with numpy (about 10x faster at 20,000 documents), or None without numpy.

    Same draws: :func:`_draw` reads ``rng.randbytes(4 * n_docs)`` as little-endian 32-bit words, which are the
    Mersenne Twister's successive 32-bit outputs; numpy's ``MT19937`` bit generator, handed ``rng``'s state, returns
    those very outputs from ``random_raw`` (three times faster than ``randbytes``), taken modulo ``n_docs`` in the
    same order. Same sums: the picked terms are laid out one resample per column and ``numpy.add.reduce`` over axis
    0 adds row after row, left to right like ``sum()`` (numpy's pairwise summation only runs along a reduced
    innermost axis, so a chunk narrower than 8 resamples takes the last row of a ``cumsum`` instead); ``+ 0.0``
    turns a ``-0.0`` into the ``0.0`` that ``sum()``, starting from ``0``, returns. Same arithmetic after: IEEE
    division and subtraction. Chunks of ``_NUMPY_CHUNK`` draws bound the memory (about 30 MB at a time).
    """
    if n_docs * resamples < _NUMPY_MIN_DRAWS and "numpy" not in sys.modules:
        return None
    try:
        import numpy
    except ImportError:
        return None
    columns: list[Any] = []  # each distinct term list once, as an array (a micro metric's two runs share denominators)

    def column(terms: list[float]) -> int:
        """The index of ``terms``'s array in ``columns``, added unless an equal one is there."""
        array_ = numpy.asarray(terms, dtype=numpy.float64)
        for i, known in enumerate(columns):
            if numpy.array_equal(known, array_):  # equal floats are equal terms (up to the sign of a zero: + 0.0 below)
                return i
        columns.append(array_)
        return len(columns) - 1

    plans: list[tuple[str, tuple[int, ...]]] = []  # (metric, [difference] or [old_num, old_den, new_num, new_den])
    for s in series:
        diff = differences.get(s.metric)
        terms = [diff] if diff is not None else [s.old_num, s.old_den, s.new_num, s.new_den]
        plans.append((s.metric, tuple(column(t) for t in terms)))
    state = rng.getstate()[1]
    generator = numpy.random.MT19937()
    generator.state = {"bit_generator": "MT19937",
                       "state": {"key": numpy.array(state[:624], dtype=numpy.uint32), "pos": state[624]}}
    deltas: dict[str, list[float]] = {s.metric: [] for s in series}
    per_chunk = max(1, _NUMPY_CHUNK // n_docs)
    done = 0
    with numpy.errstate(all="ignore"):  # an overflow to inf (and inf - inf) passes silently, as in Python's floats
        while done < resamples:
            rows = min(per_chunk, resamples - done)
            _numpy_chunk(numpy, generator, columns, plans, deltas, n_docs, rows)
            done += rows
    return deltas


def _numpy_chunk(numpy: Any, generator: Any, columns: list[Any], plans: list[tuple[str, tuple[int, ...]]],
                 deltas: dict[str, list[float]], n_docs: int, rows: int) -> None:
    """Draw ``rows`` resamples from ``generator`` and append each metric's deltas (see :func:`_numpy_deltas`)."""
    words = generator.random_raw(n_docs * rows).astype(numpy.uint32).reshape(rows, n_docs)  # 32-bit outputs
    # (n_docs, rows): column j is the chunk's resample j, row i the i-th document each resample drew
    by_column = (words % numpy.uint32(n_docs)).T.astype(numpy.intp, order="C")
    if rows >= 8:
        sums = [numpy.add.reduce(numpy.take(array_, by_column), axis=0) + 0.0 for array_ in columns]
    else:
        sums = [numpy.cumsum(numpy.take(array_, by_column), axis=0)[-1] + 0.0 for array_ in columns]
    for metric, plan in plans:
        if len(plan) == 1:
            deltas[metric].extend((sums[plan[0]] / n_docs).tolist())
            continue
        old_num, old_den, new_num, new_den = (sums[i] for i in plan)
        kept = (old_den != 0) & (new_den != 0)  # the pure loop's ``if old_den and new_den``
        deltas[metric].extend((new_num[kept] / new_den[kept] - old_num[kept] / old_den[kept]).tolist())
