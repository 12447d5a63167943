"""Receipts: the full text (CER) and the key fields a bookkeeping system needs (company, address, date, total).

Each test runs once per receipt and engine (ids ``<engine>-<document id>``). The engines used here return plain
text, so each field is located in the OCR text and compared the specification's way (``str(v).strip().lower()``);
``--ocr-field-compare=normalized`` also folds dates, amounts and punctuation.

The limits below are for clean receipts. The degraded variants (``*_blur``, ``*_noise``, ``*_rotated``) carry relaxed
per-document thresholds in ``data/ground_truth.json`` (``"thresholds": {"cer": 0.15, "field_f1": 0.25}``), which take
precedence over the limits written in the test.
"""

import pytest

from pytest_ocrmetrics import assert_cer_below, assert_field_f1

pytestmark = pytest.mark.ocr_dataset("data", name="receipts")


def test_text(ocr_score):
    assert_cer_below(ocr_score, 0.08)


def test_fields(ocr_score):
    assert_field_f1(ocr_score, 0.75)
