"""The ``markdown`` normalization step: a VLM's Markdown scored as plain text against a plain reference."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ocrmetrics.metrics.normalize import get_profile
from pytest_ocrmetrics.metrics.text import cer

MARKDOWN = ("# Results\n\n**Revenue** grew *fast*<br>in Q3 ![a bar chart of revenue](chart.png)\n\n"
            "The law $$E=mc^2$$ and \\(a+b\\) hold.\n\n| Year | Total |\n|---|---|\n| 2023 | 1,892 |\n")
PLAIN = "Results Revenue grew fast in Q3 The law E=mc^2 and a+b hold. Year Total 2023 1,892"


def test_markdown_becomes_the_plain_text() -> None:
    assert get_profile("markdown+nfc+whitespace")(MARKDOWN) == PLAIN


def test_markdown_scores_zero_cer_where_markup_does_not() -> None:
    assert cer(PLAIN, MARKDOWN, normalize="markdown+nfc+whitespace").value == 0
    assert cer(PLAIN, MARKDOWN, normalize="markup+nfc+whitespace").value > 0  # alt text and delimiters remain


def test_markdown_is_recorded_in_the_profile_name() -> None:
    assert get_profile("whitespace+markdown+nfc").name == "markdown+nfc+whitespace"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab $\\()[]!*_#|<>/\n") + ["\ud800", "\x00"]), max_size=60))
def test_markdown_is_idempotent_on_hostile_text(text: str) -> None:
    profile = get_profile("markdown+nfc+whitespace")
    once = profile(text)
    assert profile(once) == once
