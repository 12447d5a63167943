"""The anchored character alignment (long texts in ``score_text``): always an optimal alignment, with the exact
distance; the whole-matrix alignment when the anchors would cost more; the fast punctuation removal it relies on."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Editops, Levenshtein

from pytest_ocrmetrics.metrics import alignment
from pytest_ocrmetrics.metrics.alignment import (
    ClusterSequence,
    align_text,
    align_text_anchored,
    align_units_with_blocks,
    anchored_editops,
    encode_text,
    unit_codes,
    word_starts,
)
from pytest_ocrmetrics.metrics.normalize import _ASCII_PUNCTUATION, _punctuation_runs, strip_punctuation
from pytest_ocrmetrics.metrics.text import cer, score_text, wer

# every code point, lone surrogates and control characters included
_ANY = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=())
_WORDISH = st.sampled_from(["TOTAL", "RM", "1", "the", "cat", "thecat", "INVOICE", "12.50", "e\u0301", "\r\n", " ",
                            "  ", "\n", "\n\n", "\t", "ß", "—", "x", "the cat\n", "TOTAL\n"])
_VOCABULARY = ["INVOICE", "TOTAL", "CASH", "CHANGE", "RECEIPT", "12.50", "RM60.30", "the", "of", "and", "Straße",
               "Unmündigkeit", "e\u0301te\u0301", "naïve", "1", "-", ":"]


def _page(rng: random.Random, words: int) -> str:
    return "".join(rng.choice(_VOCABULARY) + rng.choice([" ", " ", " ", "\n", "  ", "\n\n"]) for _ in range(words))


def _noisy(text: str, rate: float, rng: random.Random, marks: str = "O0Il1#e\u0301 \n") -> str:
    """``text`` with substitutions, deletions and insertions (of ``marks``: combining ones join clusters)."""
    out = []
    for ch in text:
        r = rng.random()
        if r < rate / 3:
            out.append(rng.choice(marks))
        elif r < 2 * rate / 3:
            continue
        elif r < rate:
            out.append(ch + rng.choice(marks))
        else:
            out.append(ch)
    return "".join(out)


def _anchored(reference: str, hypothesis: str, unit: str = "grapheme") -> alignment.Alignment:
    ref_words, hyp_words = reference.split(), hypothesis.split()
    _, blocks = align_units_with_blocks(ref_words, hyp_words, *unit_codes(ref_words, hyp_words)[:2])
    return align_text_anchored(reference, hypothesis, ref_words, hyp_words, blocks, unit=unit)


def _check_optimal(a: alignment.Alignment, reference: str, hypothesis: str, unit: str = "grapheme") -> None:
    """An optimal alignment: its edit script turns the reference units into the hypothesis units, it costs the
    exact distance, its counts add up and its confusions are its edit operations."""
    confusions = a.confusions  # first: an anchored alignment counts them from its pieces, before joining them
    whole = align_text(reference, hypothesis, unit=unit)
    ref_codes, hyp_codes = encode_text(reference, hypothesis, unit=unit)[2:]
    assert a.distance == whole.distance == Levenshtein.distance(ref_codes, hyp_codes)
    assert len(a.editops) == a.distance
    assert Editops(list(a.editops), len(ref_codes), len(hyp_codes)).apply(ref_codes, hyp_codes) == hyp_codes
    assert a.deletions - a.insertions == len(a.reference) - len(a.hypothesis)
    assert a.hits == len(a.reference) - a.substitutions - a.deletions >= 0
    assert list(a.reference) == list(whole.reference) and list(a.hypothesis) == list(whole.hypothesis)
    ref, hyp = a.reference, a.hypothesis
    expected = Counter((ref[i], hyp[j]) if tag == "replace" else (ref[i], None) if tag == "delete" else (None, hyp[j])
                       for tag, i, j in a.editops)
    assert list(confusions.items()) == list(expected.items())
    assert sum(confusions.values()) == a.distance
    a.__dict__.pop("confusions")
    assert list(a.confusions.items()) == list(expected.items())  # again, from the joined operations


@pytest.fixture(params=["lines", "words"])
def anchoring_everywhere(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> str:
    """Anchor from the first character on, on runs of any length (the most anchors, the most chances to mislead),
    on lines or on words."""
    monkeypatch.setattr(alignment, "ANCHOR_MIN_LENGTH", 0)
    monkeypatch.setattr(alignment, "ANCHOR_MIN_CHARS", 1)
    monkeypatch.setattr(alignment, "LINE_ANCHOR_MIN_CHARS", 1)
    monkeypatch.setattr(alignment, "WORD_ANCHOR_MIN_LENGTH", 0 if request.param == "words" else 10**9)
    return str(request.param)


@pytest.mark.usefixtures("anchoring_everywhere")
@settings(max_examples=300, deadline=None)
@given(st.lists(_WORDISH, max_size=60), st.lists(_WORDISH, max_size=60))
def test_anchored_alignment_is_optimal_on_adversarial_word_soup(a: list[str], b: list[str]) -> None:
    # repeated short words, runs that the word alignment matches where the characters should not, clusters, CRLF
    reference, hypothesis = "".join(a), "".join(b)
    _check_optimal(_anchored(reference, hypothesis), reference, hypothesis)


@pytest.mark.usefixtures("anchoring_everywhere")
@settings(max_examples=100, deadline=None)
@given(st.text(_ANY, max_size=300), st.text(_ANY, max_size=300))
def test_anchored_alignment_is_optimal_on_any_text(reference: str, hypothesis: str) -> None:
    for unit in ("grapheme", "codepoint"):
        _check_optimal(_anchored(reference, hypothesis, unit), reference, hypothesis, unit)


@pytest.mark.parametrize("seed", range(12))
def test_anchored_alignment_is_optimal_on_long_noisy_pages(seed: int) -> None:
    rng = random.Random(seed)
    reference = _page(rng, rng.choice([300, 800, 2000]))
    hypothesis = _noisy(reference, rng.choice([0.01, 0.05, 0.2, 0.5]), rng)
    assert max(len(reference), len(hypothesis)) >= alignment.ANCHOR_MIN_LENGTH
    _check_optimal(_anchored(reference, hypothesis), reference, hypothesis)
    scores = score_text(reference, hypothesis)
    assert scores.cer == cer(reference, hypothesis) or scores.cer.errors == cer(reference, hypothesis).errors
    assert scores.cer.value == cer(reference, hypothesis).value and scores.ned.distance == scores.cer.errors
    assert scores.wer == wer(reference, hypothesis)


@pytest.mark.usefixtures("anchoring_everywhere")
@pytest.mark.parametrize(("reference", "hypothesis"), [("", ""), ("", "abc def"), ("abc def", ""), ("same", "same"),
                                                        ("a b c", "a b c "), ("\n\n", " "),
                                                        ("TOTALTOTAL\r\n", "TOTALTOTAL ")])
def test_anchored_alignment_of_empty_and_trivial_texts(reference: str, hypothesis: str) -> None:
    _check_optimal(_anchored(reference, hypothesis), reference, hypothesis)


def _whole_alignments(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the length of the reference of every rapidfuzz editops call from now on."""
    lengths: list[int] = []
    editops = Levenshtein.editops

    class Recording:
        distance = staticmethod(Levenshtein.distance)

        @staticmethod
        def editops(a: str, b: str, **kwargs: object) -> object:
            lengths.append(len(a))
            return editops(a, b, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(alignment, "Levenshtein", Recording)
    return lengths


@pytest.mark.parametrize("clusters", [False, True])
@pytest.mark.parametrize("tier", ["lines", "words"])
def test_the_anchored_alignment_is_kept_when_optimal(monkeypatch: pytest.MonkeyPatch, clusters: bool, tier: str) -> None:
    monkeypatch.setattr(alignment, "WORD_ANCHOR_MIN_LENGTH", 0 if tier == "words" else 10**9)
    rng = random.Random(7)
    reference = _page(rng, 1500).replace("e\u0301", "é")
    hypothesis = _noisy(reference, 0.05, rng, marks="O0Il1#ex\n ")
    if clusters:  # every e a cluster of two code points, on both sides
        reference, hypothesis = reference.replace("e", "e\u0301"), hypothesis.replace("e", "e\u0301")
    assert isinstance(encode_text(reference, hypothesis)[0], ClusterSequence) == clusters
    ref_words, hyp_words = reference.split(), hypothesis.split()
    _, blocks = align_units_with_blocks(ref_words, hyp_words, *unit_codes(ref_words, hyp_words)[:2])
    lengths = _whole_alignments(monkeypatch)
    a = align_text_anchored(reference, hypothesis, ref_words, hyp_words, blocks)
    assert lengths and max(lengths) < len(reference) // 4  # only pieces were aligned, never the whole texts
    _check_optimal(a, reference, hypothesis)


def test_the_whole_texts_are_aligned_when_the_anchors_cost_more(monkeypatch: pytest.MonkeyPatch) -> None:
    # the word alignment matches "the" of "the cat" with the second "the" of "thecat the": 2 word edits either way,
    # but holding that match costs 11 character edits where 5 suffice
    monkeypatch.setattr(alignment, "ANCHOR_MIN_LENGTH", 0)
    monkeypatch.setattr(alignment, "ANCHOR_MIN_CHARS", 1)
    monkeypatch.setattr(alignment, "WORD_ANCHOR_MIN_LENGTH", 0)
    reference, hypothesis = "the cat", "thecat the"
    ref_words, hyp_words = reference.split(), hypothesis.split()
    _, blocks = align_units_with_blocks(ref_words, hyp_words, *unit_codes(ref_words, hyp_words)[:2])
    anchors = alignment._anchors(reference, hypothesis, ref_words, hyp_words, blocks)
    assert anchors == [(0, 3, 7, 10)]
    assert len(anchored_editops(reference, hypothesis, anchors)) == 11 > Levenshtein.distance(reference, hypothesis)
    calls: list[tuple[str, str]] = []
    run = alignment._run
    monkeypatch.setattr(alignment, "_run", lambda r, h, rc, hc, **kw: calls.append((rc, hc)) or run(r, h, rc, hc, **kw))
    a = align_text_anchored(reference, hypothesis, ref_words, hyp_words, blocks)
    assert calls == [(reference, hypothesis)]  # the fallback: the whole texts
    assert a.distance == 5
    _check_optimal(a, reference, hypothesis)


@settings(max_examples=300, deadline=None)
@given(st.lists(_WORDISH, max_size=40), st.lists(_WORDISH, max_size=40), st.booleans())
def test_the_whole_texts_are_aligned_exactly_when_the_anchors_cost_more(a: list[str], b: list[str],
                                                                        words: bool) -> None:
    reference, hypothesis = "".join(a), "".join(b)
    ref_words, hyp_words = reference.split(), hypothesis.split()
    _, blocks = align_units_with_blocks(ref_words, hyp_words, *unit_codes(ref_words, hyp_words)[:2])
    ref_codes, hyp_codes = encode_text(reference, hypothesis)[2:]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(alignment, "ANCHOR_MIN_LENGTH", 0)
        patch.setattr(alignment, "ANCHOR_MIN_CHARS", 1)
        patch.setattr(alignment, "LINE_ANCHOR_MIN_CHARS", 1)
        patch.setattr(alignment, "WORD_ANCHOR_MIN_LENGTH", 0 if words else 10**9)
        if words:
            anchors = alignment._word_anchors(reference, hypothesis, ref_codes, hyp_codes, ref_words, hyp_words,
                                              blocks)
        else:
            anchors = alignment._line_anchors(ref_codes, hyp_codes)
        calls: list[object] = []
        run = alignment._run
        patch.setattr(alignment, "_run", lambda *args, **kw: calls.append(args[2]) or run(*args, **kw))
        result = align_text_anchored(reference, hypothesis, ref_words, hyp_words, blocks)
    whole = not anchors or len(anchored_editops(ref_codes, hyp_codes, anchors)) > Levenshtein.distance(ref_codes,
                                                                                                        hyp_codes)
    assert calls == ([ref_codes] if whole else [])
    _check_optimal(result, reference, hypothesis)


def test_clusters_joining_whitespace_are_aligned_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    # a combining mark after a space joins it: the codes have fewer whitespace words than the text, no anchors
    monkeypatch.setattr(alignment, "WORD_ANCHOR_MIN_LENGTH", 0)
    rng = random.Random(3)
    reference = _page(rng, 1200).replace("e", "e\u0301")
    hypothesis = reference.replace(" T", " \u0301T")
    assert isinstance(encode_text(reference, hypothesis)[0], ClusterSequence)
    ref_words, hyp_words = reference.split(), hypothesis.split()
    _, blocks = align_units_with_blocks(ref_words, hyp_words, *unit_codes(ref_words, hyp_words)[:2])
    lengths = _whole_alignments(monkeypatch)
    a = align_text_anchored(reference, hypothesis, ref_words, hyp_words, blocks)
    assert lengths == [len(encode_text(reference, hypothesis)[2])]
    _check_optimal(a, reference, hypothesis)


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from("ab \n\t\x1c\x85\u00a0\u3000\u2028"), max_size=60)
       | st.text(st.sampled_from("ab \n\t\r\x0b\x0c\x1c\x1d\x1e\x1f"), max_size=60)
       | st.text(st.sampled_from("aé \n"), max_size=60))
