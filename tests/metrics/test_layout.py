from __future__ import annotations

import doctest
import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ocrmetrics.metrics import layout
from pytest_ocrmetrics.metrics.layout import (
    LAYOUT_METRICS,
    bag_of_words,
    char_lcs_ratio,
    character_accuracy,
    layout_scores,
    lcs_ratio,
    ngram_overlap,
    sequence_accuracy,
    word_set_overlap,
)
from pytest_ocrmetrics.metrics.text import cer


def test_docstring_examples() -> None:
    assert doctest.testmod(layout).failed == 0


# ---------------------------------------------------------------------------------------------------- bag of words


def test_bag_of_words_hand_computed() -> None:
    # ref words: the x2, cat, sat, end ; hyp: the, cat x2, mat, end  -> common: the 1, cat 1, end 1 = 3
    r = bag_of_words("The cat sat, the end", "the CAT cat mat end.")
    assert (r.matched, r.reference_count, r.hypothesis_count) == (3, 5, 5)  # the, cat, end
    assert (r.precision, r.recall, r.f1) == (0.6, 0.6, 0.6)
    assert r.counts() == {"matched": 3, "reference": 5, "hypothesis": 5, "f1_numerator": 6, "f1_denominator": 10}


def test_bag_of_words_ignores_order_case_and_punctuation() -> None:
    assert bag_of_words("TOTAL: 12.50", "1250 total").f1 == 1.0  # "12.50" -> "1250": punctuation is removed
    assert bag_of_words("Straße", "STRASSE").f1 == 1.0  # casefold
    r = bag_of_words("a b", "b a c")
    assert (r.precision, r.recall) == (2 / 3, 1.0)


@given(st.lists(st.sampled_from(["a", "b", "c", "dd", "é", "x"]), max_size=30),
       st.lists(st.sampled_from(["a", "b", "c", "dd", "é", "y"]), max_size=30))
def test_bag_of_words_matches_the_multiset_intersection(ref: list[str], hyp: list[str]) -> None:
    """The matched count summed in C equals the size of ``Counter(ref) & Counter(hyp)`` (the obvious oracle), with
    either side the larger bag."""
    expected = sum((Counter(ref) & Counter(hyp)).values())
    assert layout._bag_overlap(ref, hyp, "x").matched == expected
    assert layout._bag_overlap(hyp, ref, "x").matched == expected
    assert bag_of_words(" ".join(ref), " ".join(hyp)).matched == expected


def test_bag_of_words_empty_policy() -> None:
    assert bag_of_words("", "").f1 == 1.0
    assert bag_of_words("...", "!!").f1 == 1.0  # no words left on either side
    r = bag_of_words("", "word")
    assert (r.precision, r.recall, r.f1) == (0.0, 0.0, 0.0)
    assert bag_of_words("word", "").f1 == 0.0


def test_bag_of_words_normalize_option() -> None:
    assert bag_of_words("Total", "total", normalize="none").f1 == 0.0
    assert bag_of_words("Total", "total").normalize == "nfc+casefold+punctuation"


# ---------------------------------------------------------------------------------------------------- n-grams


def test_bigrams_and_trigrams_hand_computed() -> None:
    ref, hyp = "the quick brown fox jumps", "the quick fox jumps brown"
    # bigrams ref: the-quick quick-brown brown-fox fox-jumps ; hyp: the-quick quick-fox fox-jumps jumps-brown
    r2 = ngram_overlap(ref, hyp, n=2)
    assert (r2.matched, r2.reference_count, r2.hypothesis_count, r2.f1) == (2, 4, 4, 0.5)
    assert r2.unit == "2-gram"
    # trigrams ref: t-q-b q-b-f b-f-j ; hyp: t-q-f q-f-j f-j-b -> none shared
    r3 = ngram_overlap(ref, hyp, n=3)
    assert (r3.matched, r3.reference_count, r3.f1) == (0, 3, 0.0)
    assert ngram_overlap(ref, hyp, n=1).f1 == bag_of_words(ref, hyp).f1 == 1.0


