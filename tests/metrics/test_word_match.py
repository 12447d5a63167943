from __future__ import annotations

import doctest
import importlib
import json
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

word_match_module = importlib.import_module("pytest_ocrmetrics.metrics.word_match")  # the package exports the function under the same name
from pytest_ocrmetrics.metrics.word_match import MAX_DISTANCE, word_match


def test_docstring_examples() -> None:
    assert doctest.testmod(word_match_module).failed == 0


def test_quick_quik_follows_the_formula() -> None:
    r = word_match("quick", "quik")
    assert r.crr == pytest.approx(0.8)  # 1 - 1/5
    assert (r.exact_count, r.fuzzy_count) == (0, 1)
    assert (r.precision, r.recall, r.f1) == (0.0, 0.0, 0.0)  # exact matches only
    pair = r.fuzzy[0]
    assert (pair.reference, pair.hypothesis, pair.distance, pair.similarity) == ("quick", "quik", 1, pytest.approx(0.8))


def test_page_hand_computed() -> None:
    r = word_match("The quick brown fox jumps", "the quik brown dog jumps over")
    assert [p.reference for p in r.exact] == ["The", "brown", "jumps"]
    assert [(p.reference, p.hypothesis) for p in r.fuzzy] == [("quick", "quik")]
    assert r.unmatched_reference == ("fox",) and r.unmatched_reference_indices == (3,)
    assert r.unmatched_hypothesis == ("dog", "over") and r.unmatched_hypothesis_indices == (3, 5)
    assert r.precision == pytest.approx(3 / 6) and r.recall == pytest.approx(3 / 5)
    assert r.f1 == pytest.approx(6 / 11) == r.value
    assert r.crr == pytest.approx((3 + 0.8) / 4)
    assert r.counts() == {"exact": 3, "fuzzy": 1, "pairs": 4, "crr_sum": pytest.approx(3.8), "reference_words": 5,
                          "hypothesis_words": 6}


def test_duplicates_are_counted_as_a_multiset() -> None:
    r = word_match("the the cat", "the cat cat")
    assert r.exact_count == 2
    assert [(p.reference_index, p.hypothesis_index) for p in r.exact] == [(0, 0), (2, 1)]  # k-th with k-th
    assert r.unmatched_reference == ("the",) and r.unmatched_hypothesis == ("cat",)  # distance 3 > 1
    assert r.precision == r.recall == pytest.approx(2 / 3)


def test_case_and_punctuation_options() -> None:
    assert word_match("Hello world.", "hello world").f1 == 1.0
    r = word_match("Hello", "hello", case_sensitive=True)
    assert (r.exact_count, r.fuzzy_count, r.crr) == (0, 1, pytest.approx(0.8))
    r = word_match("end.", "end", ignore_punctuation=False)
    assert (r.fuzzy_count, r.crr) == (1, pytest.approx(0.75))
    # a punctuation-only word is dropped (and not counted) unless punctuation is kept
    assert word_match("a - b", "a b").reference_words == 2
    assert word_match("a - b", "a b", ignore_punctuation=False).reference_words == 3


def test_positions_refer_to_the_whitespace_split_of_the_input() -> None:
    r = word_match("a , b", "b yy")
    assert r.unmatched_reference_indices == (0,)
    assert r.exact[0].reference_index == 2


def test_fuzzy_ties_go_to_the_earlier_reference_then_hypothesis_word() -> None:
    r = word_match("cat bat", "hat")
    assert [(p.reference, p.hypothesis) for p in r.fuzzy] == [("cat", "hat")]
    r = word_match("cat", "hat bat")
    assert [(p.reference, p.hypothesis) for p in r.fuzzy] == [("cat", "hat")]


def test_lowest_distance_pairs_first() -> None:
    r = word_match("abcd abxx", "abxy", max_distance=2)
    assert [(p.reference, p.distance) for p in r.fuzzy] == [("abxx", 1)]  # not abcd (distance 2), though it is first
    assert r.unmatched_reference == ("abcd",)


def test_max_distance_limits_and_disables_fuzzy_matching() -> None:
    assert word_match("recognition", "recogniton", max_distance=0).fuzzy_count == 0
    assert word_match("color", "colour").fuzzy_count == 1
    assert word_match("kitten", "sitting").fuzzy_count == 0  # distance 3
    r = word_match("kitten", "sitting", max_distance=3)
    assert r.crr == pytest.approx(1 - 3 / 7)


def test_unicode_words_are_nfc_and_casefolded() -> None:
    assert word_match("e\u0301te\u0301", "\u00c9T\u00c9").f1 == 1.0
    assert word_match("STRASSE", "straße").f1 == 1.0