def test_word_starts_are_where_the_words_start(text: str) -> None:
    assert word_starts(text, text.split()) == [m.start() for m in re.finditer(r"\S+", text)]


def test_the_ascii_whitespace_is_str_isspace() -> None:
    assert sorted(alignment._ASCII_SPACES) == [c for c in range(128) if chr(c).isspace() and c != 32]


def test_word_starts_refuses_words_of_another_text() -> None:
    assert word_starts("ab cd", ["ab", "ce"]) is None
    assert word_starts("ab", ["abc"]) is None
    assert word_starts("", []) == []


@settings(max_examples=300, deadline=None)
@given(st.text(_ANY, max_size=80))
def test_punctuation_is_removed_like_the_regex_does(text: str) -> None:
    assert strip_punctuation(text) == _punctuation_runs().sub("", text)
    assert strip_punctuation(text, " ") == _punctuation_runs().sub(" ", text)


def test_the_ascii_punctuation_is_the_regex_s() -> None:
    assert bytes(c for c in range(128) if _punctuation_runs().fullmatch(chr(c))) == _ASCII_PUNCTUATION


def test_matching_blocks_are_the_runs_of_hits() -> None:
    a = align_text("INVOICE 12345 TOTAL", "INV0ICE 1245 TOTAL!")
    hits = [(i1, j1, i2 - i1) for tag, i1, i2, j1, j2 in a.opcodes() if tag == "equal"]
    assert a.matching_blocks() == [*hits, (19, 19, 0)]


