from __future__ import annotations

from collections import Counter

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ocrmetrics.metrics.alignment import (
    _JOINER,
    ClusterSequence,
    _joiner_characters,
    align,
    align_text,
    align_words,
)


def test_single_substitution() -> None:
    a = align_text("INVOICE #12345", "INV0ICE #12345")
    assert a.editops == (("replace", 3, 3),)
    assert (a.hits, a.substitutions, a.deletions, a.insertions, a.distance) == (13, 1, 0, 0, 1)
    assert a.confusions == Counter({("O", "0"): 1})


def test_deletion_and_insertion_pairs_use_none() -> None:
    a = align_text("abc", "axbc")
    assert a.editops == (("insert", 1, 1),)
    assert a.confusions == Counter({(None, "x"): 1})
    b = align_text("abc", "ac")
    assert b.editops == (("delete", 1, 1),)
    assert b.confusions == Counter({("b", None): 1})


def test_opcodes_merge_runs() -> None:
    a = align_text("abcdef", "abXYef")
    assert a.opcodes() == [("equal", 0, 2, 0, 2), ("replace", 2, 4, 2, 4), ("equal", 4, 6, 4, 6)]
    assert align_text("", "").opcodes() == []
    assert align_text("ab", "").opcodes() == [("delete", 0, 2, 0, 0)]


def test_pairs_for_a_diff_view() -> None:
    assert list(align_text("cat", "cut!").pairs()) == [("c", "c"), ("a", "u"), ("t", "t"), (None, "!")]


def test_grapheme_units_when_clusters_span_several_code_points() -> None:
    decomposed = "Schlym\u0303"  # m + combining tilde: 6 graphemes, 7 code points
    a = align_text("Schly\u00f1", decomposed)
    assert a.reference_length == 6 and a.hypothesis_length == 6
    assert a.editops == (("replace", 5, 5),)
    assert a.confusions == Counter({("\u00f1", "m\u0303"): 1})
    assert align_text("Schly\u00f1", decomposed, unit="codepoint").distance == 2


def test_multi_code_point_ids_never_collide_with_real_code_points() -> None:
    # ids for clusters start above U+10FFFF, so the last code point and a cluster stay different
    a = align_text("\U0010ffff", "e\u0301")
    assert a.distance == 1
    assert align_text("e\u0301\U0010ffff", "e\u0301\U0010ffff").distance == 0


def test_ascii_reference_against_combining_hypothesis() -> None:
    a = align_text("noel", "noe\u0308l")
    assert a.reference == "noel"
    assert list(a.hypothesis) == ["n", "o", "e\u0308", "l"]
    assert a.editops == (("replace", 2, 2),)


def test_words_are_mapped_exactly() -> None:
    a = align_words(["the", "cat", "sat"], ["the", "hat", "sat", "down"])
    assert (a.hits, a.substitutions, a.insertions) == (2, 1, 1)
    assert a.confusions == Counter({("cat", "hat"): 1, (None, "down"): 1})


def test_generic_align_compares_whole_units() -> None:
    assert align(["ab", "c"], ["a", "bc"]).distance == 2


def test_unknown_unit() -> None:
    with pytest.raises(ValueError, match="unknown unit 'word'"):
        align_text("a", "b", unit="word")


def test_long_texts_align_correctly() -> None:
    # the banded search (score_hint) must still find the exact distance on long inputs
    ref = "The quick brown fox jumps over the lazy dog. " * 400
    hyp = ref.replace("quick", "qu1ck", 50).replace("lazy ", "", 30) + "extra"
    a = align_text(ref, hyp)
    assert a.distance == 50 + 30 * 5 + 5
    assert (a.substitutions, a.deletions, a.insertions) == (50, 150, 5)


# --- grapheme encoding: only the neighbourhood of joining characters is segmented --------------------------------------

_JOINING = ["\u0301", "\u0364", "\u200d", "\U0001F469", "\U0001F4BB", "\U0001F1E9", "\U0001F1EA", "\u1100", "\u1161",
            "\u11a8", "\uac00", "\u0915", "\u094d", "\u0937", "\u0600", "\u0903", "\U0001F3FB", "\r", "\n", "\x00",
            "\u1cf6", "\u0d2c", "\uff9e"]
_PLAIN = list("abc \u00fc\u017f.")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_PLAIN), max_size=60), st.lists(st.tuples(st.integers(0, 60),
                                                                           st.sampled_from(_JOINING)), max_size=4))
def test_sparse_segmentation_equals_full_segmentation(plain: list[str], inserts: list[tuple[int, str]]) -> None:
    chars = list(plain)
    for at, ch in inserts:
        chars.insert(min(at, len(chars)), ch)
    text = "".join(chars)
    assert list(align_text(text, "x").reference) == regex.findall(r"\X", text)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=30), st.lists(st.sampled_from(_JOINING + _PLAIN), max_size=20).map("".join)))
def test_dense_and_arbitrary_text_segmentation(text: str) -> None:
    a = align_text(text, text[::-1])
    assert list(a.reference) == regex.findall(r"\X", text)
    assert list(a.hypothesis) == regex.findall(r"\X", text[::-1])


@pytest.mark.parametrize(
    "text",
    [
        "ab\u1cf6\u0d2ccd",  # an Indic linker with Grapheme_Cluster_Break=Other joins the next consonant
        "xy\U0001F469\u200d\U0001F4BBz",  # emoji ZWJ sequence
        "no\u0364l \u1100\u1161\u11a8 \U0001F1E9\U0001F1EA\U0001F1E9 a\r\nb",  # mark, Hangul jamo, flags, CRLF
        "pq\u0600\u0661rs",  # a prepended concatenation mark
    ],
)
def test_sparse_segmentation_examples(text: str) -> None:
    assert list(align_text(text * 3, "").reference) == regex.findall(r"\X", text * 3)


def test_placeholders_never_collide_with_characters_of_the_texts() -> None:
    # the first placeholder would be U+F0000; when the hypothesis contains it, another one is used
    a = align_text("e\u0301", "\U000f0000")
    assert a.distance == 1
    assert list(a.reference) == ["e\u0301"] and list(a.hypothesis) == ["\U000f0000"]


def test_cluster_sequence_behaves_like_a_list() -> None:
    a = align_text("ae\u0301b", "ab")
    ref = a.reference
    assert isinstance(ref, ClusterSequence)
    assert len(ref) == 3 and ref[1] == "e\u0301" and ref[-1] == "b" and ref[0:2] == ["a", "e\u0301"]
    assert ref == ["a", "e\u0301", "b"] and ref.index("b") == 2 and "e\u0301" in ref
    assert "e\u0301" in repr(ref)


def test_joiner_scan_ranges_cover_every_joining_code_point() -> None:
    every = "".join(map(chr, range(0xD800))) + "".join(map(chr, range(0xE000, 0x110000)))
    assert frozenset(_JOINER.findall(every)) == _joiner_characters()