def test_empty_inputs() -> None:
    r = word_match("", "")
    assert (r.precision, r.recall, r.f1, r.crr) == (1.0, 1.0, 1.0, 1.0)
    r = word_match("", "word")
    assert (r.precision, r.recall, r.f1, r.crr) == (0.0, 0.0, 0.0, 0.0)
    r = word_match("word", "   ")
    assert (r.f1, r.crr, r.unmatched_reference) == (0.0, 0.0, ("word",))


def test_to_dict_is_json_safe() -> None:
    d = json.loads(json.dumps(word_match("quick fox", "quik").to_dict(), allow_nan=False))
    assert d["fuzzy"][0]["distance"] == 1 and d["unmatched_reference"] == ["fox"]


def test_bad_inputs() -> None:
    with pytest.raises(TypeError, match="reference is None"):
        word_match(None, "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="hypothesis must be a str, not list"):
        word_match("x", ["x"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_distance must be a whole number from 0 to 5"):
        word_match("x", "x", max_distance=-1)
    with pytest.raises(TypeError, match="max_distance must be an int"):
        word_match("x", "x", max_distance=1.5)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------- oracle


def _lev(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def _oracle(reference: str, hypothesis: str, max_distance: int) -> tuple[list[tuple[int, int]], list[tuple[int, int, int]]]:
    """Obviously-correct O(n^2) version of the documented algorithm (casefold, punctuation stripped)."""

    def forms(text: str) -> list[tuple[int, str]]:
        out = []
        for i, w in enumerate(text.split()):
            f = "".join(c for c in unicodedata.normalize("NFC", w) if not unicodedata.category(c).startswith("P"))
            if f:
                out.append((i, unicodedata.normalize("NFC", f.casefold())))
        return out

    ref, hyp = forms(reference), forms(hypothesis)
    used_r, used_h = set(), set()
    exact = []
    for r, (ri, rf) in enumerate(ref):
        for h, (hi, hf) in enumerate(hyp):
            if h not in used_h and rf == hf:
                used_r.add(r)
                used_h.add(h)
                exact.append((ri, hi))
                break
    candidates = sorted(
        (_lev(rf, hf), r, h)
        for r, (_, rf) in enumerate(ref) if r not in used_r
        for h, (_, hf) in enumerate(hyp) if h not in used_h and 1 <= _lev(rf, hf) <= max_distance
    )
    fuzzy = []
    for d, r, h in candidates:
        if r not in used_r and h not in used_h:
            used_r.add(r)
            used_h.add(h)
            fuzzy.append((ref[r][0], hyp[h][0], d))
    return exact, sorted(fuzzy)


_word = st.sampled_from(["cat", "bat", "hat", "at", "a", "I", "cart", "Cat.", "the", "thee", "é", "e", "straße", "--"])
_page = st.lists(_word, max_size=15).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(_page, _page, st.integers(0, 3))
def test_matches_a_slow_oracle(reference: str, hypothesis: str, max_distance: int) -> None:
    r = word_match(reference, hypothesis, max_distance=max_distance)
    exact, fuzzy = _oracle(reference, hypothesis, max_distance)
    assert [(p.reference_index, p.hypothesis_index) for p in r.exact] == exact
    assert sorted((p.reference_index, p.hypothesis_index, p.distance) for p in r.fuzzy) == fuzzy
    assert r.exact_count + r.fuzzy_count + len(r.unmatched_reference) == r.reference_words
    assert r.exact_count + r.fuzzy_count + len(r.unmatched_hypothesis) == r.hypothesis_words


@settings(max_examples=100, deadline=None)
@given(_page, _page)
def test_exact_counts_are_symmetric(reference: str, hypothesis: str) -> None:
    forward, backward = word_match(reference, hypothesis), word_match(hypothesis, reference)
    assert forward.exact_count == backward.exact_count
    assert forward.f1 == backward.f1
    assert forward.precision == backward.recall
    assert word_match(reference, reference).f1 == 1.0


def test_the_distance_range_is_document_002s_0_to_5() -> None:
    """Issue 20 C6: the page's threshold range 0-5 holds for the library too, refused with the page's sentence."""
    from pytest_ocrmetrics.evaluator.serve.api import MAX_THRESHOLD, ApiError, parse_options

    assert word_match("kitten", "sitting", max_distance=5).fuzzy_count == 1  # the top of the range works
    with pytest.raises(ValueError) as raised:
        word_match("x", "x", max_distance=6)
    assert str(raised.value) == ("max_distance must be a whole number from 0 to 5 (the largest edit distance of a "
                                 "fuzzy match), got 6")
    assert MAX_THRESHOLD == MAX_DISTANCE == 5
    with pytest.raises(ApiError) as page:
        parse_options({"threshold": 6})
    assert str(raised.value).removeprefix("max_distance") in str(page.value)  # the same sentence as the page's
