"""The merge index of a shard's run file: what ``ocrmetrics merge`` reads of each document, and a digest proving that
the documents' lines are the writer's text, so that the merge neither decodes them nor checks them as text.

A run file of an ``--ocr-shard`` run (one with a ``shard`` entry) ends with the member ``merge_index``, written after
the documents (:func:`index_pieces`, from :func:`~pytest_ocrmetrics.reporting.files.run_lines`)::

    "documents": [
    {...document line...},
    ...
    ],
    "merge_index": {"documents": [
    {"id": ..., "dataset": ..., "engine": ..., "outcome": ..., "metrics": {...}, "counts": {...}, ...},
    null,
    ...
    ], "sha256": "<64 hex digits>"}}

- ``documents`` has one **entry** per document, in the documents' order: the document as far as the merge reads it
  (:func:`merge_entry`: its identity, outcome, metrics, the counts of its micro-averaged metrics, ``cached``,
  ``truncated`` and ``tags``), or ``null`` for a document the merge must read itself (one with page-level facts,
  its own ``replaced_characters``, a negative count, a value of another type);
- ``sha256`` is the SHA-256 of the file's UTF-8 bytes from just after ``"documents": [`` to the end of the index's
  own ``documents`` array: the document lines, and the entries, exactly as written.

The merge (:func:`indexed_parts`) recomputes the digest over the same bytes: when it matches, every line is the
text the run-file writer wrote for its document (the text a full reading writes again, as every line the writer
writes is) and every entry is what the writer took from that document, so a line is copied and its entry read in
place of the line. A file with anything else there (a line edited by hand, an entry changed, another writer's
layout, no index) does not match and is read as before (:mod:`~pytest_ocrmetrics.runfile.verbatim`: each line
checked as text and decoded; or in full), so its documents and its messages are those of a full reading.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any, Iterable, Iterator, Mapping

from pytest_ocrmetrics.metrics.registry import METRICS
from pytest_ocrmetrics.runfile.record import OUTCOMES

__all__ = ["INDEX_KEY", "merge_entry", "index_entries", "index_pieces", "index_close", "hashed", "new_digest",
           "indexed_parts", "micro_counts", "counts_problem"]

#: the run file's member that holds the index (shard files only)
INDEX_KEY = "merge_index"

_DOCUMENTS_OPEN = b'\n"documents": ['
_INDEX_OPEN = f',\n"{INDEX_KEY}": {{"documents": ['
_INDEX_OPEN_BYTES = _INDEX_OPEN.encode("ascii")
# the file's last bytes: the index array's "]", its digest, the index's and the run's "}"
_TAIL_OPEN = b'], "sha256": "'
_TAIL_CLOSE = b'"}}\n'
_TAIL_LENGTH = len(_TAIL_OPEN) + 64 + len(_TAIL_CLOSE)
_HEX = frozenset(b"0123456789abcdef")
_PLAIN = (int, float)
_MICRO: dict[str, tuple[str, str]] = {}


def micro_counts() -> dict[str, tuple[str, str]]:
    """Each micro-averaged metric's (numerator, denominator) count names (the counts an entry keeps)."""
    if not _MICRO:
        _MICRO.update({name: (spec.numerator, spec.denominator) for name, spec in METRICS.items()
                       if spec.aggregation == "micro" and spec.numerator and spec.denominator})
    return _MICRO


def counts_problem(metrics: Any, counts: Mapping[str, Any], outcome: Any) -> tuple[str, str, Any] | None:
    """The first thing about a document's counts that no run writes, which the merge refuses: ``("negative",
    "METRIC/KEY", value)`` for a count below zero (the merged micro average would be wrong, even negative), or
    ``("lacking", METRIC, [keys])`` for a scored micro-averaged metric without its numerator or denominator (the
    summary sums them); None when there is none. Values that are not numbers are left to the structure checks.

    >>> counts_problem({"cer": 0.5}, {"cer": {"errors": -1, "reference_length": 2}}, "passed")
    ('negative', 'cer/errors', -1)
    >>> counts_problem({"cer": 0.5}, {"cer": {"errors": 1}}, "passed"), counts_problem({"cer": 0.5}, {}, "skipped")
    (('lacking', 'cer', ['reference_length']), None)
    """
    for metric, entry in counts.items():
        try:
            if not entry or min(entry.values()) >= 0:  # the usual case: one C-level pass per metric
                continue
        except TypeError:  # a value that is not a number (a run read without its structure checked)
            pass
        for key, value in entry.items():
            if isinstance(value, (int, float)) and value < 0:
                return "negative", f"{metric}/{key}", value
    if outcome in ("filtered", "skipped"):  # not read by the summary
        return None
    micro = micro_counts()
    for metric in metrics or ():
        keys = micro.get(metric)
        if keys is None:
            continue
        entry = counts.get(metric) or {}
        if keys[0] in entry and keys[1] in entry:  # the usual case
            continue
        return "lacking", metric, [key for key in keys if key not in entry]
    return None


