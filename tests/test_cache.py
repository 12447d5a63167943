"""The content-addressed output cache: keys, hits, misses, refresh, corrupt entries and concurrent writers."""

from __future__ import annotations

import json
import multiprocessing
import threading
from typing import Any, Mapping

import pytest

import pytest_ocrmetrics.engines.cache as cache_module
from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import EngineError, OcrEngine, OcrOutput, Word
from pytest_ocrmetrics.engines.cache import CachingEngine, OcrCacheWarning, OutputCache
from tests.helpers.engines import PNG_MAGIC, BatchingEngine, CountingEngine, doc


def test_miss_then_hit_returns_the_same_output_marked_cached(tmp_path):
    engine = CountingEngine()
    cache = OutputCache(tmp_path / "c")
    caching = CachingEngine(engine, cache)
    document = doc(tmp_path, "a.png")
    first = caching.recognize(document)
    second = caching.recognize(document)
    assert engine.calls == ["a.png"]
    assert not first.cached and second.cached
    assert second.to_dict() == first.to_dict()
    assert (cache.hits, cache.misses, cache.writes) == (1, 1, 1)


def test_key_depends_on_image_bytes_identity_and_format_only(tmp_path, monkeypatch):
    cache = OutputCache(tmp_path / "c")
    engine = CountingEngine()
    a = doc(tmp_path, "a.png", "same bytes")
    moved = Document(id="elsewhere/b.png", dataset="other", image_path=doc(tmp_path, "b.png", "same bytes").image_path,
                     reference_text="different ground truth")
    assert cache.key(a, engine) == cache.key(moved, engine)
    assert cache.key(a, engine) != cache.key(doc(tmp_path, "c.png", "other bytes"), engine)
    assert cache.key(a, engine) != cache.key(a, CountingEngine(prompt="q"))
    before = cache.key(a, engine)
    monkeypatch.setattr(cache_module, "CACHE_FORMAT_VERSION", 99)
    assert cache.key(a, engine) != before


def test_changing_the_image_in_place_changes_the_key(tmp_path):
    cache = OutputCache(tmp_path / "c")
    engine = CountingEngine()
    document = doc(tmp_path, "a.png", "version one")
    first = cache.key(document, engine)
    document.image_path.write_bytes(PNG_MAGIC + b"version two, longer")
    assert cache.key(document, engine) != first


def test_refresh_ignores_entries_and_rewrites_them(tmp_path):
    document = doc(tmp_path, "a.png")
    CachingEngine(CountingEngine(), OutputCache(tmp_path / "c")).recognize(document)
    engine = CountingEngine()
    refreshing = OutputCache(tmp_path / "c", refresh=True)
    output = CachingEngine(engine, refreshing).recognize(document)
    assert engine.calls == ["a.png"] and not output.cached
    assert (refreshing.hits, refreshing.misses, refreshing.writes) == (0, 1, 1)
    later = OutputCache(tmp_path / "c")
    assert CachingEngine(CountingEngine(), later).recognize(document).cached


