"""The quick tests that text holds nothing to clean (issue 21 item 4: ``ocrmetrics merge`` sanitises and writes the
merged run at report speed): ``safe_text._may_need_cleaning`` for a whole run and ``clean_text``'s byte test never
miss a character the character-class search replaces, and ``clean_text`` gives exactly its result."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ocrmetrics.core.safe_text import (
    _UNENCODABLE,
    REPLACEMENT,
    _may_need_cleaning,
    clean_run,
    clean_text,
)

SPECIAL = [0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xD83D, 0xDE00, 0xFDD0, 0xFDEF, 0xFDF0, 0xFFFD, 0xFFFE, 0xFFFF, 0x1FFFE,
           0x1FFFF, 0x10FFFE, 0x10FFFF, 0x1F600, ord("\\"), ord("u"), ord("d"), ord("8"), 0xE9, 0x17F]
CODE_POINTS = st.one_of(st.sampled_from(SPECIAL), st.integers(0, 0x10FFFF))
TEXTS = st.lists(CODE_POINTS, max_size=12).map(lambda codes: "".join(map(chr, codes)))


@settings(max_examples=400, deadline=None)
@given(key=TEXTS, value=TEXTS)
def test_the_quick_test_never_misses_what_clean_text_replaces(key: str, value: str) -> None:
    run = {"documents": [{"id": key, "reference": value, "metrics": {"cer": 0.5}}], key: [value]}
    needs = bool(_UNENCODABLE.search(key + value))
    if needs:
        assert _may_need_cleaning(run)
    cleaned, count = clean_run(run)
    assert (count > 0) == needs
    if not needs:
        assert cleaned is run


def test_plain_and_non_ascii_text_of_the_bmp_needs_no_walk() -> None:
    assert not _may_need_cleaning({"documents": [{"id": "Straße ſchön 中文 \ufdf0", "cer": 0.5}]})
    assert _may_need_cleaning({"id": "\ud800"}) and _may_need_cleaning({"id": "\U0010ffff"})


@settings(max_examples=600, deadline=None)
@given(text=TEXTS)
def test_clean_text_is_the_character_class_replacement(text: str) -> None:
    assert clean_text(text) == _UNENCODABLE.subn(REPLACEMENT, text)
    assert clean_text("Straße " + text) == _UNENCODABLE.subn(REPLACEMENT, "Straße " + text)
