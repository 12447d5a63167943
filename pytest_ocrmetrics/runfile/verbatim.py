"""Run-file documents kept as their JSON text: how ``ocrmetrics merge`` reads a shard without decoding every
document's big detail, and writes each document back byte for byte.

Every run file the plugin writes (``pytest --ocr-json``, :func:`~pytest_ocrmetrics.reporting.files.run_lines`) puts
one document per line, and each line is exactly ``json.dumps(document, ensure_ascii=False)``: the text the run-file
writer would write for that document again. A merge that decodes every document and encodes it again spends most of
its time on the documents' confusion triples and long texts, only to write the same characters. So a shard in that
layout is read here line by line, and a line is kept as its text when, and only when, writing its decoded document
would give that very text (a *canonical* line):

- the confusion triples and the ``reference`` and ``hypothesis`` texts are checked by regular expressions that accept
  only what the writer writes: strings with the writer's escapes only (``\\"``, ``\\\\``, ``\\n``, ``\\r``, ``\\t``,
  ``\\b``, ``\\f``, ``\\u00xx`` for the other control characters), no character a report replaces (non-characters), and
  whole numbers without a sign on zero or leading zeros, separated by ``", "``; they are not decoded;
- the rest of the line (identity, outcome, metrics, counts, checks, details, ...) is decoded, which also checks that
  the line is JSON, and encoded again: it must give the same text (same separators, escapes, number spelling, no
  duplicate key), hold no NaN or infinity and no character a report replaces.

A line that fails is not guessed at: the whole shard is then read the usual way
(:func:`~pytest_ocrmetrics.runfile.read.load_run`), so its documents, and any error message, are those of a shard
read in full. A file in another layout (another writer, edited by hand, pretty-printed) is read the usual way too.

A shard's file that ends with a matching merge index (:mod:`~pytest_ocrmetrics.runfile.merge_index`, what
``pytest --ocr-shard`` writes) is not checked here line by line: its lines are the writer's by their digest, kept as
their UTF-8 bytes, and what the merge reads of each is its entry in the index. Only a line whose entry is null is
checked and decoded as above.
"""

from __future__ import annotations

import json
import re
import secrets
from typing import Any, Callable, Iterator, Sequence

from pytest_ocrmetrics.core.collector import collector_paused
from pytest_ocrmetrics.core.safe_text import clean_text
from pytest_ocrmetrics.runfile.record import LazyDocuments

__all__ = ["VerbatimDocuments", "split_documents"]

# a placeholder no file holds (a fresh random token in each process): where a cut-out value lies in the decoded rest
_NONCE = f"ocrmetrics-verbatim-{secrets.token_hex(16)}"
# the run-file writer's text of a document (reporting/files.run_lines: ensure_ascii=False, default separators)
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, check_circular=False)
# a run of plain characters: no quote, backslash or control character, and none a report replaces (the
# non-characters; lone surrogates cannot come from a UTF-8 file); characters beyond the BMP are left to the decoding
# (a class of the 32 non-characters there makes the match half as fast again as one range)
_PLAIN = r'[^"\\\x00-\x1f\ufdd0-\ufdef\ufffe\uffff\U00010000-\U0010ffff]*+'
# a string as the writer writes it: its own escapes only (control characters other than \b\t\n\f\r as \u00xx)
_STRING = rf'"{_PLAIN}(?:\\(?:["\\bfnrt]|u00(?:0[0-7bef]|1[0-9a-f])){_PLAIN})*+"'
_WHOLE = r'(?:0|-?[1-9][0-9]*+)'
_TRIPLE = rf'\[{_STRING}, {_STRING}, {_WHOLE}\]'
# the values read as text, found after these keys (the plugin's order: reference, hypothesis, confusions)
_AS_TEXT: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("reference", ', "reference": ', re.compile(_STRING)),
    ("hypothesis", ', "hypothesis": ', re.compile(_STRING)),
    ("confusions", ', "confusions": ', re.compile(rf'\[(?:{_TRIPLE}(?:, {_TRIPLE})*+)?\]')),
)
_PLACEHOLDERS = {name: _ENCODER.encode(f"{_NONCE}-{name}") for name, _, _ in _AS_TEXT}
_DOCUMENTS_OPEN = '\n"documents": [\n'


