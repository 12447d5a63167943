"""What an xdist worker sends the controller, made UTF-8: every report of every run under xdist passes here (OCR or
not), so this module imports nothing at module level; the text cleaning is imported on the first report."""

from __future__ import annotations

from typing import Any

__all__ = ["clean_serialized"]


def clean_serialized(data: Any) -> Any:
    """What an xdist worker sends must be UTF-8: a lone surrogate (from a ``\\ud800`` escape in ground truth or in a
    server's answer) in the OCR record's envelope, a failure message or a property is replaced with U+FFFD here, and the record
    counts its own replacements as ``replaced_characters`` (the run file's total includes them).

    Args:
        data: a report serialized by pytest (``pytest_report_to_serializable``), the OCR record's envelope under ``ocr_envelope``
            (sent packed: its record as one JSON text).

    Returns:
        The same data with every string UTF-8 encodable.
    """
    if not isinstance(data, dict):
        return data
    from pytest_ocrmetrics.core.safe_text import clean_run

    sent = data.pop("ocr_envelope", None)
    data = clean_run(data)[0]
    if isinstance(sent, dict):  # the record as one JSON text (runfile.record.pack_envelope)
        from pytest_ocrmetrics.runfile.record import pack_envelope

        data["ocr_envelope"] = pack_envelope(sent)  # type: ignore[arg-type]
    return data
