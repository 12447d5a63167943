"""Failure excerpts: whole grapheme clusters, visible invisibles, aligned rows, a distinct gap mark, bounded time."""

from __future__ import annotations

import random
import string
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ocrmetrics.scoring import diff
from pytest_ocrmetrics.scoring.diff import GAP, display_width, visible, worst_region

FAMILY = "\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466"  # 👨‍👩‍👧‍👦, one cluster


def _rows(excerpt: str) -> list[str]:
    lines = excerpt.split("\n")
    assert lines[0].startswith("ref: ") and lines[1].startswith("hyp: ")
    return lines


def _raw_invisibles(text: str) -> list[str]:
    """Code points that must never reach a terminal raw (ZWJ/ZWNJ may, inside a cluster)."""
    return [ch for ch in text if ch != "\n" and ch not in "\u200c\u200d" and (
        unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") or (ch.isspace() and ch != " "))]


def test_gap_mark_is_not_the_space_mark() -> None:
    lines = _rows(worst_region("a b", "ab"))
    assert lines[0] == "ref: a\u2423b" and lines[1] == f"hyp: a{GAP}b"  # a missing space: ␣ over ∅
    lines = _rows(worst_region("ab", "a b"))
    assert lines[0] == f"ref: a{GAP}b" and lines[1] == "hyp: a\u2423b"
    lines = _rows(worst_region("one two three", "one tw0 three"))
    assert lines[0] == "ref: one two three" and "\u2423" not in lines[0] + lines[1]  # unchanged spaces print as spaces
    assert GAP == "\u2205" and display_width(GAP) == 1


def test_indic_clusters_print_whole() -> None:
    lines = _rows(worst_region("क्षत्रिय राजा", "क्षत्रीय राजा"))
    assert lines[0] == "ref: क्षत्रिय राजा" and lines[1] == "hyp: क्षत्रीय राजा"  # no space after a virama or a mark
    assert lines[2].strip() == "^"


def test_emoji_family_is_one_column_two_wide() -> None:
    lines = _rows(worst_region(f"family {FAMILY} ok", "family \U0001F468 ok"))
    assert FAMILY in lines[0] and "\ufffd" not in "".join(lines)
    assert display_width(lines[0]) == display_width(lines[1])
    assert lines[2].count("^") == 1  # one cluster against one: one substitution
    assert lines[0].index("ok") == lines[1].index("ok") + len(FAMILY) - 1  # same screen column for "ok"


@pytest.mark.parametrize(("character", "mark"), [
    ("\u200f", "⟨RLM⟩"), ("\u200e", "⟨LRM⟩"), ("\u202e", "⟨RLO⟩"), ("\u202d", "⟨LRO⟩"), ("\u202c", "⟨PDF⟩"),
    ("\u2067", "⟨RLI⟩"), ("\u200b", "⟨ZWSP⟩"), ("\u00ad", "⟨SHY⟩"), ("\ufeff", "⟨BOM⟩"), ("\u00a0", "⟨NBSP⟩"),
    ("\x00", "␀"), ("\x1b", "␛"), ("\x7f", "␡"), ("\x85", "⟨U+0085⟩"), ("\ud800", "⟨U+D800⟩"), ("\ufffe", "⟨U+FFFE⟩"),
    ("\u2028", "⟨LSEP⟩"), ("\n", "↵"), ("\r\n", "␍↵"), ("\t", "→"), ("\u200d", "⟨ZWJ⟩"), ("\u0301", "◌\u0301"),
])
def test_invisible_characters_show_as_documented_marks(character: str, mark: str) -> None:
    assert visible(character) == mark
    excerpt = worst_region(f"\x00{character}cd", "\x00cd")  # after a control: a cluster of its own
    assert mark in excerpt and not _raw_invisibles(excerpt)
    assert mark in (diff.__doc__ or "") or mark.startswith("⟨U+") or character in "\x00\x1b\x85\u0301\r\n"


def test_joiners_inside_a_cluster_print_as_they_are() -> None:
    assert visible(FAMILY) == FAMILY
    assert visible("\u0915\u094d\u200d\u0937") == "\u0915\u094d\u200d\u0937"  # क्‍ष: a conjunct written with ZWJ
    assert visible("b\u200d") == "b⟨ZWJ⟩"  # joins nothing: a stray joiner is marked
    assert visible(" \u200d") == " ⟨ZWJ⟩"  # no visible base: marked


def test_escape_never_reaches_the_terminal() -> None:
    excerpt = worst_region("\x1b[31mred\x1b[0m", "\x1b[32mred\x1b[0m")
    assert "\x1b" not in excerpt and "␛[31m" in excerpt


@pytest.mark.parametrize(("text", "width"), [
    ("abc", 3), ("京A", 3), ("e\u0301", 1), (FAMILY, 2), ("\U0001F600", 2), ("\u2764\ufe0f", 2), ("\u2764", 1),
    ("\U0001F1E9\U0001F1EA", 2), ("क्षत्रिय", 3), ("\u200d", 0), ("\u0301", 0), ("ＡＢ", 4), ("\u1100\u1161", 2),
    ("⟨RLM⟩", 5), ("a\tb", 2),
])
def test_display_width_per_cluster(text: str, width: int) -> None:
    assert display_width(text) == width


def test_window_centres_a_lone_error() -> None:
    text = "x" * 200
    lines = _rows(worst_region(text, text[:100] + "y" + text[101:], width=21))
    assert lines[2] == "      " + " " * 10 + "^"  # after "…": ten columns either side of the error


def test_close_long_texts_are_aligned_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diff, "_FULL_CELLS", 100)  # force the banded path on small texts
    monkeypatch.setattr(diff, "FIRST_DIFFERENCE_SPAN", 50)
    reference = " ".join(f"word{i:03d}" for i in range(100))
    hypothesis = reference.replace("word080", "w0rd080").replace("word081", "w0rd081")
    lines = worst_region(reference, hypothesis, width=30).split("\n")
    assert len(lines) == 3 and "w0rd080 w0rd081" in lines[1]  # found beyond the first 50 characters


def test_far_apart_long_texts_align_the_first_difference_and_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diff, "_FULL_CELLS", 100)
    monkeypatch.setattr(diff, "_BAND_CELLS", 1000)
    monkeypatch.setattr(diff, "FIRST_DIFFERENCE_SPAN", 50)
    rng = random.Random(0)
    reference = "same start " + "".join(rng.choice(string.ascii_lowercase) for _ in range(400))
    hypothesis = "same start " + "".join(rng.choice(string.ascii_uppercase) for _ in range(400))
    lines = worst_region(reference, hypothesis, width=30).split("\n")
    assert len(lines) == 4 and lines[3].strip() == diff.TRUNCATED_NOTE.format(span=50)
    assert lines[0].endswith("…") and display_width(lines[0]) == display_width(lines[1])


