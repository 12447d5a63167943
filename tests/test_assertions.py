"""Assertion failure messages: what a failing test prints."""

from __future__ import annotations

import pytest

from pytest_ocrmetrics import assert_cer_below, assert_field_f1
from pytest_ocrmetrics.documents import Document
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
