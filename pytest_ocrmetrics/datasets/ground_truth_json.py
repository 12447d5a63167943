"""Format 1: a folder with ``ground_truth.json`` and ``images/``.

``ground_truth.json`` maps an image path (relative to ``images/``) to its entry::

    {
      "doc_001.png": {"full_text": "ACME Corp\\nTotal 12.50", "fields": {"total": "12.50"}},
      "scans/doc_002.png": {"full_text": "...", "thresholds": {"cer": 0.1}, "tags": ["blurred"],
                            "schema": {"type": "object", "required": ["total"]}}
    }

The document id is the key (normalized: ``./a.png`` is ``a.png``). Detected when the folder contains
``ground_truth.json`` (or when that file itself is given); a ``ground_truth.json`` that is not a regular file (a
FIFO, a link to ``/dev/zero``) or leads outside the folder is refused with a sentence saying so. An entry nested
deeper than Python's JSON parser allows errors that entry's document only (:func:`_entries_one_by_one`).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Callable

from pytest_ocrmetrics.datasets.base import (
    Dataset,
    DatasetError,
    DatasetFolder,
    document_from_entry,
    entry_error,
    finish,
    json_error_message,
    nested_too_deep,
    parse_json,
    resolve_inside,
)

__all__ = ["GroundTruthJsonLoader", "GROUND_TRUTH_FILE", "IMAGES_DIR"]

GROUND_TRUTH_FILE = "ground_truth.json"
IMAGES_DIR = "images"


def _no_duplicate_keys(path: Path) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
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
        # lexists: a ground_truth.json that is a FIFO or a link to a device is this format, refused by load()
        return path.is_dir() and os.path.lexists(path / GROUND_TRUTH_FILE)

    def load(self, path: Path, *, name: str) -> Dataset:
        root = path.parent if path.is_file() else path
        folder = DatasetFolder(root)
        gt_path = root / GROUND_TRUTH_FILE
        text = folder.read_text(gt_path)
        hook = _no_duplicate_keys(gt_path)
        too_deep: set[str] = set()
        try:
            data = parse_json(text, object_pairs_hook=hook)
        except json.JSONDecodeError as exc:
            raise DatasetError(json_error_message(gt_path, exc)) from None
        except RecursionError:  # one entry nested 100,000 deep: read the others one by one
            data, too_deep = _entries_one_by_one(text, gt_path, hook)
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
            if key in too_deep:
                documents.append(entry_error(doc_id, nested_too_deep(f"{where}: the entry"), dataset=name,
                                             source=source, image_path=image_path))
                continue
            documents.append(document_from_entry(
                entry, doc_id=doc_id, image_path=image_path, dataset=name, source=source, where=where,
            ))
        return finish(documents, name=name, root=root, format=self.name, folder=folder)


_WHITESPACE = re.compile(r"[ \t\n\r]*")
_BRACKET_OR_QUOTE = re.compile(r'["\[\]{}]')


def _entries_one_by_one(
    text: str, gt_path: Path, hook: Callable[[list[tuple[str, Any]]], dict[str, Any]]
) -> tuple[dict[str, Any], set[str]]:
    """The top-level object of a ``ground_truth.json`` whose one-call parse hit :class:`RecursionError`, read entry
    by entry: ``(entries, keys nested too deep)``. A too-deep entry is skipped over bracket by bracket (no
    recursion) and named, so only its document errors; the file's other problems raise :class:`DatasetError` as
    the one-call parse would. Only this rare path pays for the slower reading.
    """
    decoder: Any = json.JSONDecoder(strict=False, object_pairs_hook=hook)
    scan: Callable[[str, int], tuple[Any, int]] = decoder.scan_once  # set by JSONDecoder.__init__; not in typeshed
    too_deep: set[str] = set()
    pairs: list[tuple[str, Any]] = []

    def skip(pos: int) -> int:
        return _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]

    def fail(message: str, pos: int) -> DatasetError:
        return DatasetError(json_error_message(gt_path, json.JSONDecodeError(message, text, pos)))

    pos = skip(0)
    if text[pos:pos + 1] != "{":  # the top level itself is nested too deep: nothing to read entry by entry
        raise DatasetError(nested_too_deep(f"{gt_path}: the file"))
    pos = skip(pos + 1)
    if text[pos:pos + 1] == "}":
        pos += 1
    else:
        while True:
            if text[pos:pos + 1] != '"':
                raise fail("Expecting property name enclosed in double quotes", pos)
            key, pos = scan(text, pos)
            pos = skip(pos)
            if text[pos:pos + 1] != ":":
                raise fail("Expecting ':' delimiter", pos)
            pos = skip(pos + 1)
            try:
                value, pos = scan(text, pos)
            except StopIteration as exc:
                raise fail("Expecting value", exc.value) from None
            except json.JSONDecodeError as exc:
                raise DatasetError(json_error_message(gt_path, exc)) from None
            except RecursionError:
                value, pos = None, _skip_value(text, pos, gt_path)
                too_deep.add(key)
            pairs.append((key, value))
            pos = skip(pos)
            if text[pos:pos + 1] == ",":
                pos = skip(pos + 1)
                continue
            if text[pos:pos + 1] == "}":
                pos += 1
                break
            raise fail("Expecting ',' delimiter", pos)
    if skip(pos) != len(text):
        raise fail("Extra data", skip(pos))
    return hook(pairs), too_deep


def _skip_value(text: str, pos: int, gt_path: Path) -> int:
    """The position after the JSON array or object starting at ``pos``, found by counting brackets outside strings
    (iteratively: the value is too deep for the recursive parser). Its content is not checked: its entry errors."""
    depth, start = 0, pos
    while True:
        found = _BRACKET_OR_QUOTE.search(text, pos)
        if found is None:
            raise DatasetError(json_error_message(gt_path, json.JSONDecodeError("Unterminated value", text, start)))
        pos = found.end()
        char = found.group()
        if char == '"':
            pos = _string_end(text, pos, gt_path)
        elif char in "[{":
            depth += 1
        else:
            depth -= 1
            if depth <= 0:
                return pos


def _string_end(text: str, pos: int, gt_path: Path) -> int:
    """The position after the closing quote of the JSON string whose content starts at ``pos``."""
    while True:
        quote = text.find('"', pos)
        if quote < 0:
            raise DatasetError(json_error_message(gt_path, json.JSONDecodeError("Unterminated string", text, pos)))
        backslashes = 0
        while text[quote - 1 - backslashes] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return quote + 1
        pos = quote + 1
