"""The alignment hint is chosen from a cheap bound, and never changes an alignment; counters are built on demand."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from pytest_ocrmetrics.metrics import alignment
from pytest_ocrmetrics.metrics.alignment import HINT_LONG_LENGTH, HINT_MIN_LENGTH, align_text, score_hint
from pytest_ocrmetrics.metrics.text import confusion, score_text, ser

# every code point, lone surrogates and control characters included
_ANY = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=())
_SMALL = st.sampled_from("abcde \n\x00\x1c\u0301\ud800")


def _noisy(text: str, rate: float, seed: int) -> str:
    rng = random.Random(seed)
    out = []
    for ch in text:
        r = rng.random()
        if r < rate / 3:
            out.append("#")  # substitution
        elif r < 2 * rate / 3:
            continue  # deletion
        elif r < rate:
            out.append(ch + "@")  # insertion
        else:
            out.append(ch)
    return "".join(out)


_PAGE = ("INVOICE #12345 TOTAL RM60.30 CASH 100.00 CHANGE 39.70 THANK YOU PLEASE COME AGAIN\n" * 40)[:3000]


def _recorded_hints(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    hints: list[object] = []
    editops = Levenshtein.editops

    class Recording:
        @staticmethod
        def editops(a: object, b: object, **kwargs: object) -> object:
            hints.append(kwargs.get("score_hint"))
            return editops(a, b, **kwargs)  # type: ignore[arg-type]

        distance = staticmethod(Levenshtein.distance)

    monkeypatch.setattr(alignment, "Levenshtein", Recording)
    return hints


def test_low_error_text_gets_its_exact_distance_as_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    hypothesis = _noisy(_PAGE, 0.02, 1)
    hints = _recorded_hints(monkeypatch)
    align_text(_PAGE, hypothesis)
    assert hints == [Levenshtein.distance(_PAGE, hypothesis)]


def test_high_error_text_gets_no_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    # a hint costs a wasted distance pass on text this different (the old |n - m| hint was always given)
    hypothesis = _noisy(_PAGE, 0.6, 2)
    hints = _recorded_hints(monkeypatch)
    align_text(_PAGE, hypothesis)
    assert hints == [None]


def test_hint_decisions() -> None:
    assert score_hint("a" * (HINT_MIN_LENGTH - 1), "b" * (HINT_MIN_LENGTH - 1)) is None  # short: never
    assert score_hint("a" * 500, "a" * 500) == 1  # identical: the smallest hint
    assert score_hint("a" * 500, "a" * 480 + "b" * 20) == 20  # within one machine word of band
    assert score_hint("a" * 500, "a" * 450 + "b" * 50) is None  # short text, distance over 31: no second probe
    long = "a" * HINT_LONG_LENGTH
    assert score_hint(long, long[:-100] + "b" * 100) == 100  # long text, at most 1/8 differs
    assert score_hint(long, long[:-200] + "b" * 200) is None  # more than 1/8 differs
    assert score_hint(long, long[: HINT_LONG_LENGTH // 2]) is None  # the length difference alone is too large
    words = list(range(600))
    assert score_hint(words, words[:590] + [-1] * 10) == 10  # word codes (lists of int) work the same


@settings(max_examples=150, deadline=None)
@given(st.text(_SMALL, min_size=0, max_size=40), st.integers(0, 2**32), st.floats(0, 0.6), st.integers(1, 80))
def test_hint_never_changes_the_edit_operations(seed_text: str, seed: int, rate: float, repeat: int) -> None:
    reference = (seed_text * repeat)[:3000] or "x" * 300
    rng = random.Random(seed)
    hypothesis = "".join(ch if rng.random() >= rate else rng.choice("abz\n\u0301") for ch in reference)
    assert Levenshtein.editops(reference, hypothesis, score_hint=score_hint(reference, hypothesis)).as_list() == \
        Levenshtein.editops(reference, hypothesis).as_list()


@settings(max_examples=60, deadline=None)
@given(st.text(_ANY, min_size=0, max_size=1200), st.text(_ANY, min_size=0, max_size=1200))
def test_hostile_text_aligns_as_without_a_hint(reference: str, hypothesis: str) -> None:
    a = align_text(reference, hypothesis, unit="codepoint")
    assert list(a.editops) == Levenshtein.editops(reference, hypothesis).as_list()


def test_confusion_is_counted_only_when_read() -> None:
    s = score_text(_PAGE, _noisy(_PAGE, 0.1, 3))
    assert "confusion" not in s.__dict__ and s.cer.alignment is not None
    assert "confusions" not in s.cer.alignment.__dict__  # the character alignment's Counter was not built either
    assert s.confusion == confusion(_PAGE, _noisy(_PAGE, 0.1, 3))
    assert s.to_dict()["confusion"] == s.confusion.to_dict()
    assert sum(Counter({(r, h): c for r, h, c in s.confusion.cells}).values()) == s.cer.errors


@settings(max_examples=100, deadline=None)
@given(st.text(_ANY, max_size=80), st.text(_ANY, max_size=80))
def test_line_error_rate_matches_the_plain_definition(reference: str, hypothesis: str) -> None:
    ref_lines = [line.strip() for line in reference.splitlines() if line.strip()]
    hyp_lines = [line.strip() for line in hypothesis.splitlines() if line.strip()]
    total = max(len(ref_lines), len(hyp_lines))
    ref_lines += [""] * (total - len(ref_lines))
    hyp_lines += [""] * (total - len(hyp_lines))
    errors = tuple(i for i, (r, h) in enumerate(zip(ref_lines, hyp_lines)) if r != h)
    result = ser(reference, hypothesis, normalize="none")
    assert result.error_indices == errors and result.total_sentences == total


@settings(max_examples=200, deadline=None)
@given(st.text(_ANY, max_size=60))
def test_joiner_lookup_reads_only_the_non_ascii_characters(text: str) -> None:
    expected = alignment._joiner_characters().intersection(text)
    assert alignment._joiners_in(text) == expected  # searched (few non-ASCII characters)
    searched_below = alignment._JOINER_TABLE_FROM
    try:
        alignment._JOINER_TABLE_FROM = 0  # the table's path, whatever the length
        assert alignment._joiners_in(text) == expected
    finally:
        alignment._JOINER_TABLE_FROM = searched_below


@settings(max_examples=200, deadline=None)
@given(st.text(_SMALL, max_size=400), st.text(_SMALL, max_size=400))
def test_operation_counts_from_the_substitutions_and_the_lengths(reference: str, hypothesis: str) -> None:
    ops = Levenshtein.editops(reference, hypothesis).as_list()
    tags = [tag for tag, _, _ in ops]
    expected = (tags.count("replace"), tags.count("delete"), tags.count("insert"))
    assert alignment._count(ops, len(reference), len(hypothesis)) == expected
    a = align_text(reference, hypothesis, unit="codepoint")
    assert (a.substitutions, a.deletions, a.insertions) == expected
