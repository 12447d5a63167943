"""The paired bootstrap's numpy path (pytest_ocrmetrics.gating.bootstrap): the very numbers of the pure-Python loop.

Each test forces a path: ``_NUMPY_MIN_DRAWS = 0`` makes any run take numpy, replacing ``_numpy_deltas`` by a function
returning None leaves the pure loop (the reference). Equal means ``==`` on every resampled delta and on its hex form,
so a ``-0.0`` for ``0.0`` fails too, on CPython up to 3.11, whose ``sum()`` adds left to right as numpy does; from 3.12
on ``sum()`` compensates rounding, so the two paths (and the pinned numbers) agree within a few ulps only.
"""

from __future__ import annotations

import builtins
import math
import random
import sys
import warnings
from typing import Any

import pytest
from ocr_run_factory import make_doc, make_run

from pytest_ocrmetrics.gating import bootstrap, compare_runs
from pytest_ocrmetrics.gating.bootstrap import MetricSeries, paired_bootstrap_intervals


def _series(n: int, seed: int) -> list[MetricSeries]:
    """One series of each kind over ``n`` paired documents, with zeros where they bite."""
    rng = random.Random(seed)
    # micro counts; some documents count nothing (denominator 0), and with n=2 some resamples count nothing at all
    den = [float(rng.randint(0, 40)) if i else 0.0 for i in range(n)]
    micro = MetricSeries("cer", [float(rng.randint(0, int(d) + 3)) for d in den], den,
                         [float(rng.randint(0, int(d) + 5)) for d in den], list(den), n)
    other_den = [float(rng.randint(1, 60)) for _ in range(n)]
    micro_2 = MetricSeries("wer", [rng.random() * d for d in other_den], other_den,
                           [rng.random() * 3 for _ in range(n)], [float(rng.randint(0, 9)) for _ in range(n)], n)
    # a mean over documents that all have it (the differences' shortcut), values spread over magnitudes
    mean = MetricSeries("ned", [rng.random() ** 5 for _ in range(n)], [1.0] * n,
                        [rng.random() ** 5 for _ in range(n)], [1.0] * n, n)
    # a mean with absent documents: (0, 0) terms; the first document is absent when there are several
    here = [i > 0 or n == 1 for i in range(n)]
    here = [h and (n < 3 or rng.random() < 0.7) for h in here]
    ones = [1.0 if h else 0.0 for h in here]
    absent = MetricSeries("crr", [rng.random() if h else 0.0 for h in here], ones,
                          [rng.random() if h else 0.0 for h in here], list(ones), sum(here))
    # a mean that never moves: every delta is a zero, whose sign must be sum()'s
    zeros = MetricSeries("field_f1", [0.0] * n, [1.0] * n, [-0.0] * n, [1.0] * n, n)  # differences of -0.0
    return [micro, micro_2, mean, absent, zeros]


EXACT = sys.version_info < (3, 12)  # plain left-to-right sum(): the pure loop and numpy add the very same way


def _hex(deltas: dict[str, list[float]]) -> dict[str, list[str]]:
    return {metric: [value.hex() for value in values] for metric, values in deltas.items()}


def _same(got: Any, expected: Any) -> bool:
    """Equal and written alike (``repr`` tells ``-0.0`` from ``0.0``); from Python 3.12 on, floats within 1e-12."""
    if EXACT:
        return bool(got == expected) and repr(got) == repr(expected)
    if isinstance(got, float) and isinstance(expected, float):
        return math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-15)
    if isinstance(got, dict) and isinstance(expected, dict):
        return got.keys() == expected.keys() and all(_same(got[key], expected[key]) for key in got)
    if isinstance(got, (list, tuple)) and isinstance(expected, (list, tuple)):
        return len(got) == len(expected) and all(_same(a, b) for a, b in zip(got, expected))
    return bool(got == expected)


def _differences(series: list[MetricSeries], n: int) -> dict[str, list[float]]:
    return {s.metric: [b - a for a, b in zip(s.old_num, s.new_num)] for s in series
            if s.n == n and set(s.old_den) == {1.0} and set(s.new_den) == {1.0}}


def _pure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bootstrap, "_numpy_deltas", lambda *args: None)


