"""Helpers of plugin tests: a tiny dataset with replayed predictions, and usage-error lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

# a valid 1x1 PNG: the replay engine never decodes images, but a document's image must exist
PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


DOCS: dict[str, dict[str, Any]] = {
    "doc_001.png": {"full_text": "INVOICE #12345\nTOTAL: 150.00", "fields": {"invoice": "12345", "total": "150.00"}},
    "doc_002.png": {"full_text": "Hello world", "fields": {}},
    "doc_003.png": {"full_text": "Quick brown fox", "thresholds": {"cer": 0.5}},
}


PREDICTIONS = {
    "doc_001": "INV0ICE #12345\nTOTAL: 150.00",  # 1 error in 28 characters
    "doc_002": "Hello world",
    "doc_003": "Quick brwn fx",  # 2 errors in 15 characters: fails cer<=0.1 unless the document's own 0.5 applies
}


def make_dataset(root: Path, docs: dict[str, dict[str, Any]] | None = None, predictions: dict[str, str] | None = None,
                 *, images: bool = True) -> Path:
    """Write ``root/invoices`` (ground_truth.json + images/) and ``root/preds`` (replay predictions)."""
    docs = DOCS if docs is None else docs
    predictions = PREDICTIONS if predictions is None else predictions
    data = root / "invoices"
    (data / "images").mkdir(parents=True, exist_ok=True)
    (data / "ground_truth.json").write_text(json.dumps(docs, ensure_ascii=False), encoding="utf-8")
    if images:
        for name in docs:  # distinct bytes per image: engine outputs are cached by image content
            (data / "images" / name).write_bytes(PNG_1X1 + name.encode())
    preds = root / "preds"
    preds.mkdir(exist_ok=True)
    for stem, text in predictions.items():
        (preds / f"{stem}.txt").write_text(text, encoding="utf-8")
    return data


def usage_error_line(result: pytest.RunResult) -> str:
    """The one non-empty line pytest printed for a usage error (without its ``ERROR: `` prefix)."""
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    lines = [line for line in result.stderr.lines + result.stdout.lines if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("ERROR: ")
    return lines[0].removeprefix("ERROR: ")
