"""Benchmark: the paired bootstrap of compare_runs on a big run, pure Python against numpy (seeded).

For a few run sizes (documents x 2 engines, 5 metrics per document) prints the plain point comparison
(resamples=0), then 1000 resamples through the pure-Python loop and through numpy (the ``speed`` extra), in the same
process, and checks that both give the very same intervals.
Run: python benchmarks/bench_gating.py [DOCUMENTS ...]   (default: 100 2000 20000)
"""

from __future__ import annotations

import random
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from _markdown import docs_requested, write_printed  # --write-docs: the table into docs/performance.md

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from ocr_run_factory import make_doc, make_run  # noqa: E402

from pytest_ocrmetrics.gating import bootstrap, compare_runs  # noqa: E402

METRICS = ("cer", "wer", "ned", "crr", "field_f1")


def corpus(n: int, seed: int) -> dict:
    rng = random.Random(seed)
    docs = []
    for engine in ("tesseract", "trocr"):
        for i in range(n):
            docs.append(make_doc(f"doc{i:05d}", {m: rng.uniform(0.0, 0.2) for m in METRICS}, engine=engine,
                                 size=rng.randint(50, 2000)))
    return make_run(docs)


@contextmanager
def path(kind: str) -> Iterator[None]:
    """Force the bootstrap's pure-Python loop (``pure``) or its numpy path (``numpy``) whatever the run's size."""
    saved = bootstrap._numpy_deltas, bootstrap._NUMPY_MIN_DRAWS
    if kind == "pure":
        bootstrap._numpy_deltas = lambda *args: None
    else:
        bootstrap._NUMPY_MIN_DRAWS = 0
    try:
        yield
    finally:
        bootstrap._numpy_deltas, bootstrap._NUMPY_MIN_DRAWS = saved


def main(sizes: list[int], writing: bool = False) -> None:
    import numpy  # noqa: F401  (imported once here, so its import time is in no timing)

    for n in sizes:
        old, new = corpus(n, 1), corpus(n, 2)
        start = time.perf_counter()
        compare_runs(old, new, ["cer:0.005"], resamples=0)
        base = time.perf_counter() - start
        times: dict[str, float] = {}
        intervals = {}
        for kind in ("numpy", "pure", "numpy"):  # numpy on both sides of the pure loop: the best of two, on a busy box
            with path(kind):
                start = time.perf_counter()
                comparison = compare_runs(old, new, ["cer:0.005"], resamples=1000, significance=0.05)
                times[kind] = min(times.get(kind, float("inf")), time.perf_counter() - start)
            intervals[kind] = [(a.engine, a.metric, a.interval) for a in comparison.aggregates]
        assert intervals["numpy"] == intervals["pure"], "numpy and pure Python disagree"
        aggregates = len(comparison.aggregates)
        pure, fast = (max(times[kind] - base, 1e-9) for kind in ("pure", "numpy"))
        print(f"{n:>5} documents x 2 engines, {aggregates} aggregates, 1000 resamples: "
              f"compare_runs {times['pure']:.2f}s pure Python, {times['numpy']:.2f}s numpy "
              f"(point comparison {base:.2f}s; the bootstrap itself {pure:.2f}s vs {fast:.2f}s, "
              f"{pure / fast:.0f}x faster, same intervals)")
    if writing:
        write_printed("gating")


if __name__ == "__main__":
    writing = docs_requested()
    main([int(arg) for arg in sys.argv[1:]] or [100, 2000, 20000], writing)