@pytest.mark.parametrize("n", [1, 2, 3, 17, 400])
@pytest.mark.parametrize("resamples", [1, 7, 8, 301])
def test_numpy_path_gives_the_pure_loops_deltas_and_intervals_exactly(n: int, resamples: int,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")
    series = _series(n, seed=n * 1000 + resamples)
    differences = _differences(series, n)
    monkeypatch.setattr(bootstrap, "_NUMPY_MIN_DRAWS", 0)
    fast = bootstrap._numpy_deltas(series, differences, n, random.Random("s"), resamples)
    assert fast is not None
    pure = bootstrap._pure_deltas(series, differences, n, random.Random("s"), resamples)
    assert _same(fast, pure)
    assert sum(map(len, pure.values())) > resamples  # several metrics resampled, not an empty comparison
    if n == 2:
        assert len(pure["cer"]) < resamples or resamples == 1  # resamples counting nothing are dropped on both paths

    intervals = paired_bootstrap_intervals(series, n, level=0.9, resamples=resamples, seed="seed")
    _pure(monkeypatch)
    assert _same(intervals, paired_bootstrap_intervals(series, n, level=0.9, resamples=resamples, seed="seed"))
    assert str(intervals["field_f1"]) == "(0.0, 0.0)"


@pytest.mark.parametrize("rows", [1, 3, 8, 13])
def test_numpy_chunks_draw_and_sum_like_one_pass(rows: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of a few resamples (under 8: the cumsum branch) with a shorter last one change no number: drawing a
    chunk's indices at once draws what the pure loop draws one resample at a time."""
    pytest.importorskip("numpy")
    n = 60
    series = _series(n, seed=rows)
    monkeypatch.setattr(bootstrap, "_NUMPY_MIN_DRAWS", 0)
    monkeypatch.setattr(bootstrap, "_NUMPY_CHUNK", n * rows)
    chunked = bootstrap._numpy_deltas(series, _differences(series, n), n, random.Random(5), 101)
    assert _same(chunked, bootstrap._pure_deltas(series, _differences(series, n), n, random.Random(5), 101))
    monkeypatch.setattr(bootstrap, "_NUMPY_CHUNK", 10**9)
    assert _hex(chunked) == _hex(bootstrap._numpy_deltas(series, _differences(series, n), n, random.Random(5), 101))


def test_compare_runs_gives_the_same_comparison_on_either_path(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")
    rng = random.Random(4)
    metrics = ("cer", "wer", "ned", "crr", "field_f1")

    def run(seed: int) -> dict[str, Any]:
        rng.seed(seed)
        return make_run([make_doc(f"d{i}", {m: rng.uniform(0, 0.3) for m in metrics if rng.random() < 0.9},
                                  engine=engine, size=rng.randint(20, 400))
                         for engine in ("tesseract", "trocr") for i in range(120)])

    old, new = run(1), run(2)
    monkeypatch.setattr(bootstrap, "_NUMPY_MIN_DRAWS", 0)
    fast = compare_runs(old, new, ["cer:0.01"], resamples=250, significance=0.05).to_dict()
    _pure(monkeypatch)
    pure = compare_runs(old, new, ["cer:0.01"], resamples=250, significance=0.05).to_dict()
    assert _same(fast, pure)
    assert sum(1 for a in pure["aggregates"] if a["interval"]) >= 8


def test_both_paths_keep_the_intervals_of_before_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pinned: the pure loop's intervals for this seed, computed (CPython 3.11) before the numpy path existed."""
    series = _series(50, seed=1)
    expected = {metric: tuple(float.fromhex(h) for h in pair) for metric, pair in PINNED.items()}
    _pure(monkeypatch)
    assert _same(paired_bootstrap_intervals(series, 50, level=0.95, resamples=200, seed="pinned"), expected)
    pytest.importorskip("numpy")
    monkeypatch.undo()
    monkeypatch.setattr(bootstrap, "_NUMPY_MIN_DRAWS", 0)
    assert _same(paired_bootstrap_intervals(series, 50, level=0.95, resamples=200, seed="pinned"), expected)


PINNED = {  # float.hex of (low, high) per metric
    "cer": ("-0x1.2ffc3bf44fee5p-3", "0x1.4cc5202082933p-3"),
    "wer": ("-0x1.15670eec98ef9p-2", "-0x1.810b303307ec2p-10"),
    "ned": ("-0x1.a06207d7be15ep-4", "0x1.1e3250f175463p-4"),
    "crr": ("-0x1.f43443b750b2dp-4", "0x1.85291001db53cp-3"),
    "field_f1": ("0x0.0p+0", "0x0.0p+0"),
}


def test_without_numpy_large_runs_take_the_pure_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    series = _series(30, seed=2)
    _pure(monkeypatch)
    expected = paired_bootstrap_intervals(series, 30, level=0.9, resamples=50, seed="x")
    monkeypatch.undo()
    monkeypatch.setattr(bootstrap, "_NUMPY_MIN_DRAWS", 0)
    monkeypatch.setitem(sys.modules, "numpy", None)  # `import numpy` raises ImportError, as without the extra
    assert bootstrap._numpy_deltas(series, {}, 30, random.Random(0), 50) is None
    assert paired_bootstrap_intervals(series, 30, level=0.9, resamples=50, seed="x") == expected


def test_numpy_is_imported_only_for_large_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    numpy = pytest.importorskip("numpy")
    imported: list[str] = []
    real_import = builtins.__import__

    def guarded_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "numpy":
            imported.append(name)
            return numpy  # the module already loaded: a second load of numpy's C extension would break it
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "numpy")
    monkeypatch.setattr(builtins, "__import__", guarded_import)
    series = _series(100, seed=3)
    threshold = bootstrap._NUMPY_MIN_DRAWS
    assert bootstrap._numpy_deltas(series, {}, 100, random.Random(0), threshold // 100 - 1) is None
    assert imported == []
    assert bootstrap._numpy_deltas(series, {}, 100, random.Random(0), threshold // 100) is not None
    assert imported == ["numpy"]


def test_overflowing_sums_give_the_pure_loops_inf_and_nan_without_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python's floats overflow to inf (and inf - inf to nan) silently; numpy would warn, so the numpy path must not."""
    pytest.importorskip("numpy")
    n = 40
    huge = [1e308] * n
    series = [MetricSeries("cer", list(huge), list(huge), [1.0] * n, list(huge), n),
              MetricSeries("ned", [-1e308] * n, [1.0] * n, list(huge), [1.0] * n, n)]
    differences = _differences(series, n)
    monkeypatch.setattr(bootstrap, "_NUMPY_MIN_DRAWS", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fast = bootstrap._numpy_deltas(series, differences, n, random.Random(1), 20)
    assert fast is not None
    assert _hex(fast) == _hex(bootstrap._pure_deltas(series, differences, n, random.Random(1), 20))
    assert set(_hex(fast)["cer"]) == {"nan"} and set(_hex(fast)["ned"]) == {"inf"}
