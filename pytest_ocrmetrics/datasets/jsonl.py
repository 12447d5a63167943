"""Format 4: a JSONL manifest, one document per line.

Each non-blank line is an object with ``image`` (a path relative to the manifest's folder) and the keys of format 1
(``full_text``, ``fields``, ``thresholds``, ``tags``, ``schema``)::

    {"image": "scans/a.png", "full_text": "Hello", "fields": {"name": "Hello"}}
    {"image": "scans/b.png", "full_text": "World", "thresholds": {"cer": 0.2}}

The document id is the image path relative to the manifest's folder. Detected for a ``*.jsonl`` file, or a folder
containing ``manifest.jsonl``. Blank lines are ignored; a line that is not valid JSON (or is nested deeper than
Python's JSON parser allows) errors that line's document, named by its line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pytest_ocrmetrics.datasets.base import (
    Dataset,
    DatasetError,
    DatasetFolder,
    document_from_entry,
    entry_error,
    finish,
    json_error_message,
    jsonl_lines,
    nested_too_deep,
    parse_json,
    resolve_inside,
)

__all__ = ["JsonlManifestLoader", "MANIFEST_FILE"]

MANIFEST_FILE = "manifest.jsonl"


class JsonlManifestLoader:
    """Loads format 4 (a JSONL manifest)."""

    name = "jsonl"
    description = f"a *.jsonl manifest (or a folder with {MANIFEST_FILE})"

    def detect(self, path: Path) -> bool:
        if path.is_file():
            return path.suffix.lower() == ".jsonl"
        # lexists: a manifest.jsonl that is a FIFO or a link to a device is this format, refused by load()
        return path.is_dir() and os.path.lexists(path / MANIFEST_FILE)

    def load(self, path: Path, *, name: str) -> Dataset:
        manifest = path if path.is_file() else path / MANIFEST_FILE
        root = manifest.parent
        folder = DatasetFolder(root)
        documents = []
        for number, line in jsonl_lines(manifest, "manifest", root=folder):
            where = f"{manifest}:{number}"
            entry: Any = None
            try:
                entry = _entry(line, manifest, number)
                image = entry["image"]
                doc_id, image_path = resolve_inside(root, image, source=where)
            except DatasetError as exc:  # this line's test errors (named by its image, or by the line); others run
                image = entry.get("image") if isinstance(entry, dict) else None
                doc_id = image if isinstance(image, str) and image.strip() else f"{manifest.name}:{number}"
                documents.append(entry_error(doc_id, str(exc), dataset=name, source=where))
                continue
            documents.append(document_from_entry(
                entry, doc_id=doc_id, image_path=image_path, dataset=name, source=where,
                where=f"{where} (image {image!r})", extra_keys=("image",),
            ))
        return finish(documents, name=name, root=root, format=self.name, folder=folder)


def _entry(line: str, manifest: Path, number: int) -> dict[str, Any]:
    """One manifest line's entry: a JSON object with a string ``image``, or :class:`DatasetError` saying why not."""
    try:
        entry = parse_json(line)
    except json.JSONDecodeError as exc:
        raise DatasetError(json_error_message(manifest, exc, line=number)) from None
    except RecursionError:
        raise DatasetError(nested_too_deep(f"{manifest}:{number}: the line")) from None
    where = f"{manifest}:{number}"
    if not isinstance(entry, dict):
        raise DatasetError(f"{where}: each line must be a JSON object with 'image' and 'full_text'.")
    image = entry.get("image")
    if not isinstance(image, str):
        got = "is missing" if image is None else f"must be a string, got {json.dumps(image)}"
        raise DatasetError(f"{where}: 'image' {got}; give the image path relative to the manifest.")
    return entry
