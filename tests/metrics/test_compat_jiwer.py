"""Peer compatibility with jiwer: cases from jiwer's own test suite, and random cross-checks against installed jiwer.

Settings that reproduce jiwer:
- ``cer(r, h, unit="codepoint", normalize="none")`` == ``jiwer.cer(r, h)`` for a non-empty reference and texts without
  leading/trailing whitespace (jiwer strips both ends); ``normalize="strip", empty_reference="jiwer"`` for any input.
- ``wer(r, h, tokenizer="whitespace", normalize="none")`` == ``jiwer.wer(r, h)`` for a non-empty reference when no
  lone tab/newline separates two words (jiwer splits on spaces only); ``tokenizer="jiwer", empty_reference="jiwer"``
  for any input.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ocrmetrics.metrics.text import cer, wer

jiwer = pytest.importorskip("jiwer")

EXACT_CER = {"unit": "codepoint", "normalize": "strip", "empty_reference": "jiwer"}
EXACT_WER = {"tokenizer": "jiwer", "normalize": "none", "empty_reference": "jiwer"}
PLAIN_CER = {"unit": "codepoint", "normalize": "none"}
PLAIN_WER = {"tokenizer": "whitespace", "normalize": "none"}


# jiwer tests/test_cer.py (test_input_gt_string_h_string, test_known_values) and tests/test_empty_ref.py
@pytest.mark.parametrize(
    ("reference", "hypothesis", "expected"),
    [
        ("This is a test", "This is a test", 0 / 14),
        ("This is a test", "", 14 / 14),
        ("This is a test", "This test", 5 / 14),
        ("X", "X", 0),
        ("X", "X X Y Y", 6),
        ("X Y X", "X Z", 3 / 5),
        ("X", "Y", 1),
        ("X", "Y Z", 3),
        ("a", "", 1),
        ("abc", "", 1),
    ],
)
def test_cer_cases_from_jiwer(reference: str, hypothesis: str, expected: float) -> None:
    assert cer(reference, hypothesis, **PLAIN_CER).value == pytest.approx(expected, abs=1e-16)
    assert cer(reference, hypothesis, **EXACT_CER).value == pytest.approx(expected, abs=1e-16)


# jiwer tests/test_empty_ref.py::test_cer_empty_ref
@pytest.mark.parametrize(("hypothesis", "expected"), [("", 0), ("a", 1), ("abd", 3)])
def test_cer_empty_reference_like_jiwer(hypothesis: str, expected: float) -> None:
    assert cer("", hypothesis, **EXACT_CER).value == expected


# jiwer tests/test_wer.py, tests/test_measures.py (known values from "From WER and RIL to MER and WIL")
@pytest.mark.parametrize(
    ("reference", "hypothesis", "expected"),
    [
        ("This is a test", "This is a test", 0),
        ("This is a test", "", 1),
        ("This is a test", "This test", 0.5),
        ("X", "X", 0),
        ("X", "X X Y Y", 3),
        ("X Y X", "X Z", 2 / 3),
        ("X", "Y", 1),
        ("X", "Y Z", 2),
        ("i am a short ground truth", "i am a considerably longer and very much incorrect hypothesis", 7 / 6),
    ],
)
def test_wer_cases_from_jiwer(reference: str, hypothesis: str, expected: float) -> None:
    assert wer(reference, hypothesis, **PLAIN_WER).value == pytest.approx(expected, abs=1e-16)
    assert wer(reference, hypothesis, **EXACT_WER).value == pytest.approx(expected, abs=1e-16)


# jiwer tests/test_empty_ref.py::test_empty_ref, test_empty_ref_more, test_empty_ref_empty_hyp
def test_wer_empty_reference_like_jiwer() -> None:
    assert wer("", "", **EXACT_WER).value == 0
    assert wer("", "hello", **EXACT_WER).value == 1
    for i in range(2, 11):
        r = wer("", " ".join(str(j) for j in range(i)), **EXACT_WER)
        assert (r.value, r.insertions) == (i, i)
    assert wer("hello", "", **EXACT_WER).deletions == 1


_PIECES = list("ab c\t\n  xyz.,") + ["\u00e9", "e\u0301", "\u3000", "\r\n", "\x1c", "\u00a0"]
texts = st.lists(st.sampled_from(_PIECES), max_size=25).map("".join)
SETTINGS = settings(max_examples=200, deadline=None)


@SETTINGS
@given(texts, texts)
def test_cer_equals_jiwer_on_random_text(reference: str, hypothesis: str) -> None:
    ours = cer(reference, hypothesis, **EXACT_CER)
    theirs = jiwer.process_characters(reference, hypothesis)
    assert ours.value == theirs.cer
    assert ours.errors == theirs.substitutions + theirs.deletions + theirs.insertions
    reference, hypothesis = reference.strip(), hypothesis.strip()
    if reference:
        assert cer(reference, hypothesis, **PLAIN_CER).value == jiwer.cer(reference, hypothesis)


@SETTINGS
@given(texts, texts)
def test_wer_equals_jiwer_on_random_text(reference: str, hypothesis: str) -> None:
    ours = wer(reference, hypothesis, **EXACT_WER)
    theirs = jiwer.process_words(reference, hypothesis)
    assert ours.value == theirs.wer
    assert ours.hits == theirs.hits
    assert ours.errors == theirs.substitutions + theirs.deletions + theirs.insertions
    # the whitespace tokenizer agrees with jiwer once every whitespace character is a space
    reference, hypothesis = " ".join(reference.split()), " ".join(hypothesis.split())
    if reference:
        assert wer(reference, hypothesis, **PLAIN_WER).value == jiwer.wer(reference, hypothesis)


@SETTINGS
@given(texts)
def test_jiwer_tokenizer_equals_jiwer_transform(text: str) -> None:
    from pytest_ocrmetrics.metrics.units import words

    assert [words(text, tokenizer="jiwer")] == jiwer.wer_default(text)


def test_known_difference_whitespace_tokenizer_splits_on_newlines() -> None:
    # documented: jiwer keeps "one\ntwo" as one word, our default tokenizer does not
    assert jiwer.wer("one\ntwo", "one two") == 2.0  # one reference word, substituted, plus an insertion
    assert wer("one\ntwo", "one two", **PLAIN_WER).value == 0.0
    assert wer("one\ntwo", "one two", **EXACT_WER).value == 2.0
