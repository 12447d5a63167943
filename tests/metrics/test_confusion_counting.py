"""The fast paths behind ``score_text``: confusion counting on the compared code points, word codes counted in C, and
token accuracy and SER from what score_text already has, each against the obvious computation."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ocrmetrics.metrics import text as m
from pytest_ocrmetrics.metrics.alignment import (
    Alignment,
    ClusterSequence,
    align,
    align_text,
    align_units,
    encode_units,
    unit_codes,
)
from pytest_ocrmetrics.metrics.units import words

SETTINGS = settings(max_examples=200, deadline=None)

# grapheme clusters of several code points (combining marks, CRLF, ZWJ emoji, flags, Hangul jamo, Devanagari),
# single code points that look alike, CJK, whitespace of every kind and line separators
_PIECES = ["a", "b", "O", "0", " ", "\n", "\r\n", "\t", "\u2028", "\x0b", "e\u0301", "\u00e9", "\u1100\u1161",
           "\u0915\u094d\u0937", "\U0001F469\u200d\U0001F4BB", "\U0001F1E9\U0001F1EA", "\u6771", "\U0001F600", "\x00"]
pieces = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)
unicode_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)  # no lone surrogates
texts = st.one_of(pieces, unicode_text, st.just(""))


def obvious_confusions(alignment: Alignment) -> Counter:
    """One Counter entry per edit operation, the units read one by one (decoding every placeholder)."""
    counts: Counter = Counter()
    for tag, i, j in alignment.editops:
        if tag == "replace":
            counts[(alignment.reference[i], alignment.hypothesis[j])] += 1
        elif tag == "delete":
            counts[(alignment.reference[i], None)] += 1
        else:
            counts[(None, alignment.hypothesis[j])] += 1
    return counts


@SETTINGS
@given(texts, texts)
def test_confusions_equal_the_obvious_loop(a: str, b: str) -> None:
    for unit in ("grapheme", "codepoint"):
        alignment = align_text(a, b, unit=unit)
        fast, slow = alignment.confusions, obvious_confusions(alignment)
        assert list(fast.items()) == list(slow.items())  # same counts, same order of first occurrence
        assert fast.most_common() == slow.most_common()
    word_alignment = align(words(a), words(b))
    assert list(word_alignment.confusions.items()) == list(obvious_confusions(word_alignment).items())


def test_confusions_of_clusters_are_decoded_once_per_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    reference, hypothesis = "ae\u0301b " * 50, "ae\u0300b " * 50
    alignment = align_text(reference, hypothesis)
    assert isinstance(alignment.reference, ClusterSequence) and isinstance(alignment.hypothesis, ClusterSequence)
    expected = obvious_confusions(alignment)

    def indexed(self: ClusterSequence, index: object) -> object:
        raise AssertionError("a ClusterSequence was indexed once per edit operation")

    monkeypatch.setattr(ClusterSequence, "__getitem__", indexed)
    assert list(alignment.confusions.items()) == list(expected.items())
    assert alignment.confusions == Counter({("e\u0301", "e\u0300"): 50})


def test_confusions_of_empty_and_identical_texts() -> None:
    assert align_text("", "").confusions == Counter()
    assert align_text("e\u0301", "e\u0301").confusions == Counter()
    assert list(align_text("", "e\u0301x").confusions.items()) == [((None, "e\u0301"), 1), ((None, "x"), 1)]
    assert list(align_text("xe\u0301", "").confusions.items()) == [(("x", None), 1), (("e\u0301", None), 1)]


@SETTINGS
@given(st.lists(st.sampled_from(["x", "y", "xy", "", "X"]), max_size=25),
       st.lists(st.sampled_from(["x", "y", "xy", "", "z"]), max_size=25))
def test_unit_codes_align_like_consecutive_codes(a: list[str], b: list[str]) -> None:
    ref_codes, hyp_codes, ref_distinct, distinct = unit_codes(a, b)
    assert (ref_distinct, distinct) == (len(set(a)), len(set(a) | set(b)))
    # the same equalities as encode_units' consecutive codes, so rapidfuzz returns the same edit operations
    consecutive = encode_units(a, b)
    assert [x == y for x in ref_codes + hyp_codes for y in ref_codes + hyp_codes] == \
        [x == y for x in consecutive[0] + consecutive[1] for y in consecutive[0] + consecutive[1]]
    assert align_units(a, b, ref_codes, hyp_codes) == align_units(a, b, *consecutive)
    assert align(a, b).editops == align_units(a, b, *consecutive).editops


def test_unit_codes_example() -> None:
    assert unit_codes(["to", "be", "or"], ["be", "not", "to"]) == ([0, 1, 2], [1, 4, 0], 3, 4)
    assert unit_codes([], []) == ([], [], 0, 0)


@SETTINGS
@given(texts, texts)
def test_score_text_token_accuracy_and_ser_equal_the_single_metrics(a: str, b: str) -> None:
    for tokenizer in ("whitespace", "jiwer"):
        s = m.score_text(a, b, tokenizer=tokenizer)
        assert s.token_accuracy == m.token_accuracy(a, b, tokenizer=tokenizer)
        ref_tokens, hyp_tokens = words(s.reference, tokenizer=tokenizer), words(s.hypothesis, tokenizer=tokenizer)
        assert s.token_accuracy.correct_tokens == len(set(ref_tokens) & set(hyp_tokens))
        assert s.ser == m.ser(a, b)
        assert s.confusion == m.confusion(a, b)


def test_score_text_ser_compares_stripped_lines() -> None:
    s = m.score_text(" a \n\n b\t\r\nc\u2028 \n", "a\nb \n  \nd")
    assert (s.ser.error_sentences, s.ser.total_sentences, s.ser.error_indices) == (1, 3, (2,))
    assert s.ser == m.ser(" a \n\n b\t\r\nc\u2028 \n", "a\nb \n  \nd")
