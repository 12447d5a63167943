"""The per-document fast paths of ``score_text`` and the default scorers, each pinned against the computation it
replaces: the result objects made only when read, the values and counts the plugin reads without them, the confusion
rows of a run file made in one pass, the multiset overlap of ``bow_f1`` summed in C, and the ASCII paths of the
normalization steps."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import OcrOutput
from pytest_ocrmetrics.metrics import layout
from pytest_ocrmetrics.metrics import text as m
from pytest_ocrmetrics.metrics.alignment import align_text
from pytest_ocrmetrics.metrics.normalize import _ASCII_PUNCTUATION, _punctuation_runs, get_profile, strip_punctuation
from pytest_ocrmetrics.scoring.document import DEFAULT_TEXT_METRICS, ScoringOptions, score_document

SETTINGS = settings(max_examples=150, deadline=None)

# multi-code-point clusters (combining marks, CRLF, ZWJ emoji, flags, Hangul jamo, Devanagari), look-alikes, CJK,
# punctuation of several scripts, whitespace and line separators of every kind, and NUL
_PIECES = ["a", "B", "O", "0", " ", "  ", "\n", "\r\n", "\t", "\u2028", "\x0b", "e\u0301", "\u00e9", "\u1100\u1161",
           "\u0915\u094d\u0937", "\U0001F469\u200d\U0001F4BB", "\U0001F1E9\U0001F1EA", "\u6771", "\u00df", "\u0130",
           "TOTAL", "total:", "RM1.50", "\u00ab", "\u2014", "\u3001", "...", "\x00", "\u01f0"]
pieces = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)
unicode_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)  # no lone surrogates
texts = st.one_of(pieces, unicode_text, st.just(""))

_OPTIONS = [
    {},
    {"unit": "codepoint"},
    {"tokenizer": "jiwer", "empty_reference": "jiwer"},
    {"tokenizer": "unicode", "empty_reference": "dinglehopper"},
    {"normalize": "lenient"},  # whitespace collapsed: SER reads the line-preserving profile
    {"normalize": "none", "unit": "codepoint"},
]


def eager(scores: m.TextScores) -> m.TextScores:
    """The same scores as a plain TextScores, every result object made (what score_text returned before)."""
    return m.TextScores(**{f.name: getattr(scores, f.name) for f in dataclasses.fields(m.TextScores)})


def recorded(scores: m.TextScores, wanted: frozenset[str]) -> tuple[dict, dict]:
    metrics: dict = {}
    counts: dict = {}
    scores.record_into(metrics, counts, wanted)
    return metrics, counts


def by_objects(scores: m.TextScores, wanted: frozenset[str]) -> tuple[dict, dict]:
    """What the text scorer wrote before: ``float(result.value)`` and ``result.counts()`` of each wanted result."""
    metrics = {name: float(result.value) for name, result in scores.results().items() if name in wanted}
    counts = {name: result.counts() for name, result in scores.results().items() if name in wanted}
    return metrics, counts


@SETTINGS
@given(texts, texts)
def test_values_and_counts_read_without_the_result_objects_equal_the_objects(a: str, b: str) -> None:
    everything = frozenset(m._TEXT_RESULTS)
    for options in _OPTIONS:
        lazy = m.score_text(a, b, **options)
        for wanted in (everything, frozenset(DEFAULT_TEXT_METRICS), frozenset({"ser", "token_accuracy"}), frozenset()):
            fast, slow = recorded(lazy, wanted), by_objects(m.score_text(a, b, **options), wanted)
            assert fast == slow
            assert [list(d) for d in fast] == [list(d) for d in slow]  # the same order of metrics
            assert [list(c) for c in fast[1].values()] == [list(c) for c in slow[1].values()]  # and of counts
        assert "cer" not in vars(lazy)  # recording made no result object
        assert recorded(eager(lazy), everything) == recorded(lazy, everything)  # the objects' own path agrees


@SETTINGS
@given(texts, texts)
def test_result_objects_made_when_read_equal_the_single_metrics(a: str, b: str) -> None:
    s = m.score_text(a, b)
    assert s.cer == m.cer(a, b) and s.wer == m.wer(a, b) and s.ser == m.ser(a, b)
    assert s.ned == m.normalized_edit_distance(a, b) and s.edit_similarity == m.edit_similarity(a, b)
    assert s.exact_match == m.exact_match(a, b) and s.token_accuracy == m.token_accuracy(a, b)
    assert s.confusion == m.confusion(a, b)
    assert s.character_alignment is s.cer.alignment


def test_text_scores_made_lazily_behave_as_a_dataclass() -> None:
    lazy = m.score_text("INVOICE 12\nTOTAL 5", "INV0ICE 12\nT0TAL 5")
    plain = eager(m.score_text("INVOICE 12\nTOTAL 5", "INV0ICE 12\nT0TAL 5"))
    assert lazy == plain and plain == lazy and hash(lazy) == hash(plain)
    assert repr(lazy) == repr(plain)
    assert dataclasses.asdict(lazy) == dataclasses.asdict(plain)
    assert dataclasses.replace(lazy, normalization="x").cer == plain.cer
    assert pickle.loads(pickle.dumps(m.score_text("ab", "ac"))) == eager(m.score_text("ab", "ac"))
    assert copy.deepcopy(m.score_text("ab", "ac")).confusion.top(1) == [("b", "c", 1)]
    assert lazy.to_dict() == plain.to_dict() and lazy.values() == plain.values() and lazy.counts() == plain.counts()
    with pytest.raises(AttributeError, match="no attribute 'cerr'"):
        lazy.cerr  # noqa: B018 - an unknown name stays an AttributeError
    with pytest.raises(dataclasses.FrozenInstanceError):
        lazy.cer = plain.cer  # type: ignore[misc]


def test_a_plain_text_scores_records_through_its_objects() -> None:
    plain = eager(m.score_text("a b c", "a x c"))
    assert recorded(plain, frozenset({"wer"})) == ({"wer": 1 / 3}, {"wer": plain.wer.counts()})


@SETTINGS
@given(texts, texts)
def test_confusion_rows_equal_the_cells_converted(a: str, b: str) -> None:
    for unit in ("grapheme", "codepoint"):
        alignment = align_text(a, b, unit=unit)
        cells = [(ref, hyp, count) for (ref, hyp), count in alignment.confusions.most_common()]
        assert m.confusion_cells(alignment) == cells
        assert m.confusion_cells(alignment, rows=True) == [[ref or "", hyp or "", n] for ref, hyp, n in cells]


@SETTINGS
@given(texts, texts)
def test_a_documents_metrics_counts_and_confusions_equal_score_text(a: str, b: str) -> None:
    for options in (ScoringOptions(), ScoringOptions(normalize="lenient", tokenizer="jiwer", unit="codepoint")):
        score = score_document(Document(id="d", dataset="t", image_path=None, reference_text=a), OcrOutput(text=b),
                               engine="e", options=options)
        text = eager(m.score_text(a, b, unit=options.unit, tokenizer=options.tokenizer, normalize=options.normalize))
        wanted = frozenset(DEFAULT_TEXT_METRICS)
        metrics, counts = by_objects(text, wanted)
        assert {k: v for k, v in score.metrics.items() if k != "bow_f1"} == metrics
        assert {k: v for k, v in score.counts.items() if k in metrics} == counts
        assert score.metrics["bow_f1"] == layout.bag_of_words(text.reference, text.hypothesis).f1
        assert score.confusion_rows() == [[r or "", h or "", n] for r, h, n in text.confusion.cells]


@SETTINGS
@given(st.lists(st.sampled_from(["a", "b", "c", "total", "RM", "\u00e9"]), max_size=30),
       st.lists(st.sampled_from(["a", "b", "d", "total", "rm", "e\u0301"]), max_size=30))
def test_the_bag_overlap_is_the_multiset_intersection(ref: list[str], hyp: list[str]) -> None:
    result = layout._bag_overlap(ref, hyp, "x")
    assert result.matched == sum((Counter(ref) & Counter(hyp)).values())
    assert (result.reference_count, result.hypothesis_count) == (len(ref), len(hyp))


def test_ascii_casefold_is_lower_and_ascii_punctuation_is_the_regexs() -> None:
    ascii_text = "".join(map(chr, range(128)))
    assert ascii_text.casefold() == ascii_text.lower()
    assert strip_punctuation(ascii_text) == _punctuation_runs().sub("", ascii_text)
    assert set(_ASCII_PUNCTUATION.decode()) == set("".join(_punctuation_runs().findall(ascii_text)))


@SETTINGS
@given(texts)
def test_the_normalization_steps_agree_with_and_without_the_ascii_paths(text: str) -> None:
    assert strip_punctuation(text) == _punctuation_runs().sub("", text)
    assert get_profile("casefold")(text) == text.casefold()
    assert get_profile("nfc+casefold+punctuation")(text.encode("ascii", "ignore").decode()) == _punctuation_runs().sub(
        "", text.encode("ascii", "ignore").decode().casefold())