class _NotFinite(Exception):
    """A NaN or infinity token: the line is left to the full reading, which names it."""


def _refuse_constant(name: str) -> float:
    raise _NotFinite(name)


# one decoder (json.loads with an option builds a new one per call)
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def _canonical(text: str) -> dict[str, Any] | None:
    """``text`` decoded, when it is a JSON object that the run-file writer writes as exactly ``text``, holds only
    finite numbers and no character a report replaces; else None."""
    try:
        value = _DECODER.decode(text)
    except (ValueError, RecursionError, _NotFinite):  # not JSON (JSONDecodeError is a ValueError), NaN, Infinity
        return None
    if type(value) is not dict:
        return None
    try:
        if _ENCODER.encode(value) != text:  # other separators, escapes, number spellings, a key twice
            return None
    except ValueError:  # a number too big for a float (1e999) decodes to infinity
        return None
    if not text.isascii() and clean_text(text)[1]:  # what the run's sanitising would replace (and count)
        return None
    return value


def _document_head(line: str) -> dict[str, Any] | None:
    """The document of a canonical ``line`` without the values checked as text only (``reference``, ``hypothesis``,
    ``confusions``: what the merge does not read); None when ``line`` is not canonical."""
    pieces: list[str] = []
    cut: list[str] = []
    position = 0
    for name, key, pattern in _AS_TEXT:
        at = line.find(key, position)
        if at < 0:
            continue
        start = at + len(key)
        match = pattern.match(line, start)
        if match is None:  # another shape (null, a float count, another escape): decoded with the rest
            continue
        pieces += (line[position:start], _PLACEHOLDERS[name])
        position = match.end()
        cut.append(name)
    if not cut:
        return _canonical(line)
    head = _canonical("".join(pieces) + line[position:])
    if head is None:
        return None
    if any(head.get(name) != f"{_NONCE}-{name}" for name in cut):  # a key of the same name inside another value
        return _canonical(line)
    for name in cut:
        del head[name]
    return head


def split_documents(text: str) -> tuple[str, list[str]] | None:
    """The run file ``text`` in the plugin's layout as its text with the documents array replaced by a placeholder
    string, and each document's line; None in another layout (no document, or a document over several lines).

    Decode the first to check the rest of the file; it holds :func:`documents_placeholder` at ``documents`` exactly
    when the array cut out was the run's ``documents``.
    """
    at = text.find(_DOCUMENTS_OPEN)
    if at < 0:
        return None
    start = at + len(_DOCUMENTS_OPEN)
    end = text.find("\n]", start)
    if end < 0:
        return None
    lines = _document_lines(text, at, start, end)
    if lines is None:
        block = text[start:end]
        lines = block.split(",\n")
        if block.count("\n") != len(lines) - 1:  # a line break inside a document: not the plugin's layout
            return None
    bracket = start - 2  # the "[" of "[\n"
    return text[:bracket] + _ENCODER.encode(documents_placeholder()) + text[end + 2:], lines


def _document_lines(text: str, at: int, start: int, end: int) -> list[str] | None:
    """The document lines ``text[start:end].split(",\\n")`` when no line holds a line break, taken from one split of
    the whole text (slicing the block out first copies every document once more); None where the documents array
    does not follow a ``,\\n`` (then the caller splits the block itself)."""
    if text[at - 1:at] != ",":
        return None
    pieces = text.split(",\n")
    opening = _DOCUMENTS_OPEN[1:]
    first = next((i for i, piece in enumerate(pieces) if piece.startswith(opening)), None)
    if first is None:
        return None
    lines = pieces[first:]
    lines[0] = lines[0][len(opening):]
    last = next((i for i, line in enumerate(lines) if "\n" in line), None)  # where "\n]" follows the last one
    if last is None:
        return None
    lines = lines[:last + 1]
    lines[last] = lines[last][:lines[last].index("\n")]
    # the same characters as the block: consecutive pieces of the text from ``start``, as long as it
    if sum(map(len, lines)) + 2 * (len(lines) - 1) != end - start:
        return None
    return lines