def test_ngram_value_is_the_specification_overlap_not_the_f1() -> None:
    # issue 20 C3: "a b c d" vs "a b": 1 of 3 reference bigrams found; the F1 would be 2*1/(3+1) = 0.5
    r = ngram_overlap("a b c d", "a b", n=2)
    assert (r.value, r.overlap, r.f1) == (1 / 3, 1 / 3, 0.5)
    spec = ngram_overlap("hello world from biblicus", "hello world biblicus from", n=2)  # document 001's example
    assert spec.value == pytest.approx(0.333, abs=5e-4)
    assert ngram_overlap("the quick brown fox", "the brown quick fox", n=3).value == 0.0  # its trigram example
    assert ngram_overlap("a b c", "a c b", n=2).value == 0.0  # its "N-gram calculation" example
    assert layout_scores("a b c d", "a b", ["bigram_overlap"])["bigram_overlap"][0] == r.value  # the registry's
    assert bag_of_words("a b c d", "a b").value == bag_of_words("a b c d", "a b").f1  # other overlaps keep the F1


def test_ngram_duplicates_are_a_multiset() -> None:
    r = ngram_overlap("a b a b", "a b x", n=2)  # ref: ab x2, ba ; hyp: ab, bx
    assert (r.matched, r.reference_count, r.hypothesis_count) == (1, 3, 2)


def test_ngram_texts_shorter_than_n() -> None:
    assert ngram_overlap("hello", "hello", n=2).f1 == 1.0
    assert ngram_overlap("hello", "world", n=2).f1 == 0.0
    assert ngram_overlap("", "", n=3).f1 == 1.0
    assert ngram_overlap("a b", "a b c", n=3).f1 == 0.0  # only one side has a trigram


def test_ngram_bad_n() -> None:
    with pytest.raises(ValueError, match="n must be >= 1"):
        ngram_overlap("a", "a", n=0)
    with pytest.raises(TypeError, match="n must be an int"):
        ngram_overlap("a", "a", n=2.0)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------------- set-based (spec)


def test_set_based_metrics_follow_the_specification_examples() -> None:
    # F1 example: "hello world from biblicus" vs "hello world form": P 2/3, R 2/4, F1 0.571
    r = word_set_overlap("hello world from biblicus", "hello world form")
    assert (r.matched, r.reference_count, r.hypothesis_count) == (2, 4, 3)
    assert (r.precision, r.recall) == (2 / 3, 0.5)
    assert round(r.f1, 3) == 0.571
    # precision example: 3 of 4 extracted words correct; recall example: 3 of 5 ground-truth words found
    assert word_set_overlap("hello world from biblicus", "hello world form biblicus").precision == 0.75
    assert word_set_overlap("hello world from biblicus system", "hello world biblicus").recall == 0.6
    # "Hello, World!" and "hello world" normalize to the same words
    assert word_set_overlap("Hello, World!", "hello world").f1 == 1.0


def test_set_based_differs_from_bag_of_words_on_repeated_words() -> None:
    ref, hyp = "the the the cat", "the cat"
    sets, bags = word_set_overlap(ref, hyp), bag_of_words(ref, hyp)
    assert (sets.precision, sets.recall, sets.f1) == (1.0, 1.0, 1.0)  # {the, cat} == {the, cat}
    assert (bags.precision, bags.recall) == (1.0, 0.5)  # "the" x3 against x1
    assert sets.unit == "word set" and sets.counts()["reference"] == 2


def test_set_based_empty_policy() -> None:
    assert word_set_overlap("", "").f1 == 1.0
    assert word_set_overlap("...", "x").precision == 0.0
    assert word_set_overlap("x", "").recall == 0.0


# ---------------------------------------------------------------------------------------------------- sequence accuracy


def test_sequence_accuracy_is_positional_per_the_specification() -> None:
    # the specification's example: positions 0 ("hello") and 3 ("biblicus") match: 2/4 (the document says 1/4,
    # but its own formula, Correct_Position_Words / Total_Ground_Truth_Words, gives 2/4)
    r = sequence_accuracy("hello world from biblicus", "hello form world biblicus")
    assert (r.position_matches, r.reference_words, r.hypothesis_words) == (2, 4, 4)
    assert r.value == 0.5
    assert r.counts() == {"position_matches": 2, "reference_words": 4}


def test_sequence_accuracy_differs_from_the_old_lcs_based_score() -> None:
    # one inserted word at the start shifts every word: positional 0/4, while LCS (lcs_ratio) keeps all 4
    assert sequence_accuracy("a b c d", "x a b c d").value == 0.0
    assert lcs_ratio("a b c d", "x a b c d").value == 1.0
    # two columns swapped: nothing in place, LCS keeps one column
    assert sequence_accuracy("a b c d", "c d a b").value == 0.0
    assert lcs_ratio("a b c d", "c d a b").value == 0.5
    # a shorter hypothesis: only the positions it has can match; extra hypothesis words do not count
    assert sequence_accuracy("a b c d", "a b").value == 0.5
    assert sequence_accuracy("a b", "a b c d").value == 1.0


