"""What an xdist worker sends the controller, made UTF-8: every report of every run under xdist passes here (OCR or
not), so this module imports nothing at module level; the text cleaning is imported on the first report."""

from __future__ import annotations

from typing import Any

__all__ = ["clean_serialized"]


def clean_serialized(data: Any) -> Any:
    """What an xdist worker sends must be UTF-8: a lone surrogate (from a ``\\ud800`` escape in ground truth or in a
    server's answer) in the OCR record, a failure message or a property is replaced with U+FFFD here, and the record
    counts its own replacements as ``replaced_characters`` (the run file's total includes them).

    Args:
        data: a report serialized by pytest (``pytest_report_to_serializable``), the OCR record under ``ocr_record``.

    Returns:
        The same data with every string UTF-8 encodable.
    """
    if not isinstance(data, dict):
        return data
    from pytest_ocrmetrics.core.safe_text import clean_run

    record = data.get("ocr_record")
    if isinstance(record, dict):
        record, count = clean_run(record)
        data["ocr_record"] = {**record, "replaced_characters": count} if count else record
    return clean_run(data)[0]
