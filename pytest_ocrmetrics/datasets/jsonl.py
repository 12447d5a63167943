"""Format 4: a JSONL manifest, one document per line.

Each non-blank line is an object with ``image`` (a path relative to the manifest's folder) and the keys of format 1
(``full_text``, ``fields``, ``thresholds``, ``tags``, ``schema``)::

    {"image": "scans/a.png", "full_text": "Hello", "fields": {"name": "Hello"}}
    {"image": "scans/b.png", "full_text": "World", "thresholds": {"cer": 0.2}}

The document id is the image path relative to the manifest's folder. Detected for a ``*.jsonl`` file, or a folder
containing ``manifest.jsonl``. Blank lines are ignored; a line that is not valid JSON is an error naming its line.
"""

from __future__ import annotations

import json
from pathlib import Path

from pytest_ocrmetrics.datasets.base import (
    Dataset,
    DatasetError,
    document_from_entry,
    finish,
    json_error_message,
    parse_json,
    jsonl_lines,
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
        return (path / MANIFEST_FILE).is_file()

    def load(self, path: Path, *, name: str) -> Dataset:
        manifest = path if path.is_file() else path / MANIFEST_FILE
        root = manifest.parent
        documents = []
        for number, line in jsonl_lines(manifest, "manifest"):
            where = f"{manifest}:{number}"
            try:
                entry = parse_json(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(json_error_message(manifest, exc, line=number)) from None
            if not isinstance(entry, dict):
                raise DatasetError(f"{where}: each line must be a JSON object with 'image' and 'full_text'.")
            image = entry.get("image")
            if not isinstance(image, str):
                got = "is missing" if image is None else f"must be a string, got {json.dumps(image)}"
                raise DatasetError(f"{where}: 'image' {got}; give the image path relative to the manifest.")
            doc_id, image_path = resolve_inside(root, image, source=where)
            documents.append(document_from_entry(
                entry, doc_id=doc_id, image_path=image_path, dataset=name, source=where,
                where=f"{where} (image {image!r})", extra_keys=("image",),
            ))
        return finish(documents, name=name, root=root, format=self.name)