def test_two_megabyte_texts_render() -> None:
    rng = random.Random(1)
    words = ["".join(rng.choice(string.ascii_letters) for _ in range(rng.randint(2, 9))) for _ in range(2000)]
    reference = " ".join(rng.choice(words) for _ in range(400_000))[:2_000_000]
    chars = list(reference)
    for position in range(1000, len(chars), 20_000):
        chars[position] = "#"
    chars[1_500_000:1_500_010] = "##########"  # the worst region
    close = worst_region(reference, "".join(chars), width=20).split("\n")
    assert len(close) == 3 and "##########" in close[1]
    far = worst_region(reference, "".join(rng.choice(words) for _ in range(400_000))[:2_000_000]).split("\n")
    assert len(far) == 4 and "too long" in far[3]


_TEXT = st.text(st.sampled_from(["a", "b", " ", "\n", "\r", "\t", "\x00", "\x1b", "\u200f", "\u200d", "\u200c",
                                 "\u00ad", "\ufeff", "\u0301", "\u094d", "क", "ष", "京", "\U0001F468", "\U0001F469",
                                 "\U0001F1E9", "\ufe0f", "\ud800", "\udfff", "\u1100", "\u1161", "\uff9e", "\u0600",
                                 "\u2028", "\x85", "\U000E0067", "\U0001F3F4", "∅", "␣"]), max_size=40)


@settings(max_examples=300, deadline=None)
@given(_TEXT, _TEXT)
def test_any_text_pair_gives_three_aligned_safe_lines(reference: str, hypothesis: str) -> None:
    excerpt = worst_region(reference, hypothesis)
    lines = excerpt.split("\n")
    assert len(lines) == 3
    assert display_width(lines[0]) == display_width(lines[1])
    assert display_width(lines[2]) <= display_width(lines[0])
    assert not _raw_invisibles(excerpt), excerpt
    excerpt.encode("utf-8")  # no lone surrogate left
    assert ("^" in lines[2]) == (reference != hypothesis)


_PLAIN = st.lists(st.sampled_from(["a", "b", "京", FAMILY, "e\u0301", "क्ष", "\U0001F600", "x"]), max_size=30).map(
    "".join)


@settings(max_examples=200, deadline=None)
@given(_PLAIN, _PLAIN)
def test_rows_hold_the_whole_texts_when_they_fit(reference: str, hypothesis: str) -> None:
    lines = worst_region(reference, hypothesis, width=80).split("\n")
    if reference or hypothesis:
        assert lines[0][5:].replace(GAP, "").replace(" ", "") == reference
        assert lines[1][5:].replace(GAP, "").replace(" ", "") == hypothesis


# ------------------------------------------------------------------------------------------------------------------
# the excerpt of a failure message reuses the alignment the metrics made (issue 21): the same columns as aligning again
# ------------------------------------------------------------------------------------------------------------------

