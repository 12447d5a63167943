"""The output cache: never run the same page through the same engine twice.

An entry is keyed by *content*: the SHA-256 of the image bytes, the engine's :meth:`identity` (engine, backend,
model id/revision, prompt, decoding parameters, library versions: everything that decides the output) and
:data:`CACHE_FORMAT_VERSION`. Moving or renaming a dataset keeps its entries; changing the prompt, the model or the
engine's version makes new ones. Secrets are never part of a key: engines keep API keys out of ``identity()``.

Layout: ``<directory>/<key[:2]>/<key>.json``, one small JSON file per output, written atomically (a temporary file
in the same folder, then :func:`os.replace`), so several pytest-xdist workers can write at once and a reader sees
either no entry or a whole one. An entry is checked strictly when read (:func:`output_from_entry`): a corrupt,
unreadable or wrongly shaped one (``"text": 12345``, ``NaN`` timings, a list instead of an object) is reported with
a :class:`OcrCacheWarning` naming the entry file, treated as a miss, and rewritten when the engine has produced the
output again, so a damaged cache never fails a run. An entry that is not a regular file (a FIFO left by a CI cache
restore, a device) is never opened for a blocking read: it is a miss with one warning saying what it is, and the
new entry replaces it (an atomic rename, never a write through it).

The image bytes hashed for the key are the bytes the engine reads: :class:`CachingEngine` reads the image once
(``Document.with_image_bytes``) and hands the engine the document carrying those bytes.

Example::

    >>> cache = OutputCache(tmp_path / "outputs")                     # doctest: +SKIP
    >>> engine = CachingEngine(TesseractEngine(), cache)              # doctest: +SKIP
    >>> engine.recognize(doc).cached, engine.recognize(doc).cached    # doctest: +SKIP
    (False, True)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import threading
import warnings
from pathlib import Path
from typing import Any, Mapping, Sequence

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.core.files import write_bytes_atomic
from pytest_ocrmetrics.datasets.base import NotRegularFileError, file_kind, read_regular
from pytest_ocrmetrics.engines.base import EngineWrapper, OcrEngine, OcrOutput, Word, with_image_bytes

__all__ = [
    "CACHE_FORMAT_VERSION",
    "OutputCache",
    "CachingEngine",
    "OcrCacheWarning",
    "CacheEntryError",
    "image_digest",
    "output_from_entry",
]

CACHE_FORMAT_VERSION = 1
"""Bumped when the entry layout or the meaning of a key changes; old entries are then simply never looked up."""


class OcrCacheWarning(UserWarning):
    """A cache entry could not be read or written; the run goes on without it."""


def image_digest(document: Document) -> str:
    """SHA-256 (hex) of the document's image bytes: ``document.image_bytes()``, i.e. the bytes it carries when it
    carries them (see :meth:`Document.with_image_bytes`), else the file's content, checked to be an image.

    >>> image_digest(doc)  # doctest: +SKIP
    '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'
    """
    return hashlib.sha256(document.image_bytes()).hexdigest()


class CacheEntryError(ValueError):
    """A cache entry that is valid JSON but not an entry of this cache (wrong key, wrong shape, wrong types)."""


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _string(value: Any, where: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise CacheEntryError(f"{where} must be a string, got {_kind(value)}")
    return value


def _number(value: Any, where: str, *, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise CacheEntryError(f"{where} must be a finite number, got {json.dumps(value) if _kind(value) == 'a number' else _kind(value)}")
    return float(value)


def _object(value: Any, where: str, *, optional: bool = False) -> dict[str, Any] | None:
    if value is None and optional:
        return None
    if not isinstance(value, dict):
        raise CacheEntryError(f"{where} must be an object, got {_kind(value)}")
    return value


def _word(value: Any, where: str) -> Word:
    item = _object(value, where)
    assert item is not None
    text = _string(item.get("text"), f"{where}.text")
    box = item.get("box")
    if box is not None:
        if not isinstance(box, list) or len(box) != 4:
            raise CacheEntryError(f"{where}.box must be null or a list of 4 numbers, got {_kind(box)}")
        box = tuple(_number(v, f"{where}.box[{i}]") for i, v in enumerate(box))
    confidence = _number(item.get("confidence"), f"{where}.confidence", optional=True)
    return Word(text, box, confidence)  # type: ignore[arg-type]


def output_from_entry(entry: Any, key: str) -> OcrOutput:
    """The :class:`OcrOutput` stored in a decoded cache entry for ``key``, checked strictly.

    Raises :class:`CacheEntryError` (one phrase saying which part is wrong) for anything :meth:`OutputCache.put` would
    not have written: another format or key, a missing ``output.text``, a value of the wrong type (``"text": 12345``,
    ``"confidence": "high"``), a non-finite number (``NaN`` timings), words of the wrong shape.

    >>> output_from_entry({"format": 1, "key": "k", "output": {"text": "A"}}, "k").text
    'A'
    >>> output_from_entry({"format": 1, "key": "k", "output": {"text": 12345}}, "k")
    Traceback (most recent call last):
    pytest_ocrmetrics.engines.cache.CacheEntryError: output.text must be a string, got a number
    """
    if not isinstance(entry, dict):
        raise CacheEntryError(f"the entry must be an object, got {_kind(entry)}")
    if entry.get("format") != CACHE_FORMAT_VERSION:
        raise CacheEntryError(f"format {json.dumps(entry.get('format'))} is not this cache's format {CACHE_FORMAT_VERSION}")
    if entry.get("key") != key:
        raise CacheEntryError("the entry's key is not the key its file name says")
    data = _object(entry.get("output"), "output")
    assert data is not None
    words = data.get("words")
    if words is not None and not isinstance(words, list):
        raise CacheEntryError(f"output.words must be null or a list, got {_kind(words)}")
    truncated = data.get("truncated", False)
    if not isinstance(truncated, bool):
        raise CacheEntryError(f"output.truncated must be true or false, got {_kind(truncated)}")
    elapsed_s = _number(data.get("elapsed_s", 0.0), "output.elapsed_s")
    assert elapsed_s is not None
    if elapsed_s < 0:
        raise CacheEntryError(f"output.elapsed_s must not be negative, got {elapsed_s:g}")
    return OcrOutput(
        text=_string(data.get("text"), "output.text") or "",
        engine=_string(data.get("engine", ""), "output.engine") or "",
        words=None if words is None else tuple(_word(w, f"output.words[{i}]") for i, w in enumerate(words)),
        confidence=_number(data.get("confidence"), "output.confidence", optional=True),
        fields=_object(data.get("fields"), "output.fields", optional=True),
        raw=_string(data.get("raw"), "output.raw", optional=True),
        elapsed_s=elapsed_s,
        truncated=truncated,
        metadata=_object(data.get("metadata", {}), "output.metadata") or {},
    )


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


class OutputCache:
    """A content-addressed store of :class:`OcrOutput` objects in ``directory``.

    ``refresh=True`` ignores existing entries (every lookup is a miss) but still writes new ones: the way to
    re-run an engine on purpose (``--ocr-refresh-cache``). ``hits`` and ``misses`` count lookups; ``writes`` counts
    stored entries and ``corrupt`` the entries that had to be ignored. All methods are thread-safe.
    """

    def __init__(self, directory: Path | str, *, refresh: bool = False) -> None:
        self.directory = Path(directory)
        self.refresh = refresh
        self.hits = 0
        self.misses = 0
        self.writes = 0
        self.corrupt = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OutputCache({str(self.directory)!r}, refresh={self.refresh}, hits={self.hits}, misses={self.misses})"

    # -- keys -----------------------------------------------------------------------------------------------------

    def key(self, document: Document, engine: OcrEngine, *, identity: Mapping[str, Any] | None = None) -> str:
        """The entry key for ``document`` run through ``engine``: a 64-character hex SHA-256.

        It covers the image bytes, ``engine.identity()`` (or ``identity``, when the caller already has it), the
        engine's per-document request identity when it has one (``engine.request_identity(document)``, e.g. the field
        names a field-extraction prompt asks for) and :data:`CACHE_FORMAT_VERSION`. The document's id, path and
        ground truth are not part of it.
        """
        material: dict[str, Any] = {
            "format": CACHE_FORMAT_VERSION,
            "image_sha256": image_digest(document),
            "engine": engine.identity() if identity is None else identity,
        }
        request_identity = getattr(engine, "request_identity", None)
        if callable(request_identity):
            extra = request_identity(document)
            if extra:
                material["request"] = extra
        return hashlib.sha256(_canonical(material).encode("utf-8")).hexdigest()

    def path_for(self, key: str) -> Path:
        """Where the entry for ``key`` lives."""
        return self.directory / key[:2] / f"{key}.json"

    # -- lookups --------------------------------------------------------------------------------------------------

    def get(self, key: str) -> OcrOutput | None:
        """The stored output for ``key`` (with ``cached=True``), or None on a miss, a refresh or a corrupt entry."""
        if self.refresh:
            self._count("misses")
            return None
        path = self.path_for(key)
        try:
            data = read_regular(path)  # a FIFO here would block for ever: opened without blocking, then checked
        except (FileNotFoundError, NotADirectoryError):
            self._count("misses")
            return None
        except NotRegularFileError as exc:
            self._corrupt(path, f"cannot be read: it is {file_kind(exc.mode)}, not a regular file")
            return None
        except OSError as exc:
            self._corrupt(path, f"cannot be read ({exc})")
            return None
        try:
            entry = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            self._corrupt(path, f"is corrupt ({type(exc).__name__}: {exc})")
            return None
        try:
            output = output_from_entry(entry, key)
        except CacheEntryError as exc:
            self._corrupt(path, f"is not a valid entry ({exc})")
            return None
        self._count("hits")
        return dataclasses.replace(output, cached=True)

    def contains(self, key: str) -> bool:
        """Whether an entry for ``key`` is stored: one ``stat``, nothing read or counted (False with ``refresh``).
        :meth:`get` still checks the entry when it is read."""
        return not self.refresh and self.path_for(key).is_file()

    def put(self, key: str, output: OcrOutput, *, document: Document | None = None) -> None:
        """Store ``output`` under ``key`` atomically; a failed write warns and is otherwise ignored.

        An output that :func:`output_from_entry` would refuse when reading it back (a ``NaN`` confidence, a value
        JSON cannot hold) is not written: it warns and is used uncached. A lone surrogate in the text is kept exactly
        (written as a ``\\u`` escape).
        """
        path = self.path_for(key)
        try:
            entry: dict[str, Any] = {"format": CACHE_FORMAT_VERSION, "key": key, "output": output.to_dict()}
            if document is not None:
                entry["document"] = document.id
            text = json.dumps(entry, ensure_ascii=False, allow_nan=False, default=str)
            try:
                data = text.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate in the output: \u escapes keep it exactly
                data = json.dumps(entry, ensure_ascii=True, allow_nan=False, default=str).encode("ascii")
            output_from_entry(json.loads(data), key)  # what get() would refuse is not worth writing
        except (ValueError, TypeError, AttributeError, RecursionError) as exc:
            warnings.warn(
                f"OCR output of document {document.id if document else '?'!r} cannot be cached ({exc}); "
                "it is used but not cached", OcrCacheWarning, stacklevel=2,
            )
            return
        try:
            write_bytes_atomic(path, data, prefix=f".{key[:16]}-")
        except OSError as exc:
            warnings.warn(
                f"could not write OCR cache entry {path}: {exc}; the output is used but not cached", OcrCacheWarning,
                stacklevel=2,
            )
            return
        self._count("writes")

    # -- helpers --------------------------------------------------------------------------------------------------

    def _count(self, counter: str) -> None:
        with self._lock:
            setattr(self, counter, getattr(self, counter) + 1)

    def _corrupt(self, path: Path, problem: str) -> None:
        with self._lock:
            self.corrupt += 1
            self.misses += 1
        warnings.warn(
            f"OCR cache entry {path} {problem}; ignoring it, the output will be recomputed and the entry rewritten",
            OcrCacheWarning,
            stacklevel=3,
        )
        return None


class CachingEngine(EngineWrapper):
    """Wraps an engine so each (image, engine identity) pair is recognised at most once.

    It implements the engine protocol itself: ``name``, ``identity()`` and ``close()`` pass through, ``recognize``
    looks the output up first and stores what the engine returns (errors are never cached). Other attributes
    (``concurrent``, ``batch_size``, ``cancel``, ...) pass through too, and ``recognize_batch`` exists exactly when
    the wrapped engine has it, running only the misses through the engine. The engine's identity is asked for once
    and kept: it is the same for every page, and some engines read package metadata or hash model files for it.
    """

    _own = ("engine", "cache")  # set by __init__

    def __init__(self, engine: OcrEngine, cache: OutputCache) -> None:
        self.engine = engine
        self.cache = cache
        self.name = engine.name
        self._identity: Mapping[str, Any] | None = None
        # keys found by has_cached(), by document: (image size, modification time, key); read by recognize()
        self._known: dict[tuple[Any, ...], tuple[int, int, str]] = {}
        self._known_lock = threading.Lock()
        if callable(getattr(engine, "recognize_batch", None)):
            self.recognize_batch = self._recognize_batch

    def __repr__(self) -> str:
        return f"CachingEngine({self.engine!r}, {self.cache!r})"

    def identity(self) -> Mapping[str, Any]:
        if self._identity is None:
            self._identity = self.engine.identity()
        return self._identity

    def _key(self, document: Document, repeat: int = 1) -> str:
        identity = self.identity()
        if repeat != 1:  # repeat r of a page (--ocr-repeats): its own entry; repeat 1 keeps the usual key
            identity = {**identity, "repeat": repeat}
        return self.cache.key(document, self.engine, identity=identity)

    @staticmethod
    def _known_key(document: Document) -> tuple[Any, ...]:
        return (document.id, str(document.image_path), document.page, document.render_longest_side)

    def has_cached(self, document: Document) -> bool:
        """Whether the cache holds the output for ``document`` (repeat 1): its image is read and hashed and the
        entry looked for (:meth:`OutputCache.contains`); the engine is not called and nothing is counted. An image
        that cannot be read is "not cached" (recognising it reports the error), and so is a PDF page: its image is
        rendered, which is work for the prefetch pool's threads, not for the start of the session.

        What a prefetch pool asks before queueing a document (:class:`~pytest_ocrmetrics.engines.prefetch.Prefetcher`): a
        cached one is read by its test in its own thread instead. The key is remembered, so :meth:`recognize` then
        reads the entry without reading and hashing the image again, while the file keeps its size and
        modification time.
        """
        if document.image_path is None or document.page is not None:
            return False
        try:
            before = os.stat(document.image_path)
            key = self._key(with_image_bytes(document))
        except Exception:  # noqa: BLE001 - recognising it will report what is wrong with the image
            return False
        if not self.cache.contains(key):
            return False
        with self._known_lock:
            self._known[self._known_key(document)] = (before.st_size, before.st_mtime_ns, key)
        return True

    def _remembered_hit(self, document: Document) -> tuple[OcrOutput | None, str | None]:
        """The entry :meth:`has_cached` found for ``document``, when its image has not changed since, and the key
        that was read (None when nothing was read): a corrupt entry read here is not read, and warned, again."""
        with self._known_lock:
            known = self._known.pop(self._known_key(document), None)
        if known is None or document.image_path is None:
            return None, None
        try:
            now = os.stat(document.image_path)
        except OSError:
            return None, None
        if (now.st_size, now.st_mtime_ns) != known[:2] or not self.cache.contains(known[2]):
            return None, None
        return self.cache.get(known[2]), known[2]

    def recognize(self, document: Document, *, repeat: int = 1) -> OcrOutput:
        """The engine's output for ``document``, from the cache when it has it. ``repeat`` (from 1) names one of
        several outputs of the same page (:class:`~pytest_ocrmetrics.engines.repeats.RepeatingEngine`): each repeat
        is stored under its own key, repeat 1 under the key a run without repeats uses."""
        read_key = None
        if repeat == 1 and self._known:
            hit, read_key = self._remembered_hit(document)
            if hit is not None:
                return hit
        document = with_image_bytes(document)  # read once: the key and the engine see the same bytes
        key = self._key(document, repeat)
        hit = self.cache.get(key) if key != read_key else None  # a corrupt entry is read and warned about once
        if hit is not None:
            return hit
        output = self.engine.recognize(document)
        self.cache.put(key, output, document=document)
        return output

    def _recognize_batch(self, documents: Sequence[Document], *, repeat: int = 1) -> list[OcrOutput | BaseException]:
        results: list[OcrOutput | BaseException | None] = [None] * len(documents)
        documents = list(documents)  # each miss is replaced by the copy carrying its image bytes
        todo: list[tuple[int, str]] = []  # (index, key) of the misses
        for index, document in enumerate(documents):
            try:
                document = documents[index] = with_image_bytes(document)
                key = self._key(document, repeat)
            except Exception as exc:  # unreadable image: that document fails, the batch goes on
                results[index] = exc
                continue
            hit = self.cache.get(key)
            if hit is not None:
                results[index] = hit
            else:
                todo.append((index, key))
        if todo:
            outputs = self.engine.recognize_batch([documents[index] for index, _ in todo])
            for (index, key), output in zip(todo, outputs):
                results[index] = output
                if isinstance(output, OcrOutput):
                    self.cache.put(key, output, document=documents[index])
        return [r if r is not None else RuntimeError("no result") for r in results]

    def close(self) -> None:
        self.engine.close()