def merge_entry(document: Any) -> dict[str, Any] | None:
    """What ``ocrmetrics merge`` reads of ``document``, the run file's document: ``id``, ``dataset``, ``engine``,
    ``outcome``, ``metrics``, ``counts`` with only the numerator and denominator of each micro-averaged metric it has,
    and ``cached``, ``truncated`` and ``tags`` when it has them. None when the merge must read the document itself:
    it has page-level facts (``details.facts``) or its own ``replaced_characters``, a count that is negative, or a
    value the run file's structure does not allow there (the merge then decodes its line and says what is wrong).

    Args:
        document: a document of a run file (a dict, as decoded).

    Returns:
        The entry, or None.

    >>> entry = merge_entry({"id": "a.png", "dataset": "d", "engine": "e", "outcome": "passed", "elapsed_s": 0.1,
    ...                      "metrics": {"cer": 0.5}, "counts": {"cer": {"errors": 1, "reference_length": 2, "hits": 1}}})
    >>> entry["metrics"], entry["counts"], "elapsed_s" in entry
    ({'cer': 0.5}, {'cer': {'errors': 1, 'reference_length': 2}}, False)
    """
    if type(document) is not dict or "replaced_characters" in document:
        return None
    details = document.get("details", {})
    if type(details) is not dict or "facts" in details:
        return None
    identity = [document.get(key) for key in ("id", "dataset", "engine", "outcome")]
    metrics, counts = document.get("metrics"), document.get("counts")
    if (any(type(value) is not str for value in identity) or identity[3] not in OUTCOMES
            or type(metrics) is not dict or type(counts) is not dict or not _plain_metrics(metrics)):
        return None
    kept = _kept_counts(metrics, counts)
    if kept is None:
        return None
    entry: dict[str, Any] = {"id": identity[0], "dataset": identity[1], "engine": identity[2], "outcome": identity[3],
                             "metrics": dict(metrics), "counts": kept}
    for key in ("cached", "truncated"):
        if key in document:
            if type(document[key]) is not bool:
                return None
            entry[key] = document[key]
    if "tags" in document:
        tags = document["tags"]
        if type(tags) is not list or any(type(tag) is not str for tag in tags):
            return None
        entry["tags"] = list(tags)
    return entry


def _plain_metrics(metrics: Mapping[Any, Any]) -> bool:
    return all(type(name) is str and type(value) in _PLAIN and math.isfinite(value) for name, value in metrics.items())


def _kept_counts(metrics: Mapping[str, Any], counts: Mapping[Any, Any]) -> dict[str, dict[str, Any]] | None:
    """The counts an entry keeps (each micro-averaged metric's numerator and denominator, as far as the document has
    them); None when some count is not a finite number of 0 or more, or a metric's counts are not an object."""
    for entry in counts.values():
        if type(entry) is not dict:
            return None
        for value in entry.values():
            if type(value) not in _PLAIN or not value >= 0 or not math.isfinite(value):
                return None
    micro = micro_counts()
    kept: dict[str, dict[str, Any]] = {}
    for name in metrics:
        keys = micro.get(name)
        if keys is not None and name in counts:
            entry = counts[name]
            kept[name] = {key: entry[key] for key in keys if key in entry}
    return kept


def index_entries(documents: Iterable[Any]) -> Iterator[dict[str, Any] | None]:
    """Each document's :func:`merge_entry`, in order: from the documents' own ``merge_entries()`` when they have it
    (the plugin's spooled documents: from what was kept of each record, without reading it back), else from each
    document."""
    entries = getattr(documents, "merge_entries", None)
    return entries() if callable(entries) else map(merge_entry, documents)


def index_pieces(entries: Iterable[dict[str, Any] | None]) -> Iterator[str]:
    """The index member's text up to the end of its ``documents`` array (what the digest covers last):
    ``,\n"merge_index": {"documents": [``, one entry per line, ``]``; the lines in pieces of a few hundred (each
    piece is cleaned, hashed and written as one)."""
    yield _INDEX_OPEN
    lines: list[str] = []
    first = True
    for entry in entries:
        lines.append(_encode(entry))
        if len(lines) == _PIECE_LINES:
            yield ("\n" if first else ",\n") + ",\n".join(lines)
            lines.clear()
            first = False
    if lines:
        yield ("\n" if first else ",\n") + ",\n".join(lines)
        first = False
    yield "]" if first else "\n]"