def test_sequence_accuracy_empty_policy() -> None:
    assert sequence_accuracy("", "").value == 1.0
    assert sequence_accuracy("", "x").value == 0.0
    assert sequence_accuracy("x", "").value == 0.0


# ---------------------------------------------------------------------------------------------------- LCS ratio


def test_lcs_ratio_is_over_words_per_the_specification() -> None:
    # the specification's example: LCS "the brown fox" (or "the quick fox"), 3 of 5 reference words
    r = lcs_ratio("the quick brown fox jumps", "the brown quick fox")
    assert (r.lcs_words, r.reference_words, r.hypothesis_words) == (3, 5, 4)
    assert r.value == 0.6
    r = lcs_ratio("one two three four", "one three two four five")
    assert r.value == 0.75 and r.counts() == {"lcs_words": 3, "reference_words": 4}


def test_lcs_ratio_differs_from_the_character_level_variant() -> None:
    ref, hyp = "the quick brown fox jumps", "the brown quick fox"
    assert lcs_ratio(ref, hyp).value == 0.6
    char = char_lcs_ratio(ref, hyp)  # 2 * LCS / (25 + 19) over characters: a different number
    assert char.value == pytest.approx(2 * char.lcs / 44) and char.value != 0.6
    assert lcs_ratio("kitten", "sitting").value == 0.0  # one word each, different
    assert char_lcs_ratio("kitten", "sitting").value == pytest.approx(8 / 13)


def test_lcs_ratio_empty_policy() -> None:
    assert lcs_ratio("", "").value == 1.0
    assert lcs_ratio("", "x").value == 0.0
    assert lcs_ratio("x", "").value == 0.0


def test_char_lcs_ratio_hand_computed() -> None:
    r = char_lcs_ratio("kitten", "sitting")  # LCS "ittn" = 4; 2 * 4 / 13
    assert (r.lcs, r.reference_length, r.hypothesis_length) == (4, 6, 7)
    assert r.value == pytest.approx(8 / 13)
    assert char_lcs_ratio("", "").value == 1.0
    assert char_lcs_ratio("abc", "").value == 0.0
    assert char_lcs_ratio("abc", "xyz").value == 0.0


def test_char_lcs_ratio_counts_graphemes_after_nfc() -> None:
    r = char_lcs_ratio("e\u0301te\u0301", "\u00e9t\u00e9")  # decomposed vs precomposed: identical after NFC
    assert (r.value, r.reference_length) == (1.0, 3)
    r = char_lcs_ratio("e\u0301", "e", normalize="none")  # one grapheme "é" vs "e": nothing in common
    assert (r.lcs, r.reference_length, r.value) == (0, 1, 0.0)


# ---------------------------------------------------------------------------------------------- n-gram overlap (spec)


def test_bigram_and_trigram_overlap_follow_the_specification_examples() -> None:
    bigram = ngram_overlap("hello world from biblicus", "hello world biblicus from", n=2)
    assert (bigram.matched, bigram.reference_count, bigram.overlap) == (1, 3, 1 / 3)
    trigram = ngram_overlap("the quick brown fox", "the brown quick fox", n=3)
    assert (trigram.matched, trigram.reference_count, trigram.overlap) == (0, 2, 0.0)
    assert ngram_overlap("a b c", "a c b", n=2).overlap == 0.0  # the "calculation details" example


def test_ngram_overlap_is_over_reference_ngrams_not_f1() -> None:
    # an output that repeats the text twice: every reference bigram is found (overlap 1.0), F1 is not
    r = ngram_overlap("a b c", "a b c a b c", n=2)
    assert r.overlap == 1.0 and r.f1 == pytest.approx(4 / 7)
    # a repeated reference bigram matches as often as the output has it: identical texts score 1.0
    assert ngram_overlap("a b a b", "a b a b", n=2).overlap == 1.0


# ------------------------------------------------------------------------------------------------- character accuracy