def _alignment_pairs() -> list[tuple[str, str]]:
    rng = random.Random(21)
    pairs = [("", ""), ("", "abc"), ("abc", ""), ("same text", "same text"), ("e\u0301te\u0301", "ete"),
             ("🇩🇪 flag 👩‍👩‍👧", "🇩🇪 f1ag 👩‍👧"), ("a\r\nb", "a\nb"), ("Straße", "STRASSE")]
    alphabet = "aab cde\u0301\n\t1l0O"
    for _ in range(400):  # short, many ties between optimal alignments
        pairs.append(("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))),
                      "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))))
    for _ in range(40):  # long and similar: the metrics' banded alignment (a score_hint) is taken
        text = "".join(rng.choice("abcdefgh ") for _ in range(rng.randint(300, 3000)))
        noisy = list(text)
        for _ in range(rng.randint(1, 40)):
            noisy.insert(rng.randrange(len(noisy) + 1), rng.choice("xyz"))
        pairs.append((text, "".join(noisy)))
    return pairs


@pytest.mark.parametrize("width", [60, 7])
def test_the_excerpt_from_the_metrics_alignment_equals_the_excerpt_aligned_again(width: int) -> None:
    from pytest_ocrmetrics.metrics.alignment import align_text

    for reference, hypothesis in _alignment_pairs():
        alignment = align_text(reference, hypothesis, unit="grapheme")
        assert worst_region(reference, hypothesis, width=width, alignment=alignment) == \
            worst_region(reference, hypothesis, width=width), (reference, hypothesis)


def test_a_failure_message_does_not_align_the_texts_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_ocrmetrics.core.documents import Document
    from pytest_ocrmetrics.engines.base import OcrOutput
    from pytest_ocrmetrics.metrics.thresholds import Threshold
    from pytest_ocrmetrics.scoring.document import ScoringOptions, score_document
    from pytest_ocrmetrics.scoring.messages import failure_message

    document = Document("a.png", "d", None, "TOTAL 12.50 EUR\nTHANK YOU")
    score = score_document(document, OcrOutput(text="T0TAL 12,5O EUR\nTHANK Y0U"), engine="e")
    expected = failure_message(score, Threshold("cer", 0.0, source="test"), score["cer"])
    monkeypatch.setattr(diff, "_align", lambda *args: pytest.fail("aligned the texts again"))
    assert failure_message(score, Threshold("cer", 0.0, source="test"), score["cer"]) == expected
    codepoints = score_document(document, OcrOutput(text="T0TAL"), engine="e",
                                options=ScoringOptions(unit="codepoint"))  # not the excerpt's unit: aligned anew
    with pytest.raises(pytest.fail.Exception, match="aligned the texts again"):
        failure_message(codepoints, Threshold("cer", 0.0, source="test"), codepoints["cer"])


def _best_window_by_brute_force(error_columns: list[int], n: int, width: int) -> int:
    """The window rule spelled out: try every start, keep the first holding the most errors, then centre."""
    if n <= width or not error_columns:
        return 0
    counts = [sum(start <= c < start + width for c in error_columns) for start in range(n - width + 1)]
    best = max(counts)
    # the first error-starting window holding the most (a best window can always start at an error)
    k = next(k for k, c in enumerate(error_columns) if sum(c <= e < c + width for e in error_columns) == best)
    first, last = error_columns[k], error_columns[k + best - 1]
    centred = (first + last + 1) // 2 - width // 2
    return min(max(centred, last - width + 1, 0), first, n - width)


def _runs(error_columns: list[int], cuts: list[bool]) -> tuple[list[int], list[int]]:
    """The error columns as runs of consecutive columns, a run also cut where ``cuts`` says (blocks that touch: a
    replacement then a deletion)."""
    starts: list[int] = []
    ends: list[int] = []
    for k, column in enumerate(error_columns):
        if ends and ends[-1] == column and not cuts[k % len(cuts)]:
            ends[-1] += 1
        else:
            starts.append(column)
            ends.append(column + 1)
    return starts, ends


@given(st.lists(st.integers(0, 120), max_size=40, unique=True), st.integers(1, 130), st.integers(1, 30),
       st.lists(st.booleans(), min_size=1, max_size=8))
def test_best_window_is_the_first_densest_window_centred(columns: list[int], n: int, width: int,
                                                         cuts: list[bool]) -> None:
    error_columns = sorted(c for c in columns if c < n)
    starts, ends = _runs(error_columns, cuts)
    assert diff._best_window(starts, ends, n, width) == _best_window_by_brute_force(error_columns, n, width)


def test_rendered_columns_are_kept_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # the columns rendered before are reused; the store is emptied when full, never grows without bound
    monkeypatch.setattr(diff, "_COLUMNS", {})
    monkeypatch.setattr(diff, "_COLUMNS_KEPT", 3)
    first = worst_region("abcdef", "abXdeY", width=6)
    assert len(diff._COLUMNS) <= 3
    assert worst_region("abcdef", "abXdeY", width=6) == first == "ref: abcdef\nhyp: abXdeY\n       ^  ^"