def documents_placeholder() -> str:
    """The string :func:`split_documents` puts where the documents array was."""
    return f"{_NONCE}-documents"


def read_lines(lines: Sequence[str | bytes], index: Sequence[Any] | None = None) -> VerbatimDocuments | None:
    """The documents of a run file's document ``lines`` (:func:`split_documents`), each kept as its text; None when
    some line is not canonical (see the module docstring).

    ``index``: the entries of the file's merge index, one per line, whose digest matched
    (:mod:`~pytest_ocrmetrics.runfile.merge_index`; the lines are then the file's UTF-8 bytes): a line with an entry
    is the writer's text, kept as its bytes, and its entry is what the merge reads of it (nothing of the line is
    decoded); a line whose entry is null is checked and decoded as without an index."""
    entries: list[tuple[str | bytes | None, dict[str, Any]]] = []
    # decoded JSON holds no cycles: the collector would only walk the growing heads again and again
    with collector_paused():
        for position, line in enumerate(lines):
            entry = None if index is None else index[position]
            if entry is not None:
                if type(entry) is not dict:
                    return None
                entries.append((line, entry))
                continue
            text = line if isinstance(line, str) else line.decode("utf-8")
            head = _document_head(text)
            if head is None:
                return None
            entries.append((text, head))
    return VerbatimDocuments(entries)


def decode_finite(text: str) -> Any:
    """``text`` decoded as JSON; None when it is not JSON or holds a NaN or infinity token."""
    try:
        return _DECODER.decode(text)
    except (ValueError, RecursionError, _NotFinite):
        return None


_Kept = tuple[str | bytes | None, dict[str, Any]]


class VerbatimDocuments(LazyDocuments[_Kept]):
    """Documents of a run file, each kept as its JSON text (or its UTF-8 bytes, from a shard's file whose merge index
    matched; or, for one read the usual way, as its dict).

    A ``Sequence`` of dicts: indexing and iteration decode a document's text afresh (every key, as a full read gives
    it). :meth:`heads` gives what a merge reads without decoding anything (for a document kept as text: its dict
    without ``reference``, ``hypothesis`` and ``confusions``). The run-file writer copies each text as it is
    (:meth:`json_texts`). Every text was checked to hold no character a report replaces, and a document read the
    usual way is kept here only when it holds none either, so the run's sanitising need not look at them
    (``replacements_counted``).
    """

    def __init__(self, entries: list[_Kept]) -> None:
        super().__init__(entries)
        self._entries = entries
        #: every document's counts were checked as the merge checks them (entries of a merge index that matched)
        self.counts_checked = False

    def _document(self, item: _Kept) -> dict[str, Any]:
        return _full(item)

    @property
    def entries(self) -> list[_Kept]:
        """``(text, head)`` per document (``text`` None: ``head`` is the whole document)."""
        return self._entries

    def heads(self) -> list[dict[str, Any]]:
        """Each document as far as a merge reads it (see the class docstring), in order; not copies."""
        return [head for _, head in self._entries]

    def json_texts(self, encode: Callable[[Any], str]) -> Iterator[str | bytes]:
        """Each document's text for the run-file writer (:func:`~pytest_ocrmetrics.reporting.files.run_lines`):
        the kept text, which is ``encode(document)`` for its ``encode`` (checked when it was read; kept bytes are
        its UTF-8, written as they are), or ``encode(document)`` for a document kept as a dict."""
        for text, document in self._entries:
            yield encode(document) if text is None else text


def _full(entry: _Kept) -> dict[str, Any]:
    text, document = entry
    return dict(document) if text is None else json.loads(text)