def test_character_accuracy_is_one_minus_cer_clipped_at_zero() -> None:
    r = character_accuracy("INVOICE #12345", "INV0ICE #12345")
    assert r.value == pytest.approx(1 - cer("INVOICE #12345", "INV0ICE #12345").value) == pytest.approx(13 / 14)
    assert r.counts() == {"correct_characters": 13, "reference_length": 14, "errors": 1}
    r = character_accuracy("ab", "xyzwv")  # CER 2.5: accuracy clipped at 0, never negative
    assert (r.value, r.correct_characters) == (0.0, 0)
    assert character_accuracy("", "").value == 1.0
    assert character_accuracy("", "x").value == 0.0


# ---------------------------------------------------------------------------------------------------- layout_scores


def test_layout_scores_computes_only_the_names_asked_for() -> None:
    ref, hyp = "hello world from biblicus", "hello form world biblicus"
    assert layout_scores(ref, hyp, []) == {}
    assert layout_scores(ref, hyp, ["cer", "bow_f1"]) == {}  # not this module's registry metrics
    scores = layout_scores(ref, hyp, LAYOUT_METRICS)
    assert set(scores) == LAYOUT_METRICS
    values = {name: value for name, (value, _) in scores.items()}
    assert values["sequence_accuracy"] == 0.5
    assert values["lcs_ratio"] == 0.75  # hello world biblicus
    assert values["set_precision"] == values["set_recall"] == 0.75
    assert values["bigram_overlap"] == 0.0 and values["trigram_overlap"] == 0.0
    assert values["char_lcs_ratio"] == char_lcs_ratio(ref, hyp).value
    assert scores["lcs_ratio"][1] == {"lcs_words": 3, "reference_words": 4}


def test_results_are_json_safe() -> None:
    for result in (bag_of_words("", "x"), ngram_overlap("", ""), sequence_accuracy("", "x"), lcs_ratio("", ""),
                   char_lcs_ratio("", ""), word_set_overlap("", "x"), character_accuracy("", "x")):
        json.dumps(result.to_dict(), allow_nan=False)


@pytest.mark.parametrize("fn", [bag_of_words, word_set_overlap, ngram_overlap, sequence_accuracy, lcs_ratio,
                                char_lcs_ratio, character_accuracy])
def test_bad_inputs(fn: object) -> None:
    with pytest.raises(TypeError, match="reference is None"):
        fn(None, "x")  # type: ignore[operator]
    with pytest.raises(TypeError, match="hypothesis is bytes"):
        fn("x", b"x")  # type: ignore[operator]


# ---------------------------------------------------------------------------------------------------- properties


def _lcs_oracle(a: list[str], b: list[str]) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
    return table[-1][-1]


_words = st.lists(st.sampled_from(["a", "b", "c", "Total", "12.50", "é", "日本"]), max_size=12).map(" ".join)


@settings(max_examples=100, deadline=None)
@given(_words, _words)
def test_properties_against_oracles(ref: str, hyp: str) -> None:
    assert bag_of_words(ref, ref).f1 == 1.0
    assert sequence_accuracy(ref, ref).value == 1.0
    assert lcs_ratio(ref, ref).value == 1.0
    assert char_lcs_ratio(ref, ref).value == 1.0
    assert word_set_overlap(ref, ref).f1 == 1.0
    forward, backward = bag_of_words(ref, hyp), bag_of_words(hyp, ref)
    assert forward.f1 == backward.f1 and forward.precision == backward.recall
    assert char_lcs_ratio(ref, hyp).value == char_lcs_ratio(hyp, ref).value
    norm = layout.get_profile(layout.WORD_NORMALIZATION)
    rw, hw = norm(ref).split(), norm(hyp).split()
    assert bag_of_words(ref, hyp).matched == sum(min(c, Counter(hw)[w]) for w, c in Counter(rw).items())
    assert word_set_overlap(ref, hyp).matched == len(set(rw) & set(hw))
    assert lcs_ratio(ref, hyp).lcs_words == _lcs_oracle(rw, hw)
    in_place = sum(1 for i, w in enumerate(rw) if i < len(hw) and hw[i] == w)
    assert sequence_accuracy(ref, hyp).position_matches == in_place
    for n in (2, 3):
        ref_grams = [tuple(rw[i:i + n]) for i in range(len(rw) - n + 1)]
        hyp_grams = [tuple(hw[i:i + n]) for i in range(len(hw) - n + 1)]
        assert ngram_overlap(ref, hyp, n=n).matched == sum((Counter(ref_grams) & Counter(hyp_grams)).values())
    assert char_lcs_ratio(ref, hyp).lcs == _lcs_oracle(list(ref), list(hyp))  # one code point per grapheme here
