"""The text primitives of olmOCR-bench facts: its normalization, fuzzy occurrence search and repeat detection.

All three follow ``olmocr/bench/tests.py`` and ``olmocr/repeatdetect.py`` to the character, because a fact's verdict
must equal the benchmark's.

>>> normalize_text("**Bold** and *it*<br>“quoted” — done")
'Bold and it "quoted" - done'
>>> near_match_starts("cat", "a cat, a cat", 0)
[2, 9]
>>> ngram_repeats("abab", 3)
[1, 2, 1]
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = ["normalize_text", "normalized_output", "alnum_count", "near_match_starts", "ngram_repeats",
           "BENCHMARK_REPLACEMENTS", "FuzzySearchMissing"]


class FuzzySearchMissing(ImportError):
    """fuzzysearch (the ``facts`` extra) is needed for a fuzzy occurrence search and is not installed."""

BENCHMARK_REPLACEMENTS = {"‘": "'", "’": "'", "‚": "'", "“": '"', "”": '"', "„": '"', "＿": "_", "–": "-",
                          "—": "-", "‑": "-", "‒": "-", "−": "-", "\u00b5": "\u03bc"}
"""Typographic characters the benchmark folds to ASCII (and the micro sign to Greek mu)."""

_BR = re.compile(r"<br/?>")
_BOLD_STARS = re.compile(r"\*\*(.*?)\*\*")
_BOLD_UNDERSCORES = re.compile(r"__(.*?)__")
_B_TAG = re.compile(r"</?b>")
_I_TAG = re.compile(r"</?i>")
_BOLD = re.compile(r"(\*\*|__)(.*?)\1")
_ITALIC = re.compile(r"(\*|_)(.*?)\1")
_SPACES = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """The benchmark's ``normalize_text``: drop ``<br>``, bold/italic marks and ``<b>``/``<i>``, fold whitespace runs
    to one space, NFC, and fold typographic quotes and dashes (:data:`BENCHMARK_REPLACEMENTS`)."""
    text = _BR.sub(" ", text)
    text = _BOLD_STARS.sub(r"\1", text)
    text = _BOLD_UNDERSCORES.sub(r"\1", text)
    text = _B_TAG.sub("", text)
    text = _I_TAG.sub("", text)
    text = _BOLD.sub(r"\2", text)
    text = _ITALIC.sub(r"\2", text)
    text = _SPACES.sub(" ", text)
    text = unicodedata.normalize("NFC", text)
    for fancy, plain in BENCHMARK_REPLACEMENTS.items():
        text = text.replace(fancy, plain)
    return text


@functools.lru_cache(maxsize=16)
def normalized_output(text: str) -> str:
    """:func:`normalize_text` of a page's output, kept for the page's other facts: each ``present``, ``absent`` and
    ``order`` fact searches the same normalized output, which is normalized once (the last 16 outputs are kept, so
    a page's repeats are too; thread-safe)."""
    return normalize_text(text)


_NOT_ALNUM = re.compile(r"[\W_]+")


def alnum_count(text: str) -> int:
    """How many characters of ``text`` are alphanumeric (``str.isalnum``), counted in C: ``re``'s ``\\w`` is exactly
    ``isalnum`` or ``_`` for ``str`` patterns, so removing ``[\\W_]`` leaves the alphanumeric characters.

    >>> alnum_count("a_1 ß²!")
    4
    """
    return len(_NOT_ALNUM.sub("", text))


def near_match_starts(pattern: str, text: str, max_distance: int) -> list[int]:
    """Start offsets of the occurrences of ``pattern`` in ``text`` within ``max_distance`` Levenshtein edits.

    This is ``fuzzysearch.find_near_matches(pattern, text, max_l_dist=max_distance)`` (what the benchmark's ``order``
    test uses): with ``max_distance=0`` every exact occurrence (overlapping ones too); above, fuzzysearch itself when
    it is installed (the ``facts`` extra); without it :class:`FuzzySearchMissing` (its consolidation of overlapping
    candidates decides verdicts, so no look-alike stands in for it).
    """
    if not pattern:
        raise ValueError("the searched text is empty")
    if max_distance == 0:
        starts, index = [], text.find(pattern)
        while index >= 0:
            starts.append(index)
            index = text.find(pattern, index + 1)
        return starts
    try:
        from fuzzysearch import find_near_matches  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        raise FuzzySearchMissing("an order fact with max_diffs > 0 needs fuzzysearch: "
                                 "install pytest-ocrmetrics[facts]") from None
    return [match.start for match in find_near_matches(pattern, text, max_l_dist=max_distance)]


def ngram_repeats(text: str, max_ngram_size: int = 5) -> list[int]:
    """For n = 1..max, how many times the text's last n characters repeat back to back at its end (whitespace runs
    read as one space): ``olmocr.repeatdetect.RepeatDetector.ngram_repeats``."""
    result = [0] * max_ngram_size
    if not text:
        return result
    text = _SPACES.sub(" ", text)
    for size in range(1, max_ngram_size + 1):
        if len(text) < size:
            continue
        target = text[-size:]
        count = 0
        position = len(text) - size
        while position >= 0 and text[position:position + size] == target:
            count += 1
            position -= size
        result[size - 1] = count
    return result
