"""pytest-ocrmetrics: OCR quality as pytest assertions.

The metric library lives in :mod:`pytest_ocrmetrics.metrics` and never imports pytest; the pytest glue is
:mod:`pytest_ocrmetrics.plugin`. The assertion helpers are importable from here::

    from pytest_ocrmetrics import assert_cer_below, assert_field_f1
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "assert_metric",
    "assert_cer_below",
    "assert_wer_below",
    "assert_ned_below",
    "assert_field_f1",
    "assert_exact_match",
    "assert_json_valid",
    "Document",
    "OcrOutput",
    "DocumentScore",
    "OCRDatasetEvaluator",
]


def __getattr__(name: str) -> Any:
    # imported lazily so that `import pytest_ocrmetrics` stays fast
    if name.startswith("assert_"):
        from pytest_ocrmetrics import assertions

        return getattr(assertions, name)
    if name == "Document":
        from pytest_ocrmetrics.core.documents import Document

        return Document
    if name == "OcrOutput":
        from pytest_ocrmetrics.engines.base import OcrOutput

        return OcrOutput
    if name == "DocumentScore":
        from pytest_ocrmetrics.scoring.document import DocumentScore

        return DocumentScore
    if name == "OCRDatasetEvaluator":
        from pytest_ocrmetrics.evaluator import OCRDatasetEvaluator

        return OCRDatasetEvaluator
    raise AttributeError(f"module 'pytest_ocrmetrics' has no attribute {name!r}")