_PIECE_LINES = 512
# an entry's text: the run file's separators and UTF-8 (reporting/files.run_lines), no NaN (merge_entry has none)
_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, check_circular=False).encode


def index_close(digest: Any) -> str:
    """The index member's end, after :func:`index_pieces`: the digest, the index's ``}``."""
    return f', "sha256": "{digest.hexdigest()}"}}'


def hashed(pieces: Iterable[str | bytes], digest: Any) -> Iterator[str | bytes]:
    """``pieces``, each added to ``digest`` in UTF-8 as it passes, and passed on as those bytes (the file writer
    writes bytes as they are: each piece is encoded once). A piece holding what the file writer replaces (a lone
    surrogate, a non-character) is added as it is and passed on as text, for the writer to clean: the digest then
    does not match the file, which the merge reads as before."""
    from pytest_ocrmetrics.core.safe_text import clean_utf8

    for piece in pieces:
        if isinstance(piece, bytes):
            digest.update(piece)
            yield piece
            continue
        data = clean_utf8(piece)
        digest.update(data if data is not None else piece.encode("utf-8", "surrogatepass"))
        yield piece if data is None else data


def new_digest() -> Any:
    """The digest the index records (SHA-256)."""
    return hashlib.sha256()


def indexed_parts(data: bytes, placeholder: str) -> tuple[str, list[bytes], str] | None:
    """``data``, a run file's bytes, as the text around its documents array (``placeholder``, a JSON string, in its
    place, as :func:`~pytest_ocrmetrics.runfile.verbatim.split_documents` puts it, and without the merge index),
    each document's line (its UTF-8 bytes), and the text of the index's entries (a JSON array), when it ends with a
    merge index whose digest matches the bytes it covers (see the module docstring): then every line and every entry
    is the writer's text. None otherwise.

    Cut from the bytes and kept as bytes: the lines are neither decoded nor, when the merged file is written,
    encoded again (the writer wrote them in UTF-8, with nothing a report replaces: the digest was taken of the text
    before the file writer's cleaning, so a file it changed does not match); and they are split as many times as
    the index has entries, so the end of the documents is not searched for."""
    if len(data) < _TAIL_LENGTH or not data.endswith(_TAIL_CLOSE):
        return None
    tail = len(data) - _TAIL_LENGTH  # the "]" of the index's entries
    recorded = data[tail + len(_TAIL_OPEN):len(data) - len(_TAIL_CLOSE)]
    if data[tail:tail + len(_TAIL_OPEN)] != _TAIL_OPEN or not set(recorded) <= _HEX:
        return None
    at = data.find(_DOCUMENTS_OPEN)
    index_at = data.rfind(_INDEX_OPEN_BYTES, 0, tail)
    if at < 0 or index_at < at:
        return None
    start = at + len(_DOCUMENTS_OPEN)  # what the digest covers starts after the "["
    if hashlib.sha256(memoryview(data)[start:tail + 1]).hexdigest().encode("ascii") != recorded:
        return None
    try:
        entries = data[index_at + len(_INDEX_OPEN_BYTES) - 1:tail + 1].decode("utf-8")
        lines, end = _lines(data, start, index_at, entries.count("\n") - 1 if entries != "[]" else 0)
        outside = (data[:start - 1] + placeholder.encode("utf-8") + data[end:index_at] + b"}\n").decode("utf-8")
    except (UnicodeDecodeError, ValueError):
        return None
    return outside, lines, entries


def _lines(data: bytes, start: int, stop: int, count: int) -> tuple[list[bytes], int]:
    """The ``count`` document lines of ``data`` from ``start`` (just after the documents' ``[``), and where the
    documents array ends (just after its ``]``); ValueError when they are not there, one to a line."""
    if not count:
        if data[start:start + 1] != b"]":
            raise ValueError("not an empty array")
        return [], start + 1
    if data[start:start + 1] != b"\n":
        raise ValueError("not one document to a line")
    pieces = data[start + 1:stop].split(b",\n", count - 1)
    last = pieces[-1]
    cut = last.find(b"\n]")
    if len(pieces) != count or cut < 0:
        raise ValueError("fewer lines than entries")
    pieces[-1] = last[:cut]
    end = start + 1 + sum(map(len, pieces)) + 2 * (count - 1) + 2  # the last piece cut before its "\n]"
    if data.count(b"\n", start + 1, end - 2) != count - 1:  # a line break inside a document: not the writer's
        raise ValueError("a document over several lines")
    return pieces, end
