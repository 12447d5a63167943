"""score_document: field values located in plain OCR text the way the field comparison matches them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import OcrOutput
from pytest_ocrmetrics.scoring.document import ScoringOptions, fields_from_text, score_document

RECEIPT = "Indah Gift & Home Deco\n27, Jalan Dedap 13, Taman Johor Jaya,\n81100 Johor Bahru, Johor.\nTotal RM 60.30\n"
FIELDS = {"company": "INDAH GIFT & HOME DECO",
          "address": "27, JALAN DEDAP 13, TAMAN JOHOR JAYA, 81100 JOHOR BAHRU, JOHOR.", "total": "60.30"}


def test_uppercase_reference_values_are_found_in_title_case_text() -> None:
    found = fields_from_text(FIELDS, RECEIPT, ignore_case=True)
    assert found["company"] == "Indah Gift & Home Deco"  # the span as written in the text
    assert found["address"].startswith("27, Jalan Dedap 13") and found["address"].endswith("Johor.")
    assert fields_from_text(FIELDS, RECEIPT)["company"] != "Indah Gift & Home Deco"  # case-sensitive by default


def test_field_f1_of_a_text_engine_ignores_case_when_the_comparison_does() -> None:
    document = Document("r.jpg", "receipts", None, None, fields=FIELDS)
    normalized = ScoringOptions(field_compare="normalized")  # the address spans a line break: needs whitespace folding
    score = score_document(document, OcrOutput(text=RECEIPT), engine="e", options=normalized)
    assert score.metrics["field_f1"] == 1.0, score.details["fields"]
    exact = score_document(document, OcrOutput(text=RECEIPT), engine="e", options=ScoringOptions(field_compare="exact"))
    assert exact.metrics["field_f1"] < 1.0  # exact comparison keeps case: located case-sensitively


def test_the_default_comparison_reads_a_value_broken_over_lines_as_one_line() -> None:
    """The specification's lowercase comparison (the default) on an address the page printed over two lines."""
    document = Document("r.jpg", "receipts", None, None, fields=FIELDS)
    score = score_document(document, OcrOutput(text=RECEIPT), engine="e")
    assert score.metrics["field_f1"] == 1.0, score.details["fields"]
    assert fields_from_text(FIELDS, RECEIPT, ignore_case=True)["address"].count("\n") == 1  # not joined unless asked
    joined = fields_from_text(FIELDS, RECEIPT, ignore_case=True, join_lines=True)["address"]
    assert joined == "27, Jalan Dedap 13, Taman Johor Jaya, 81100 Johor Bahru, Johor."
    multi_line = {"address": "TAMAN JOHOR JAYA,\n81100 JOHOR BAHRU"}  # a reference written over lines keeps them
    assert fields_from_text(multi_line, RECEIPT, ignore_case=True, join_lines=True)["address"] == (
        "Taman Johor Jaya,\n81100 Johor Bahru")


def test_case_folding_that_changes_length_keeps_offsets() -> None:
    # "İ".lower() is two code points: the located span must still be cut from the right place
    found = fields_from_text({"city": "ISTANBUL"}, "İzmir, Istanbul, Ankara", ignore_case=True)
    assert found["city"] == "Istanbul"


def test_details_list_each_mismatch_with_expected_and_found() -> None:
    document = Document("r.jpg", "receipts", None, None, fields={"total": "9.00", "date": "19/10/2018"})
    score = score_document(document, OcrOutput(text="", fields={"total": "9.0O"}), engine="e")
    assert score.details["fields"]["mismatches"] == [
        {"field": "total", "expected": "9.00", "found": "9.0O"},
        {"field": "date", "expected": "19/10/2018", "found": None},
    ]


@pytest.mark.slow
def test_rapidocr_reads_title_case_sroie_fields_correctly(shared_data: Path) -> None:
    """Two SROIE receipts whose address rapidocr reads right in title case (uppercase ground truth): F1 0.75 -> 1.0."""
    if importlib.util.find_spec("rapidocr") is None or importlib.util.find_spec("onnxruntime") is None:
        pytest.skip('rapidocr is not installed: pip install "pytest-ocrmetrics[rapidocr]"')
    from pytest_ocrmetrics.datasets import load_dataset
    from pytest_ocrmetrics.engines.registry import default_registry

    documents = [d for d in load_dataset(shared_data / "sroie_receipts") if d.id in ("138.jpg", "152.jpg")]
    assert len(documents) == 2
    engine = default_registry(entry_points=False).create("rapidocr", {})
    for document in documents:
        score = score_document(document, engine.recognize(document), engine="rapidocr",
                               options=ScoringOptions(field_compare="normalized"))  # addresses span lines
        assert score.metrics["field_f1"] == 1.0, score.details["fields"]
