"""The registry computes: every registry metric has a scorer, every scorer computes registry metrics, and
``score_document`` is a loop over the scorers (a family added to ``SCORERS`` is computed with no other change)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import OcrOutput
from pytest_ocrmetrics.metrics.registry import METRICS
from pytest_ocrmetrics.scoring import scorers
from pytest_ocrmetrics.scoring.document import ScoringOptions, score_document
from pytest_ocrmetrics.scoring.scorers import NOT_SCORED_PER_DOCUMENT, SCORERS, Scorer, scored_metrics, scorers_for


def test_every_registry_metric_has_a_scorer_and_every_scorer_a_registry_metric() -> None:
    scored = scored_metrics()
    assert scored - set(METRICS) == set(), "a scorer computes a metric the registry does not name"
    assert set(METRICS) - scored == set(NOT_SCORED_PER_DOCUMENT), "a registry metric that no scorer computes"
    assert scored.isdisjoint(NOT_SCORED_PER_DOCUMENT)


def test_scorer_names_are_unique() -> None:
    assert len({scorer.name for scorer in SCORERS}) == len(SCORERS)


def test_only_requested_families_run_but_ground_truth_families_always_do() -> None:
    names = [scorer.name for scorer in scorers_for(frozenset({"cer"}))]
    assert names == ["text", "fields", "schema", "facts", "OmniDocBench"]
    assert "word match" in [scorer.name for scorer in scorers_for(frozenset({"word_f1"}))]


def _family(calls: list[str], applies: Any) -> Scorer:
    def score(context: scorers.ScoringContext) -> None:
        calls.append(context.document.id)  # one call computes both metrics
        context.metrics["cer"] = 0.25
        context.metrics["wer"] = 0.5
        context.details["page"] = {"seen": context.hypothesis}

    return Scorer("page family", ("cer", "wer"), score, applies)


def test_a_family_computes_several_metrics_in_one_call_for_the_documents_it_applies_to(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    family = _family(calls, lambda document: document.dataset == "omni")
    monkeypatch.setattr(scorers, "SCORERS", (family,))
    scorers_for.cache_clear()
    try:
        page = score_document(Document("p.png", "omni", None, "abc"), OcrOutput(text="abd"), engine="e")
        other = score_document(Document("q.png", "plain", None, "abc"), OcrOutput(text="abd"), engine="e")
    finally:
        scorers_for.cache_clear()
    assert calls == ["p.png"]
    assert page.metrics == {"cer": 0.25, "wer": 0.5}
    assert page.details == {"page": {"seen": "abd"}}
    assert other.metrics == {} and other.details == {}


def test_a_requested_family_is_skipped_when_none_of_its_metrics_is_requested(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(scorers, "SCORERS", (Scorer("x", ("crr",), lambda c: calls.append("crr"), lambda d: True),))
    scorers_for.cache_clear()
    try:
        score_document(Document("a.png", "d", None, "abc"), OcrOutput(text="abc"), engine="e")
        assert calls == []
        score_document(Document("a.png", "d", None, "abc"), OcrOutput(text="abc"), engine="e",
                       options=ScoringOptions(extra_metrics=("crr",)))
        assert calls == ["crr"]
    finally:
        scorers_for.cache_clear()


def test_metrics_come_in_the_order_of_the_families() -> None:
    """A document's metrics are written family by family (the run file's and JUnit's order)."""
    document = Document("a.png", "d", None, "INVOICE 1\nTOTAL 5", fields={"total": "5"})
    options = ScoringOptions(extra_metrics=("token_ratio", "character_accuracy", "crr", "bow_f1", "set_f1"))
    score = score_document(document, OcrOutput(text="INV0ICE 1\nTOTAL 5"), engine="e", options=options)
    assert list(score.metrics) == ["cer", "wer", "ser", "ned", "edit_similarity", "exact_match", "token_accuracy",
                                   "bow_f1", "crr", "set_f1", "character_accuracy", "token_ratio", "field_f1",
                                   "field_precision", "field_recall"]
