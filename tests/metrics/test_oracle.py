"""Property tests: the fast alignment (rapidfuzz on integer-mapped units) against a slow, obviously-correct oracle."""

from __future__ import annotations

from typing import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ocrmetrics.metrics.alignment import Alignment, align, align_text, align_words
from pytest_ocrmetrics.metrics.text import cer, score_text, wer
from pytest_ocrmetrics.metrics.units import codepoints, graphemes, words


def levenshtein(a: Sequence[str], b: Sequence[str]) -> int:
    """Textbook dynamic-programming Levenshtein distance (unit costs), O(len(a) * len(b))."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def replay(alignment: Alignment) -> list[str]:
    """Apply the edit operations to the reference units; the result must be the hypothesis units."""
    ref, hyp = alignment.reference, alignment.hypothesis
    out: list[str] = []
    i = 0
    for tag, src, dest in alignment.editops:
        out.extend(ref[i:src])
        if tag == "replace":
            out.append(hyp[dest])
            i = src + 1
        elif tag == "delete":
            i = src + 1
        else:
            out.append(hyp[dest])
            i = src
    out.extend(ref[i:])
    return out


# Small alphabets make collisions, repeats and ties (the hard cases) likely; the extra pieces bring combining marks,
# a CRLF, an emoji ZWJ sequence, a flag and CJK.
_PIECES = ["a", "b", "c", " ", "\n", "e\u0301", "\u00e9", "\r\n", "\U0001F469\u200d\U0001F4BB", "\U0001F1E9\U0001F1EA",
           "\u6771", "0", "O", "."]
texts = st.lists(st.sampled_from(_PIECES), max_size=30).map("".join)
any_text = st.text(max_size=40)

SETTINGS = settings(max_examples=150, deadline=None)


@SETTINGS
@given(texts, texts)
def test_character_distance_matches_oracle(a: str, b: str) -> None:
    for unit, split in (("grapheme", graphemes), ("codepoint", codepoints)):
        alignment = align_text(a, b, unit=unit)
        assert alignment.distance == levenshtein(split(a), split(b))
        assert list(alignment.reference) == split(a)
        assert list(alignment.hypothesis) == split(b)


@SETTINGS
@given(any_text, any_text)
def test_distance_on_arbitrary_unicode_matches_oracle(a: str, b: str) -> None:
    assert align_text(a, b).distance == levenshtein(graphemes(a), graphemes(b))


@SETTINGS
@given(texts, texts)
def test_word_distance_matches_oracle(a: str, b: str) -> None:
    for tokenizer in ("whitespace", "jiwer", "unicode"):
        ra, rb = words(a, tokenizer=tokenizer), words(b, tokenizer=tokenizer)
        result = wer(a, b, tokenizer=tokenizer, normalize="none")
        assert result.errors == levenshtein(ra, rb)
        assert result.reference_length == len(ra)


@SETTINGS
@given(texts, texts)
def test_distance_is_symmetric(a: str, b: str) -> None:
    forward, backward = align_text(a, b), align_text(b, a)
    assert forward.distance == backward.distance
    assert forward.substitutions + forward.deletions + forward.insertions == backward.distance


@SETTINGS
@given(any_text)
def test_cer_of_a_text_with_itself_is_zero(x: str) -> None:
    for unit in ("grapheme", "codepoint"):
        result = cer(x, x, unit=unit)
        assert result.value == 0.0 and result.errors == 0
        assert result.hits == result.reference_length
    assert wer(x, x, tokenizer="unicode").value == 0.0


@SETTINGS
@given(texts, texts)
def test_editops_replay_the_hypothesis(a: str, b: str) -> None:
    for unit in ("grapheme", "codepoint"):
        alignment = align_text(a, b, unit=unit)
        assert replay(alignment) == list(alignment.hypothesis)
    word_alignment = align_words(a.split(), b.split())
    assert replay(word_alignment) == b.split()


@SETTINGS
@given(texts, texts)
def test_counts_partition_both_sides(a: str, b: str) -> None:
    alignment = align_text(a, b)
    assert alignment.hits + alignment.substitutions + alignment.deletions == alignment.reference_length
    assert alignment.hits + alignment.substitutions + alignment.insertions == alignment.hypothesis_length
    assert sum(alignment.confusions.values()) == alignment.distance
    for (ref, hyp), _count in alignment.confusions.items():
        assert ref != hyp  # a confusion is never a hit


@SETTINGS
@given(texts, texts)
def test_opcodes_and_pairs_cover_both_sequences(a: str, b: str) -> None:
    alignment = align_text(a, b)
    ref, hyp = alignment.reference, alignment.hypothesis
    i = j = 0
    for tag, i1, i2, j1, j2 in alignment.opcodes():
        assert (i1, j1) == (i, j)
        if tag == "equal":
            assert list(ref[i1:i2]) == list(hyp[j1:j2])
        i, j = i2, j2
    assert (i, j) == (len(ref), len(hyp))
    pairs = list(alignment.pairs())
    assert [r for r, _ in pairs if r is not None] == list(ref)
    assert [h for _, h in pairs if h is not None] == list(hyp)
    assert sum(1 for r, h in pairs if r is not None and h is not None and r == h) == alignment.hits


@SETTINGS
@given(st.lists(st.sampled_from(["x", "y", "xy", ""]), max_size=20), st.lists(st.sampled_from(["x", "y", "xy", ""]), max_size=20))
def test_generic_units_are_compared_exactly(a: list[str], b: list[str]) -> None:
    assert align(a, b).distance == levenshtein(a, b)


@SETTINGS
@given(texts, texts)
def test_score_text_equals_the_single_metrics(a: str, b: str) -> None:
    from pytest_ocrmetrics.metrics import text as m

    for normalize in ("nfc", "lenient"):
        s = score_text(a, b, normalize=normalize, tokenizer="unicode")
        assert s.cer == m.cer(a, b, normalize=normalize)
        assert s.wer == m.wer(a, b, normalize=normalize, tokenizer="unicode")
        assert s.ser == m.ser(a, b, normalize=normalize)
        assert s.ned == m.normalized_edit_distance(a, b, normalize=normalize)
        assert s.edit_similarity == m.edit_similarity(a, b, normalize=normalize)
        assert s.exact_match == m.exact_match(a, b, normalize=normalize)
        assert s.token_accuracy == m.token_accuracy(a, b, normalize=normalize, tokenizer="unicode")
        assert s.confusion == m.confusion(a, b, normalize=normalize)
