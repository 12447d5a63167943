"""Format 1: a folder with ``ground_truth.json`` and ``images/``.

``ground_truth.json`` maps an image path (relative to ``images/``) to its entry::

    {
      "doc_001.png": {"full_text": "ACME Corp\\nTotal 12.50", "fields": {"total": "12.50"}},
      "scans/doc_002.png": {"full_text": "...", "thresholds": {"cer": 0.1}, "tags": ["blurred"],
                            "schema": {"type": "object", "required": ["total"]}}
    }

The document id is the key (normalized: ``./a.png`` is ``a.png``). Detected when the folder contains
``ground_truth.json`` (or when that file itself is given).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_ocrmetrics.datasets.base import (
    Dataset,
    DatasetError,
    document_from_entry,
    entry_error,
    finish,
    json_error_message,
    parse_json,
    read_text,
    resolve_inside,
)

__all__ = ["GroundTruthJsonLoader", "GROUND_TRUTH_FILE", "IMAGES_DIR"]

GROUND_TRUTH_FILE = "ground_truth.json"
IMAGES_DIR = "images"


def _no_duplicate_keys(path: Path):  # type: ignore[no-untyped-def]
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                raise DatasetError(f"{path}: key {key!r} appears twice in one object; keep one entry per key.")
            result[key] = value
        return result

    return hook


class GroundTruthJsonLoader:
    """Loads format 1 (``ground_truth.json`` + ``images/``)."""

    name = "ground_truth_json"
    description = f"a folder with {GROUND_TRUTH_FILE} and {IMAGES_DIR}/"

    def detect(self, path: Path) -> bool:
        if path.is_file():
            return path.name == GROUND_TRUTH_FILE
        return (path / GROUND_TRUTH_FILE).is_file()

    def load(self, path: Path, *, name: str) -> Dataset:
        root = path.parent if path.is_file() else path
        gt_path = root / GROUND_TRUTH_FILE
        text = read_text(gt_path)
        try:
            data = parse_json(text, object_pairs_hook=_no_duplicate_keys(gt_path))
        except json.JSONDecodeError as exc:
            raise DatasetError(json_error_message(gt_path, exc)) from None
        if not isinstance(data, dict):
            raise DatasetError(
                f"{gt_path}: the top level must be an object mapping image paths to entries, "
                f"got {type(data).__name__}."
            )
        images = root / IMAGES_DIR
        documents = []
        for key, entry in data.items():
            where, source = f"{gt_path}, entry {key!r}", f"{gt_path}: {key}"
            try:
                doc_id, image_path = resolve_inside(images, key, source=where)
            except DatasetError as exc:  # this entry's test errors; the others run
                documents.append(entry_error(key, str(exc), dataset=name, source=source))
                continue
            documents.append(document_from_entry(
                entry, doc_id=doc_id, image_path=image_path, dataset=name, source=source, where=where,
            ))
        return finish(documents, name=name, root=root, format=self.name)
