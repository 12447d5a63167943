"""Assertion failure messages: what a failing test prints."""

from __future__ import annotations

import pytest

from pytest_ocrmetrics import assert_cer_below, assert_field_f1
from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import OcrOutput


def _message(fields: dict[str, str], output: OcrOutput) -> str:
    document = Document("r.jpg", "receipts", None, None, fields=fields)
    with pytest.raises(AssertionError) as failure:
        assert_field_f1(output, 0.99, document=document)
    return str(failure.value)


def test_field_failure_shows_each_expected_and_found_value() -> None:
    message = _message({"total": "9.00", "date": "19/10/2018", "company": "ACME"},
                       OcrOutput(text="", fields={"total": "9.0O", "company": "ACME", "tax": "1.00"}))
    lines = message.splitlines()
    assert lines[0].startswith("field_f1 = 0.3333, must be >= 0.99 (from the test); document 'r.jpg'")
    assert lines[1:] == [
        "fields from the engine:",
        "  total: expected '9.00', found '9.0O'",
        "  date: expected '19/10/2018', found nothing",
        "  extracted but not in the reference: tax",
    ]


def test_field_failure_for_a_text_engine_says_the_values_were_located_in_the_text() -> None:
    message = _message({"date": "19/10/2018"}, OcrOutput(text="DATE 19/10/2O18 12:00"))
    assert "fields located in the OCR text:\n  date: expected '19/10/2018', found '19/10/2O18'" in message


def test_field_failure_is_capped_and_escapes_hostile_values() -> None:
    fields = {f"f{i:02d}": f"value {i}" for i in range(25)}
    fields["f00"] = "\x1b[31m\u202eevil\ud800" + "x" * 200
    message = _message(fields, OcrOutput(text="", fields={}))
    assert "… and 15 more incorrect or missing fields" in message
    assert len(message.splitlines()) == 13  # head, "fields ...:", 10 fields, "… and 15 more"
    assert "\x1b" not in message and "\u202e" not in message and "\\x1b" in message
    message.encode("utf-8")  # the lone surrogate is escaped, not raw
    assert "x" * 60 not in message and "…" in message.splitlines()[2]  # long values are cut


def test_text_failure_excerpt_uses_the_gap_mark() -> None:
    with pytest.raises(AssertionError) as failure:
        assert_cer_below("INVOICE 12345", 0.01, reference="INVOICE #12345")
    assert "ref: INVOICE #12345" in str(failure.value) and "hyp: INVOICE ∅12345" in str(failure.value)


def test_task_failure_lists_each_task_and_its_outcome() -> None:
    from pytest_ocrmetrics.assertions import assert_metric
    from pytest_ocrmetrics.scoring.document import ScoringOptions, score_document

    document = Document("q.png", "docs", None, "The total is 12.50", tasks=(
        {"type": "qa", "reference": {"answer": "12.50"}}, {"type": "classification", "reference": {"class": "invoice"}}))
    score = score_document(document, OcrOutput(text="The total is 12.50", fields={"answer": "13", "class": "invoice"}),
                           engine="e", options=ScoringOptions(extra_metrics=("task_success",)))
    assert score.metrics["task_success"] == 0.5
    with pytest.raises(AssertionError) as failure:
        assert_metric(score, "task_success", 1.0)
    lines = str(failure.value).splitlines()
    assert lines[0].startswith("task_success = 0.5, must be >= 1")
    assert lines[1:] == ["- task 1 (qa): answer_incorrect (quality 0)", "- task 2 (classification): succeeded (quality 1)"]


def test_helper_limits_take_percentages_and_refuse_a_percent_typo() -> None:
    """Issue 19 item 2: ``assert_cer_below(score, 5)`` let a CER of 7 % pass (a limit of 500 %); it is refused, and
    ``"5%"`` is read as 0.05 by the same rule as every other limit."""
    from pytest_ocrmetrics.assertions import assert_metric
    from pytest_ocrmetrics.metrics.thresholds import LimitError

    hypothesis, reference = "INV0ICE #12345", "INVOICE #12345"  # CER 1/14 = 0.0714
    assert assert_cer_below(hypothesis, "8%", reference=reference) == pytest.approx(1 / 14)
    with pytest.raises(AssertionError, match=r"cer = 0.07143, must be <= 0.05 \(from the test\)"):
        assert_cer_below(hypothesis, "5%", reference=reference)
    with pytest.raises(LimitError) as refused:
        assert_cer_below(hypothesis, 5, reference=reference)
    assert str(refused.value) == "the limit 5 on cer reads as 500 %; write 0.05 for 5 % (or '500%' if you mean it)"
    with pytest.raises(AssertionError, match=r"must be <= 500% \(from the test\)"):
        assert_metric("x" * 80, "cer", "500%", reference="y")  # CER 80: a limit above 1 said on purpose, and shown so
    with pytest.raises(LimitError, match="field_f1 is a fraction between 0 and 1; write 0.9 for 90 %"):
        assert_field_f1("x", 90, reference="x")


def test_assert_json_valid_with_a_schema_needs_no_reference() -> None:
    """Issue 20 C5: ``assert_json_valid(text, schema=...)`` demanded ``reference=``; the schema is all it compares."""
    from pytest_ocrmetrics.assertions import assert_json_valid

    schema = {"type": "object", "required": ["invoice_number", "date", "total"]}  # document 000, 2.2's example
    assert assert_json_valid('{"invoice_number": "INV-001", "date": "2024-03-15", "total": "$150.00"}',
                             schema=schema) == 1.0
    with pytest.raises(AssertionError) as failure:
        assert_json_valid('{"invoice_number": "INV-001"}', schema=schema)
    lines = str(failure.value).splitlines()
    assert "is not valid JSON for the schema" in lines[0]
    assert lines[1:] == ["- $: 'date' is a required property", "- $: 'total' is a required property"]


@pytest.mark.parametrize(("helper", "limit", "value"), [
    ("assert_sequence_accuracy_above", 0.5, 2 / 4),  # document 001: "hello form world biblicus" is 2/4
    ("assert_lcs_ratio_above", 0.5, 3 / 4),
    ("assert_bigram_overlap_above", 0.3, 1 / 3),
    ("assert_token_ratio_below", 1.5, None),
])
def test_a_helper_given_a_reference_computes_its_metric(helper: str, limit: float, value: float | None) -> None:
    """Issue 20 C5: an opt-in metric's helper with ``reference=`` said the metric "was not computed"; a reference
    given to a helper asks for that helper's metric."""
    import pytest_ocrmetrics.assertions as assertions

    hypothesis = "hello form world biblicus" if "bigram" not in helper else "hello world biblicus from"
    got = getattr(assertions, helper)(hypothesis, limit, reference="hello world from biblicus")
    assert got == pytest.approx(value) if value is not None else 0 < got <= limit
    with pytest.raises(AssertionError, match=r"must be (>=|<=)"):
        getattr(assertions, helper)(hypothesis, 0.99 if helper.endswith("above") else 0.01,
                                    reference="hello world from biblicus")


def test_a_metric_the_document_cannot_have_still_says_why() -> None:
    from pytest_ocrmetrics.assertions import assert_metric

    with pytest.raises(AssertionError, match="field_f1 was not computed for document '\\(inline\\)': it needs "
                                             "ground-truth fields"):
        assert_metric("x", "field_f1", 0.5, reference="x")
