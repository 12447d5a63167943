from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_ocrmetrics.metrics.normalize import PRESETS, get_profile, strip_punctuation


def test_none_applies_nothing() -> None:
    text = "e\u0301  ABC\u201c"
    assert get_profile("none")(text) == text


def test_default_is_nfc_only() -> None:
    assert get_profile(None).name == "nfc"
    assert get_profile(None)("e\u0301 A") == "\u00e9 A"


def test_steps_apply_in_fixed_order_and_name_is_canonical() -> None:
    assert get_profile("whitespace+casefold+nfc").name == "nfc+casefold+whitespace"
    assert get_profile("nfc+casefold+whitespace")("  Straße\n  ABC ") == "strasse abc"


def test_lenient_folds_quotes_case_punctuation_and_space() -> None:
    assert get_profile("lenient")("\u201cHello\u201d \u2014  World.") == "hello world"


def test_punctuation_is_unicode_category_p_for_every_assigned_character() -> None:
    # the slow oracle: unicodedata, one character at a time; characters unassigned in Python's Unicode database may
    # be punctuation in the regex module's newer tables, so they are left out
    assigned = "".join(chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) != "Cn")
    kept = "".join(ch for ch in assigned if not unicodedata.category(ch).startswith("P"))
    assert strip_punctuation(assigned) == kept
    assert get_profile("punctuation")(assigned) == kept
    assert strip_punctuation("a.,b!?c", " ") == "a b c"  # a run becomes one replacement


def test_tex_quotes_fold() -> None:
    assert get_profile("quotes")("``word''") == '"word"'


def test_markup_removes_markdown_and_html() -> None:
    raw = "# Title\n\n**bold** and *it*\n| a | b |\n|---|---|\n| 1 | 2 |\n<table><tr><td>x</td><td>y</td></tr></table>&amp;"
    assert get_profile("model-output")(raw) == "Title\nbold and it\na b\n1 2\nx y\n&"


def test_unknown_step_names_valid_ones() -> None:
    with pytest.raises(ValueError, match="unknown normalization step 'nfx'.*casefold"):
        get_profile("nfx")
    with pytest.raises(ValueError, match=r"^unknown normalization step 'lenent' in 'nfc\+lenent' \(did you mean "
                                         r"'lenient'\?\); valid steps and presets: casefold, "):
        get_profile("nfc+lenent")


def test_two_unicode_forms_refused() -> None:
    with pytest.raises(ValueError, match="several Unicode forms"):
        get_profile("nfc+nfkc")


def test_non_string_spec_is_type_error() -> None:
    with pytest.raises(TypeError):
        get_profile(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("spec", "text"),
    [("model-output", ">>"), ("model-output", "0\x1e>"), ("model-output", "    # x"), ("lenient", "`?`")],
)
def test_idempotence_regressions(spec: str, text: str) -> None:
    # inputs hypothesis once found: nested quotes, a record separator as line break, a single backtick
    profile = get_profile(spec)
    assert profile(profile(text)) == profile(text)


def test_single_backtick_folds_to_apostrophe() -> None:
    assert get_profile("quotes")("`word'") == "'word'"


def test_strip_removes_only_the_ends() -> None:
    assert get_profile("strip")("  a \n b\t\n") == "a \n b"
    assert get_profile("strip").unicode_form is None


def test_line_preserving_swaps_whitespace_for_lines() -> None:
    profile = get_profile("lenient").line_preserving()
    assert profile.name == "nfkc+quotes+casefold+punctuation+lines"
    assert profile("A  b\n\n C.") == "a b\nc"
    nfc = get_profile("nfc")
    assert nfc.line_preserving() is nfc


@pytest.mark.parametrize(
    "spec", sorted(PRESETS) + ["nfc+casefold", "nfd+punctuation", "markup+nfkc+whitespace", "strip", "nfc+lines+strip"]
)
@given(text=st.text())
def test_profiles_are_idempotent(spec: str, text: str) -> None:
    profile = get_profile(spec)
    once = profile(text)
    assert profile(once) == once


@given(text=st.text())
def test_nfc_profile_output_is_nfc(text: str) -> None:
    assert unicodedata.is_normalized("NFC", get_profile("nfc")(text))
