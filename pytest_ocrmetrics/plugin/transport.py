"""What an xdist worker sends the controller, made UTF-8: every report of every run under xdist passes here (OCR or
not), so this module imports nothing at module level; the text cleaning is imported on the first report."""

from __future__ import annotations

from typing import Any

__all__ = ["clean_serialized", "unpack_properties"]


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
    ours = data.get("ocr_properties")
    if isinstance(ours, int):
        _pack_properties(data, ours)
    return data


def _pack_properties(data: dict[str, Any], count: int) -> None:
    """The OCR test's JUnit properties, the last ``count`` of the report's ``user_properties`` (name and value
    strings), sent as one JSON text under ``ocr_properties``: execnet writes and reads each tuple and string of a
    list in Python, which for the properties of a call and a teardown report cost more than the record's whole text.
    :func:`unpack_properties` puts them back on the controller."""
    import json

    properties = data.get("user_properties")
    del data["ocr_properties"]
    if not isinstance(properties, list) or not 0 < count <= len(properties):
        return
    tail = properties[-count:]
    if all(isinstance(pair, tuple) and len(pair) == 2 and type(pair[0]) is str and type(pair[1]) is str
           for pair in tail):
        data["user_properties"] = properties[:-count]
        data["ocr_properties"] = json.dumps(tail)


def unpack_properties(report: Any) -> None:
    """On the controller: the JUnit properties a worker sent as one text (:func:`_pack_properties`) back at the end
    of the report's ``user_properties``, as ``(name, value)`` tuples, as the worker's report had them."""
    text = getattr(report, "ocr_properties", None)
    if isinstance(text, str):
        import json

        del report.ocr_properties
        report.user_properties = [*report.user_properties, *(tuple(pair) for pair in json.loads(text))]
