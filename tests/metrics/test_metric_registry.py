"""The registry is the single source of metric names: every micro metric's counts exist where it is computed."""

from __future__ import annotations

import pytest

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import OcrOutput
from pytest_ocrmetrics.metrics.registry import METRICS, get_metric, is_better, regression
from pytest_ocrmetrics.scoring.document import ScoringOptions, score_document


def test_scored_micro_metrics_carry_their_numerator_and_denominator() -> None:
    from pytest_ocrmetrics.metrics.facts import parse_fact

    document = Document("a.png", "d", None, "INVOICE #1\nTOTAL 5", fields={"total": "5"},
                        schema={"type": "object", "required": ["total"]},
                        facts=(parse_fact({"id": "f", "type": "present", "text": "TOTAL"}, require_location=False),))
    output = OcrOutput(text='INV0ICE #1\nTOTAL 5', raw='{"total": "5"}')
    options = ScoringOptions(extra_metrics=("crr", "word_f1", "lcs_ratio", "token_f1", "token_ratio",
                                            "set_precision", "set_recall", "set_f1", "sequence_accuracy",
                                            "char_lcs_ratio", "bigram_overlap", "trigram_overlap",
                                            "character_accuracy", "task_success"))
    score = score_document(document, output, engine="e", options=options)
    computed = set(score.metrics)
    # anls needs question answers, which documents do not carry; the OmniDocBench metrics an OmniDocBench page
    assert computed == set(METRICS) - {"anls"} - {name for name, spec in METRICS.items() if spec.requires == "omnidoc"}
    for name in computed:
        spec = METRICS[name]
        if spec.aggregation == "micro":
            assert spec.numerator in score.counts[name], name
            assert spec.denominator in score.counts[name], name


def test_directions() -> None:
    assert is_better("cer", 0.01, 0.02) and not is_better("cer", 0.03, 0.02)
    assert is_better("field_f1", 0.9, 0.8)
    assert regression("cer", 0.03, 0.02) == pytest.approx(0.01)
    assert regression("field_f1", 0.8, 0.9) == pytest.approx(0.1)


def test_unknown_metric_lists_valid_ones() -> None:
    with pytest.raises(KeyError, match=r"unknown metric 'cre' \(did you mean 'cer'\?\); valid metrics: cer, wer"):
        get_metric("cre")
