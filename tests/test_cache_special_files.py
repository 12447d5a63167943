"""A cache entry that is not a regular file (issue 20, A8): a FIFO left by a CI cache restore must never hang a run.

It is a miss with one warning saying what it is; the recomputed entry replaces it by an atomic rename (never a write
through the FIFO, which would block too). Every risky call runs under :func:`tests.hang_guard.within`.
"""

from __future__ import annotations

import stat
import warnings
from pathlib import Path

import pytest

from pytest_ocrmetrics.engines.cache import CachingEngine, OcrCacheWarning, OutputCache
from tests.hang_guard import make_fifo, within
from tests.helpers.engines import CountingEngine, doc


def test_a_fifo_cache_entry_is_a_miss_with_one_warning_and_is_replaced_never_read_or_written_through(
    tmp_path: Path,
) -> None:
    document = doc(tmp_path, "a.png")
    cache = OutputCache(tmp_path / "c")
    engine = CountingEngine()
    caching = CachingEngine(engine, cache)
    entry = cache.path_for(cache.key(document, engine))
    fifo = make_fifo(entry)
    assert not cache.contains(cache.key(document, engine))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        output = within(lambda: caching.recognize(document), fifos=(fifo,))
    messages = [str(w.message) for w in caught if issubclass(w.category, OcrCacheWarning)]
    assert messages == [f"OCR cache entry {entry} cannot be read: it is a FIFO (named pipe), not a regular file; "
                        "ignoring it, the output will be recomputed and the entry rewritten"]
    assert not output.cached and engine.calls == ["a.png"] and (cache.corrupt, cache.misses) == (1, 1)
    assert stat.S_ISREG(entry.lstat().st_mode)  # replaced by the new entry, not written through
    assert within(lambda: caching.recognize(document)).cached and engine.calls == ["a.png"]


def test_a_fifo_cache_entry_in_a_batch_is_a_miss_of_that_document_only(tmp_path: Path) -> None:
    from tests.helpers.engines import BatchingEngine

    documents = [doc(tmp_path, name) for name in ("a.png", "b.png")]
    cache = OutputCache(tmp_path / "c")
    engine = BatchingEngine()
    caching = CachingEngine(engine, cache)
    within(lambda: caching.recognize_batch([documents[1]]))
    fifo = make_fifo(cache.path_for(cache.key(documents[0], engine)))
    with pytest.warns(OcrCacheWarning, match="it is a FIFO"):
        outputs = within(lambda: caching.recognize_batch(documents), fifos=(fifo,))
    assert [output.cached for output in outputs] == [False, True] and engine.batches[-1] == ["a.png"]