@pytest.mark.parametrize(
    "damage",
    [
        lambda path, text: path.write_text(text[: len(text) // 2]),  # cut short
        lambda path, text: path.write_bytes(b"\xff\xfe\x00garbage"),  # not UTF-8
        lambda path, text: path.write_text(json.dumps({"format": 1, "key": "someone else", "output": {}})),
        lambda path, text: path.write_text(json.dumps({"format": 1, "key": path.stem, "output": {"no": "text"}})),
        lambda path, text: path.write_text("[]"),
    ],
)
def test_a_corrupt_entry_warns_is_a_miss_and_is_rewritten(tmp_path, damage):
    document = doc(tmp_path, "a.png")
    cache = OutputCache(tmp_path / "c")
    engine = CountingEngine()
    caching = CachingEngine(engine, cache)
    caching.recognize(document)
    path = cache.path_for(cache.key(document, engine))
    damage(path, path.read_text())
    with pytest.warns(OcrCacheWarning, match="recomputed and the entry rewritten"):
        output = caching.recognize(document)
    assert not output.cached and engine.calls == ["a.png", "a.png"] and cache.corrupt == 1
    assert caching.recognize(document).cached  # the entry is whole again


def test_a_corrupt_entry_found_by_the_prefetch_check_is_warned_once(tmp_path):
    """has_cached (what the prefetch pool asks) finds the file; recognize reads it once: one warning, one corrupt
    count (issue 20 C7: it was read, and warned about, twice)."""
    document = doc(tmp_path, "a.png")
    cache = OutputCache(tmp_path / "c")
    engine = CountingEngine()
    caching = CachingEngine(engine, cache)
    caching.recognize(document)
    cache.path_for(cache.key(document, engine)).write_text("{cut")
    assert caching.has_cached(document)
    with pytest.warns(OcrCacheWarning) as warned:
        output = caching.recognize(document)
    assert [str(w.message) for w in warned if issubclass(w.category, OcrCacheWarning)] == [
        f"OCR cache entry {cache.path_for(cache.key(document, engine))} is corrupt (JSONDecodeError: Expecting "
        "property name enclosed in double quotes: line 1 column 2 (char 1)); ignoring it, the output will be "
        "recomputed and the entry rewritten"]
    assert not output.cached and engine.calls == ["a.png", "a.png"] and cache.corrupt == 1
    assert caching.recognize(document).cached  # rewritten


def test_an_unreadable_entry_is_treated_like_a_corrupt_one(tmp_path):
    document = doc(tmp_path, "a.png")
    cache = OutputCache(tmp_path / "c")
    engine = CountingEngine()
    path = cache.path_for(cache.key(document, engine))
    path.mkdir(parents=True)  # a directory where the file should be: reading fails with an OSError
    with pytest.warns(OcrCacheWarning, match="cannot be read"):
        assert cache.get(cache.key(document, engine)) is None


def test_errors_are_not_cached(tmp_path):
    document = doc(tmp_path, "bad.png")
    engine = CountingEngine(fail={"bad.png"})
    caching = CachingEngine(engine, OutputCache(tmp_path / "c"))
    for _ in range(2):
        with pytest.raises(EngineError):
            caching.recognize(document)
    assert engine.calls == ["bad.png", "bad.png"]
    assert not list((tmp_path / "c").rglob("*.json"))


def test_a_failed_write_warns_and_still_returns_the_output(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    caching = CachingEngine(CountingEngine(), OutputCache(blocker))
    with pytest.warns(OcrCacheWarning, match="could not write OCR cache entry"):
        output = caching.recognize(doc(tmp_path, "a.png"))
    assert output.text == "content of a.png"


def test_caching_engine_passes_the_engine_protocol_through(tmp_path):
    engine = CountingEngine()
    engine.concurrent = True  # type: ignore[attr-defined]
    caching = CachingEngine(engine, OutputCache(tmp_path))
    assert isinstance(caching, OcrEngine)
    assert caching.name == "counting" and caching.identity() == engine.identity() and caching.concurrent
    assert not hasattr(caching, "recognize_batch")
    caching.close()
    assert engine.closed


def test_caching_engine_batches_only_the_misses(tmp_path):
    engine = BatchingEngine()
    cache = OutputCache(tmp_path / "c")
    caching = CachingEngine(engine, cache)
    documents = [doc(tmp_path, f"{i}.png") for i in range(4)]
    caching.recognize(documents[1])
    results = caching.recognize_batch(documents)
    assert engine.batches == [["0.png", "2.png", "3.png"]]
    assert [r.cached for r in results] == [False, True, False, False]
    assert caching.batch_size == 8
    assert all(r.cached for r in caching.recognize_batch(documents))



def test_the_engine_identity_is_asked_once_per_caching_engine_not_once_per_page(tmp_path):
    class IdentityCounting(BatchingEngine):
        identity_calls = 0

        def identity(self) -> Mapping[str, Any]:
            IdentityCounting.identity_calls += 1
            return super().identity()

    engine = IdentityCounting()
    cache = OutputCache(tmp_path / "c")
    caching = CachingEngine(engine, cache)
    documents = [doc(tmp_path, f"{i}.png") for i in range(5)]
    caching.recognize_batch(documents[:3])
    for document in documents:
        caching.recognize(document)
    assert caching.identity() == engine.identity() and IdentityCounting.identity_calls == 2  # one for the check
    assert (cache.hits, cache.writes) == (3, 5)
    # the keys are the ones computed from the engine itself
    assert cache.get(cache.key(documents[4], CountingEngine())) is not None

def _writer(directory: str, key: str, rounds: int, worker: int) -> None:
    cache = OutputCache(directory)
    for round_number in range(rounds):
        cache.put(key, OcrOutput(text=f"worker {worker} round {round_number} " + "x" * 20_000))


def test_concurrent_writers_never_leave_a_partial_entry(tmp_path):
    key = "ab" + "0" * 62
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_writer, args=(str(tmp_path), key, 40, n)) for n in range(4)]
    reader = OutputCache(tmp_path)
    seen: list[str] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            output = reader.get(key)
            if output is not None:
                seen.append(output.text[:20])

    thread = threading.Thread(target=read)
    thread.start()
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(timeout=60)
    stop.set()
    thread.join()
    assert all(writer.exitcode == 0 for writer in writers)
    assert reader.corrupt == 0  # a reader never saw half an entry
    assert reader.get(key) is not None
    assert [p.name for p in (tmp_path / "ab").iterdir()] == [f"{key}.json"]  # no temporary files left behind


# -- entries of the wrong shape: valid JSON, never a valid output -----------------------------------------------------
def _poison(entry: dict, change: Any) -> Any:
    if callable(change):
        return change(entry)
    output = dict(entry["output"])
    output.update(change)
    return {**entry, "output": output}


WRONG_SHAPES = {
    "text-number": {"text": 12345},
    "text-null": {"text": None},
    "text-missing": lambda entry: {**entry, "output": {k: v for k, v in entry["output"].items() if k != "text"}},
    "entry-null": lambda entry: None,
    "entry-list": lambda entry: [entry],
    "output-null": lambda entry: {**entry, "output": None},
    "output-list": lambda entry: {**entry, "output": [entry["output"]]},
    "confidence-string": {"confidence": "high"},
    "elapsed-nan": {"elapsed_s": float("nan")},
    "elapsed-infinite": {"elapsed_s": float("inf")},
    "elapsed-string": {"elapsed_s": "1.5"},
    "elapsed-negative": {"elapsed_s": -1},
    "truncated-string": {"truncated": "yes"},
    "words-string": {"words": "w"},
    "word-not-object": {"words": ["w"]},
    "word-text-number": {"words": [{"text": 1, "box": None, "confidence": None}]},
    "word-box-short": {"words": [{"text": "w", "box": [1, 2], "confidence": None}]},
    "word-box-strings": {"words": [{"text": "w", "box": ["a", "b", "c", "d"], "confidence": None}]},
    "word-confidence-nan": {"words": [{"text": "w", "box": None, "confidence": float("nan")}]},
    "fields-list": {"fields": ["total"]},
    "metadata-list": {"metadata": [1]},
    "raw-number": {"raw": 5},
    "engine-null": {"engine": None},
    "format-missing": lambda entry: {k: v for k, v in entry.items() if k != "format"},
}


@pytest.mark.parametrize("change", WRONG_SHAPES.values(), ids=WRONG_SHAPES.keys())
def test_an_entry_of_the_wrong_shape_warns_naming_the_file_is_recomputed_and_rewritten(tmp_path, change):
    document = doc(tmp_path, "a.png")
    cache = OutputCache(tmp_path / "c")
    engine = CountingEngine()
    caching = CachingEngine(engine, cache)
    first = caching.recognize(document)
    path = cache.path_for(cache.key(document, engine))
    path.write_text(json.dumps(_poison(json.loads(path.read_text()), change)), encoding="utf-8")
    with pytest.warns(OcrCacheWarning) as record:
        output = caching.recognize(document)
    message = str(record[0].message)
    assert str(path) in message and "is not a valid entry" in message and "recomputed" in message
    assert output.to_dict() == first.to_dict() and not output.cached
    assert engine.calls == ["a.png", "a.png"] and cache.corrupt == 1
    hit = caching.recognize(document)  # rewritten: whole again
    assert hit.cached and hit.to_dict() == first.to_dict()


def test_output_from_entry_says_which_part_is_wrong() -> None:
    from pytest_ocrmetrics.engines.cache import CacheEntryError, output_from_entry

    good = {"format": cache_module.CACHE_FORMAT_VERSION, "key": "k", "output": {"text": "A", "elapsed_s": 2}}
    assert output_from_entry(good, "k") == OcrOutput(text="A", elapsed_s=2.0)
    with pytest.raises(CacheEntryError, match=r"^output\.confidence must be a finite number, got a string$"):
        output_from_entry(_poison(good, {"confidence": "high"}), "k")
    with pytest.raises(CacheEntryError, match=r"output\.elapsed_s must be a finite number, got NaN"):
        output_from_entry(_poison(good, {"elapsed_s": float("nan")}), "k")
    with pytest.raises(CacheEntryError, match=r"output\.words\[0\]\.box must be null or a list of 4 numbers"):
        output_from_entry(_poison(good, {"words": [{"text": "w", "box": {}}]}), "k")
    with pytest.raises(CacheEntryError, match="key"):
        output_from_entry(good, "other")


class FixedEngine(CountingEngine):
    def __init__(self, output: OcrOutput) -> None:
        super().__init__()
        self.output = output

    def recognize(self, document: Document) -> OcrOutput:
        self.calls.append(document.id)
        return self.output


def test_an_output_with_a_non_finite_number_is_used_but_not_cached(tmp_path):
    engine = FixedEngine(OcrOutput(text="A", confidence=float("nan")))
    cache = OutputCache(tmp_path / "c")
    with pytest.warns(OcrCacheWarning, match=r"OCR output of document 'a.png' cannot be cached"):
        assert CachingEngine(engine, cache).recognize(doc(tmp_path, "a.png")).text == "A"
    assert not list((tmp_path / "c").rglob("*.json")) and cache.writes == 0


@pytest.mark.parametrize("text", ["lone \ud800 surrogate", "nul \x00 esc \x1b bom \ufeff U+FFFE \ufffe", "\u202eRTL"])
def test_hostile_text_round_trips_through_the_cache_exactly(tmp_path, text):
    engine = FixedEngine(OcrOutput(text=text, words=(Word(text, None, None),), fields={text: text}, raw=text))
    caching = CachingEngine(engine, OutputCache(tmp_path / "c"))
    document = doc(tmp_path, "a.png")
    first = caching.recognize(document)
    again = caching.recognize(document)
    assert again.cached and again.to_dict() == first.to_dict() and again.text == text


# -- the bytes hashed are the bytes recognised -------------------------------------------------------------------------
def test_the_engine_recognises_the_bytes_the_key_was_computed_from_even_if_the_file_is_swapped(tmp_path):
    from pytest_ocrmetrics.engines.base import read_image

    document = doc(tmp_path, "a.png", "original")
    assert document.image_path is not None

    class SwappingEngine(CountingEngine):
        def recognize(self, document: Document) -> OcrOutput:  # the file changes between hashing and reading
            document.image_path.write_bytes(PNG_MAGIC + b"swapped")
            return OcrOutput(text=read_image(document)[len(PNG_MAGIC):].decode(), engine=self.name)

    cache = OutputCache(tmp_path / "c")
    engine = SwappingEngine()
    assert CachingEngine(engine, cache).recognize(document).text == "original"
    document.image_path.write_bytes(PNG_MAGIC + b"original")
    stored = cache.get(cache.key(document, engine))  # the entry for the original bytes holds their output
    assert stored is not None and stored.text == "original"


def test_a_file_that_is_not_an_image_never_reaches_the_engine(tmp_path):
    path = tmp_path / "img" / "list.png"
    path.parent.mkdir()
    path.write_text("/etc/hostname\n", encoding="utf-8")  # tesseract would OCR the files this "image" lists
    engine = CountingEngine()
    caching = CachingEngine(engine, OutputCache(tmp_path / "c"))
    with pytest.raises(EngineError, match=r"list\.png' of document 'list.png' .*is not an image: it starts with"):
        caching.recognize(Document(id="list.png", dataset="d", image_path=path))
    assert engine.calls == []


def test_a_batch_with_a_file_that_is_not_an_image_fails_only_that_document(tmp_path):
    engine = BatchingEngine()
    good = doc(tmp_path, "good.png")
    bad_path = tmp_path / "img" / "bad.png"
    bad_path.write_bytes(b"")
    results = CachingEngine(engine, OutputCache(tmp_path / "c")).recognize_batch(
        [good, Document(id="bad.png", dataset="d", image_path=bad_path)]
    )
    assert isinstance(results[0], OcrOutput) and results[0].text == "content of good.png"
    assert isinstance(results[1], EngineError) and "bad.png" in str(results[1]) and "the file is empty" in str(results[1])
    assert engine.batches == [["good.png"]]