def test_edit_operations_are_placed_only_when_read() -> None:
    # the counts and the confusion pairs come from the pieces; editops joins them once, then frees the pieces
    reference = "INVOICE NUMBER 12345 TOTAL 10.00\n" * 100
    hypothesis = reference.replace("NUMBER", "NUMBFR", 5)
    a = score_text(reference, hypothesis).cer.alignment
    assert isinstance(a, alignment._PiecewiseAlignment) and a.substitutions == 5
    assert a.confusions == Counter({("E", "F"): 5}) and "_editops" not in a.__dict__
    ops = a.editops
    assert ops == tuple(Levenshtein.editops(reference, hypothesis).as_list()) and a.editops is ops
    assert "_pieces" not in a.__dict__


def _obvious_line_anchors(ref: str, hyp: str) -> list[tuple[int, int, int, int]]:
    """The line anchors with the lines coded exactly (unit_codes), as they were found before rapidfuzz hashed them."""
    ref_lines, hyp_lines = ref.splitlines(keepends=True), hyp.splitlines(keepends=True)
    ref_codes, hyp_codes = unit_codes(ref_lines, hyp_lines)[:2]
    ref_ends = [sum(map(len, ref_lines[:k])) for k in range(len(ref_lines) + 1)]
    hyp_ends = [sum(map(len, hyp_lines[:k])) for k in range(len(hyp_lines) + 1)]
    return [(ref_ends[a], ref_ends[a + size], hyp_ends[b], hyp_ends[b + size])
            for a, b, size in Levenshtein.editops(ref_codes, hyp_codes).as_matching_blocks()
            if size and ref_ends[a + size] - ref_ends[a] >= alignment.LINE_ANCHOR_MIN_CHARS]


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORDISH, max_size=40), st.lists(_WORDISH, max_size=40))
def test_line_anchors_compared_by_hash_equal_those_coded_exactly(a: list[str], b: list[str]) -> None:
    reference, hypothesis = "".join(a), "".join(b)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(alignment, "LINE_ANCHOR_MIN_CHARS", 1)
        anchors = alignment._line_anchors(reference, hypothesis)
        assert anchors == _obvious_line_anchors(reference, hypothesis)
    assert all(reference[rs:re_] == hypothesis[hs:he] for rs, re_, hs, he in anchors)


def test_lines_of_equal_hash_but_different_text_are_no_anchor(monkeypatch: pytest.MonkeyPatch) -> None:
    class Colliding:  # every line "equal" to every other, as two lines of equal hash would be to rapidfuzz
        @staticmethod
        def editops(ref_lines: list[str], hyp_lines: list[str], **_: object) -> Editops:
            return Levenshtein.editops("x" * len(ref_lines), "x" * len(hyp_lines))

        distance = staticmethod(Levenshtein.distance)

    reference, hypothesis = "the first line\nsame second line\n", "another line!!\nsame second line\n"
    assert alignment._line_anchors(reference, hypothesis) == [(15, 32, 15, 32)]
    monkeypatch.setattr(alignment, "Levenshtein", Colliding)
    assert alignment._line_anchors(reference, hypothesis) == []  # one run of both lines: not equal text, no anchor
    assert alignment._line_anchors(hypothesis, hypothesis) == [(0, 32, 0, 32)]
