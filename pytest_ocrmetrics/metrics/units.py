"""Units of comparison: grapheme clusters, code points and words.

Characters are **grapheme clusters** by default (UAX #29 extended grapheme clusters, what a reader sees as one
character: "e" + U+0301 is one character). ``unit="codepoint"`` counts Python ``str`` elements, as jiwer, Hugging Face
``evaluate`` and torchmetrics do.

Words come from one of three tokenizers:

- ``"whitespace"`` (default): ``str.split()``: runs of any Unicode whitespace separate words.
- ``"unicode"``: UAX #29 word boundaries (via ``uniseg``, as dinglehopper does); a segment is dropped when every
  character in it is "unwanted" (Unicode categories M*, P*, S*, Z*, Cc, Cf: marks, punctuation, symbols,
  separators, controls, format characters), and private-use characters count as letters. CJK ideographs are one
  token each (UAX #29 never joins them). This is dinglehopper's ``words()``.
- ``"jiwer"``: jiwer's default word transform exactly: runs of two or more whitespace characters become one space,
  both ends are stripped, and the text is split on the space character only (so a lone tab or newline between two
  words does *not* split them, unlike ``"whitespace"``).

>>> len(graphemes("e\\u0301te\\u0301")), len(codepoints("e\\u0301te\\u0301"))
(3, 5)
>>> words("Hello, world!", tokenizer="unicode")
['Hello', 'world']
>>> words("Hello, world!")
['Hello,', 'world!']
>>> words("one\\ntwo", tokenizer="jiwer")
['one\\ntwo']
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Literal

import regex

__all__ = ["Unit", "Tokenizer", "UNITS", "TOKENIZERS", "graphemes", "codepoints", "words", "split", "check_text"]

Unit = Literal["grapheme", "codepoint"]
Tokenizer = Literal["whitespace", "unicode", "jiwer"]
UNITS: tuple[str, ...] = ("grapheme", "codepoint")
TOKENIZERS: tuple[str, ...] = ("whitespace", "unicode", "jiwer")

_GRAPHEME = regex.compile(r"\X")


def check_text(value: object, name: str = "text") -> str:
    """Return ``value`` if it is a ``str``; otherwise raise a ``TypeError`` that says what was given and what to do.

    Args:
        value: what was passed.
        name: its name in the message.

    Returns:
        ``value``, a ``str``.

    >>> check_text("abc")
    'abc'
    >>> check_text(b"abc", "reference")
    Traceback (most recent call last):
    ...
    TypeError: reference is bytes; decode it first, e.g. data.decode('utf-8')
    """
    if isinstance(value, str):
        return value
    if value is None:
        raise TypeError(f"{name} is None; pass a str (use '' for an empty page)")
    if isinstance(value, (bytes, bytearray)):
        raise TypeError(f"{name} is bytes; decode it first, e.g. data.decode('utf-8')")
    raise TypeError(f"{name} must be a str, not {type(value).__name__}")


def graphemes(text: str) -> list[str]:
    """Split ``text`` into extended grapheme clusters (UAX #29).

    Args:
        text: the text.

    Returns:
        Its grapheme clusters.

    >>> graphemes("ne\\u0301e") == ["n", "e\\u0301", "e"]
    True
    """
    if text.isascii() and "\r\n" not in text:
        # ASCII has no combining marks or joiners; CRLF is the only multi-code-point ASCII cluster
        return list(text)
    clusters: list[str] = _GRAPHEME.findall(text)
    return clusters


def codepoints(text: str) -> list[str]:
    """Split ``text`` into code points (Python ``str`` elements).

    Args:
        text: the text.

    Returns:
        Its code points.

    >>> codepoints("ne\\u0301")
    ['n', 'e', '́']
    """
    return list(text)


# --- the "unicode" tokenizer (dinglehopper's words()) -------------------------------------------------------------

_UNWANTED_CATEGORIES = frozenset("MPZS")
_UNWANTED_SUBCATEGORIES = frozenset(("Cc", "Cf"))


@lru_cache(maxsize=4096)
def _unwanted(ch: str) -> bool:
    category = unicodedata.category(ch)
    return category[0] in _UNWANTED_CATEGORIES or category in _UNWANTED_SUBCATEGORIES


def _is_word(segment: str) -> bool:
    """dinglehopper keeps a UAX #29 segment unless *every* character is unwanted (whitespace, punctuation, ...)."""
    return not all(_unwanted(ch) for ch in segment)


# In ASCII, UAX #29 joins letters, digits and "_" (WB5, WB8-WB10, WB13a/b), a single ":" "." "'" between two letters
# (WB6/WB7) and a single "," ";" "." "'" between two digits (WB11/WB12); everything else breaks. This regex gives
# exactly the segments uniseg returns for ASCII text that contain a letter, digit or "_" (tests check it against uniseg).
_ASCII_SEGMENT = re.compile(r"[A-Za-z0-9_]+(?:(?:(?<=[A-Za-z])[:.'](?=[A-Za-z])|(?<=[0-9])[,;.'](?=[0-9]))[A-Za-z0-9_]+)*")
_ASCII_ALNUM = re.compile(r"[A-Za-z0-9]")
# Separators at which segmentation can be split into independent runs (UAX #29 always breaks there; see _unicode_words).
_ASCII_SPACE_RUNS = re.compile(r"[ \t\n\r\x0b\x0c]+")
_PRIVATE_USE = regex.compile(r"[\ue000-\uf8ff]")


def _ascii_words(text: str) -> list[str]:
    return [w for w in _ASCII_SEGMENT.findall(text) if "_" not in w or _ASCII_ALNUM.search(w)]


def _uniseg_words(text: str) -> list[str]:
    from uniseg.wordbreak import words as uax29_words

    # dinglehopper treats Private Use Area characters as letters (Word_Break=ALetter). Segment a copy in which each
    # of them is replaced by "a" (also one code point, also ALetter), then cut the original at the same offsets.
    masked = _PRIVATE_USE.sub("a", text)
    out: list[str] = []
    start = 0
    for segment in uax29_words(masked):
        end = start + len(segment)
        piece = text[start:end]
        if _is_word(piece):
            out.append(piece)
        start = end
    return out


@lru_cache(maxsize=8192)
def _word_break(ch: str) -> str:
    """uniseg's Word_Break value of ``ch`` in capitals ("ALETTER"); private-use characters count as letters."""
    if "\ue000" <= ch <= "\uf8ff":
        return "ALETTER"
    from uniseg.wordbreak import word_break

    value = word_break(ch)
    return str(getattr(value, "name", value)).upper()


def _joins_preceding_space(run: str) -> bool:
    """Whether UAX #29 attaches ``run``'s first character to a space before it (WB3d, WB4)."""
    return _word_break(run[0]) in ("EXTEND", "FORMAT", "ZWJ", "WSEGSPACE")


# ASCII punctuation and symbols at the edge of a run never join the letters next to them there ("_" does: WB13a/b)
_EDGE = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^`{|}~")
_BODY_START = frozenset(("ALETTER", "NUMERIC"))
_BODY = frozenset(("ALETTER", "NUMERIC", "EXTEND", "FORMAT", "ZWJ"))


@lru_cache(maxsize=16384)
def _run_words(run: str) -> tuple[str, ...]:
    """The words of one whitespace-free, non-ASCII run (memoized: words repeat)."""
    start, end = 0, len(run)
    while start < end and run[start] in _EDGE:
        start += 1
    while end > start and run[end - 1] in _EDGE:
        end -= 1
    body = run[start:end]
    # letters and digits with marks/format characters in between, after a letter or digit, are one segment
    # (WB4, WB5, WB8-WB10); the ASCII punctuation around them is separate and never a word
    if body and _word_break(body[0]) in _BODY_START and all(_word_break(ch) in _BODY for ch in body):
        return (body,) if _is_word(body) else ()
    return tuple(_uniseg_words(run))


def _unicode_words(text: str) -> list[str]:
    if text.isascii():
        return _ascii_words(text)
    # UAX #29 always breaks before and after ASCII whitespace, except that Extend/Format/ZWJ characters after a space
    # or tab attach to it (WB4), and so does another space-like character (WB3d). Unless that happens, segment each
    # whitespace-free run on its own: ASCII runs with the regex above, plain words directly, the rest with uniseg
    # (pure Python, about 10 us per character).
    out: list[str] = []
    previous_separator = "\n"
    position = 0
    runs: list[tuple[str, str]] = []
    for match in _ASCII_SPACE_RUNS.finditer(text):
        if match.start() > position:
            runs.append((previous_separator, text[position:match.start()]))
        previous_separator = match.group()
        position = match.end()
    if position < len(text):
        runs.append((previous_separator, text[position:]))
    for separator, run in runs:
        if run.isascii():
            out.extend(_ascii_words(run))
            continue
        if separator[-1] in " \t" and _joins_preceding_space(run):
            return _uniseg_words(text)
        out.extend(_run_words(run))
    return out


_MULTIPLE_SPACES = re.compile(r"\s\s+")


def _jiwer_words(text: str) -> list[str]:
    return [w for w in _MULTIPLE_SPACES.sub(" ", text).strip().split(" ") if w]


def words(text: str, *, tokenizer: str = "whitespace") -> list[str]:
    """Split ``text`` into words with the named tokenizer (see the module docstring).

    Args:
        text: the text.
        tokenizer: ``"whitespace"`` (default), ``"unicode"`` or ``"jiwer"``.

    Returns:
        Its words.

    >>> words("Der schnelle [„braune“] Fuchs, 3,14 Meter", tokenizer="unicode")
    ['Der', 'schnelle', 'braune', 'Fuchs', '3,14', 'Meter']
    >>> words("東京都", tokenizer="unicode")
    ['東', '京', '都']
    """
    if tokenizer == "whitespace":
        return text.split()
    if tokenizer == "unicode":
        return _unicode_words(text)
    if tokenizer == "jiwer":
        return _jiwer_words(text)
    raise ValueError(f"unknown tokenizer {tokenizer!r}; valid: {', '.join(TOKENIZERS)}")


def split(text: str, unit: str) -> list[str]:
    """Split ``text`` into ``unit``: ``"grapheme"``, ``"codepoint"``, or a word tokenizer name prefixed ``word:``.

    Args:
        text: the text.
        unit: the unit (``"grapheme"``, ``"codepoint"``, ``"word:<tokenizer>"``).

    Returns:
        The units.

    >>> split("a b", "word:whitespace")
    ['a', 'b']
    """
    if unit == "grapheme":
        return graphemes(text)
    if unit == "codepoint":
        return codepoints(text)
    if unit.startswith("word:"):
        return words(text, tokenizer=unit[5:])
    raise ValueError(f"unknown unit {unit!r}; valid: {', '.join(UNITS)} or word:<tokenizer>")
