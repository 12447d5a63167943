from __future__ import annotations

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ocrmetrics.metrics import units
from pytest_ocrmetrics.metrics.units import check_text, codepoints, graphemes, split, words

# --- characters ---------------------------------------------------------------------------------------------------


def test_combining_sequence_is_one_grapheme_and_two_codepoints() -> None:
    assert graphemes("e\u0301a") == ["e\u0301", "a"]
    assert codepoints("e\u0301a") == ["e", "\u0301", "a"]


def test_crlf_emoji_sequences_and_flags_are_single_graphemes() -> None:
    assert graphemes("a\r\nb") == ["a", "\r\n", "b"]
    assert graphemes("\U0001F469\u200d\U0001F4BB!") == ["\U0001F469\u200d\U0001F4BB", "!"]
    assert graphemes("\U0001F1E9\U0001F1EA\U0001F1EB\U0001F1F7") == ["\U0001F1E9\U0001F1EA", "\U0001F1EB\U0001F1F7"]


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=40))
def test_ascii_fast_path_agrees_with_uax29(text: str) -> None:
    assert graphemes(text) == regex.findall(r"\X", text)


# --- words ----------------------------------------------------------------------------------------------------------


def test_whitespace_tokenizer_is_str_split() -> None:
    assert words("  INVOICE\t#12345\nTOTAL  ") == ["INVOICE", "#12345", "TOTAL"]


def test_jiwer_tokenizer_splits_only_on_spaces_after_collapsing_runs() -> None:
    assert words(" a\tb  c\n\nd ", tokenizer="jiwer") == ["a\tb", "c", "d"]


def test_unicode_tokenizer_drops_punctuation_and_keeps_numbers_with_separators() -> None:
    # dinglehopper's tests/test_word_error_rate.py::test_words
    text = "Der schnelle [„braune“] Fuchs kann keine 3,14 Meter springen, oder?"
    assert words(text, tokenizer="unicode") == [
        "Der", "schnelle", "braune", "Fuchs", "kann", "keine", "3,14", "Meter", "springen", "oder",
    ]


def test_unicode_tokenizer_treats_private_use_characters_as_letters() -> None:
    # dinglehopper's tests/test_word_error_rate.py::test_words_private_use_area
    text = (
        "\ue72bber die vielen Sorgen wegen de\ue5bfelben vergaß Hartkopf, "
        "der Frau Amtm\ue72bnnin das ver\u2e17\n"
        "\u017fpro\ue5bfene zu \ue72bberliefern."
    )
    assert words(text, tokenizer="unicode") == [
        "\ue72bber", "die", "vielen", "Sorgen", "wegen", "de\ue5bfelben", "vergaß", "Hartkopf", "der", "Frau",
        "Amtm\ue72bnnin", "das", "ver", "\u017fpro\ue5bfene", "zu", "\ue72bberliefern",
    ]


def test_unicode_tokenizer_splits_ideographs_and_joins_katakana() -> None:
    assert words("東京都 アイス", tokenizer="unicode") == ["東", "京", "都", "アイス"]


def test_unicode_tokenizer_ascii_rules() -> None:
    text = "can't U.S.A a_b __ _x 1,000.50 a.1 x:y -- $5 ok."
    assert words(text, tokenizer="unicode") == ["can't", "U.S.A", "a_b", "_x", "1,000.50", "a", "1", "x:y", "5", "ok"]


def test_unicode_tokenizer_drops_segments_of_only_marks_symbols_or_format_characters() -> None:
    assert words("\u0301 \u00a9 \u200b word", tokenizer="unicode") == ["word"]


def test_unicode_tokenizer_space_like_characters_join_a_preceding_space() -> None:
    # WB3d keeps " " + U+3000 together and WB4 attaches the (letter-like) U+FF9E to them: one kept segment
    text = "a \u3000\uff9e b"
    assert words(text, tokenizer="unicode") == units._uniseg_words(text) == ["a", " \u3000\uff9e", "b"]


def test_unknown_tokenizer_names_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="unknown tokenizer 'spaces'; valid: whitespace, unicode, jiwer"):
        words("a", tokenizer="spaces")


_WORDISH = st.lists(
    st.sampled_from(
        list("aZ09_.,;:'\"!?()-$ \t\n\u00fc\u017f\u00df")
        + ["\u0301", "\u200d", "\u200b", "\u00ad", "\u2060", "\u3000", "\u00a0", "\uff9e", "\ue000", "\u6771", "\u30a2",
           "\u30fc", "\U0001F44D", "\U0001F1E9", "\r\n", "\u05d0", "\u0e01", "\u24c2", "\u0660", "\uff11", "\u02c2",
           "\u00b7", "\u2019", "\u2024", "\ufe13"]
    ),
    max_size=25,
).map("".join)


@settings(max_examples=150, deadline=None)
@given(st.one_of(_WORDISH, st.text(max_size=20)))
def test_unicode_tokenizer_fast_paths_equal_whole_text_uax29(text: str) -> None:
    # the ASCII regex, the plain-word shortcut and the per-run segmentation must give what uniseg gives on the whole
    # text (dinglehopper's words(), with private-use characters as letters)
    units._run_words.cache_clear()
    assert words(text, tokenizer="unicode") == units._uniseg_words(text)


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=40))
def test_ascii_word_regex_equals_uax29(text: str) -> None:
    assert units._ascii_words(text) == units._uniseg_words(text)


# --- split and check_text ---------------------------------------------------------------------------------------------


def test_split_dispatches_on_unit() -> None:
    assert split("e\u0301!", "grapheme") == ["e\u0301", "!"]
    assert split("e\u0301!", "codepoint") == ["e", "\u0301", "!"]
    assert split("a, b", "word:unicode") == ["a", "b"]
    with pytest.raises(ValueError, match="unknown unit 'letter'"):
        split("a", "letter")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "reference is None; pass a str"),
        (b"abc", "reference is bytes; decode it first"),
        (bytearray(b"abc"), "reference is bytes; decode it first"),
        (42, "reference must be a str, not int"),
        (["a"], "reference must be a str, not list"),
    ],
)
def test_check_text_rejects_non_str(value: object, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        check_text(value, "reference")
