"""A run file's ``normalization`` object: what its settings mean, and whether two runs' numbers are comparable."""

from __future__ import annotations

from typing import Any, Mapping

from pytest_ocrmetrics.metrics.normalize import get_profile

#: What a run file's ``normalization`` object means when a key is absent (files of pytest-ocrmetrics 0.1.0).
_ABSENT = {"field_compare": "normalized", "definitions": 1}
#: word matching (crr, word_f1) when ``word_match`` or one of its keys is absent: what every run used before it was
#: configurable, the evaluator's defaults
_WORD_MATCH_DEFAULTS = {"distance": 1, "case_sensitive": False, "ignore_punctuation": True}


def describe_normalization(normalization: Mapping[str, Any], other: Mapping[str, Any] | None = None) -> str:
    """``normalization 'nfc', unit 'grapheme', tokenizer 'whitespace'``: a run file's ``normalization`` in words.

    The field comparison, the metric definitions version and the word matching are named too when they differ from
    ``other``.
    """
    words = [("normalization", "name"), ("unit", "unit"), ("tokenizer", "tokenizer")]
    words += [(word, key) for word, key in (("field comparison", "field_compare"), ("metric definitions", "definitions"),
                                            ("word matching", "word_match"))
              if other is not None and _setting(normalization, key) != _setting(other, key)]
    return ", ".join(f"{word} {str(_setting(normalization, key))!r}" for word, key in words)


def _setting(normalization: Mapping[str, Any], key: str) -> Any:
    if key == "word_match":  # one word: "distance=1 case_sensitive=False ignore_punctuation=True"
        given = normalization.get(key)
        settings = {**_WORD_MATCH_DEFAULTS, **(given if isinstance(given, Mapping) else {})}
        return " ".join(f"{name}={settings[name]}" for name in _WORD_MATCH_DEFAULTS)
    return normalization.get(key, _ABSENT.get(key))


def same_normalization(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Same profile, unit and tokenizer, same field comparison, metric definitions and word matching: comparable
    numbers."""
    def canonical(n: Mapping[str, Any]) -> tuple[str, ...]:
        name = str(n.get("name"))
        try:
            name = get_profile(name).name  # "NFC+casefold" and "nfc+casefold" are one profile
        except ValueError:
            pass
        keys = ("unit", "tokenizer", "field_compare", "definitions", "word_match")
        return (name, *(str(_setting(n, key)) for key in keys))

    return canonical(a) == canonical(b)
