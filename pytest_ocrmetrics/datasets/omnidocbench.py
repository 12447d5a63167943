"""An OmniDocBench folder (``opendatalab/OmniDocBench``): one ground-truth JSON of annotated pages, and their images.

The ground truth is the benchmark's own JSON, under any file name, at the top of the folder; the page images, when
there are any, are in ``images/`` beside it::

    omnidocbench/
        OmniDocBench.json        [{"page_info": {"image_path": "x.pdf_3.jpg", "page_attribute": {...}, ...},
                                   "layout_dets": [{"category_type": "text_block", "order": 1, "text": "...",
                                                    "ignore": false, ...}, ...],
                                   "extra": {"relation": [...]}}, ...]
        images/x.pdf_3.jpg

A document is one page: id the page's ``image_path`` (what the benchmark names it by, and what its predictions are
named after: ``<image stem>.md``), tags its ``page_attribute`` values as ``key:value`` (``language:english``,
``layout:double_column``, one tag per entry of a list such as ``special_issue``), so the per-tag summary is the
benchmark's table per attribute. The page object itself rides on the document (``Document.omnidoc_page``) and is
scored by :mod:`pytest_ocrmetrics.metrics.omnidoc`.

Loading follows the other formats' rules. A file that is not JSON, not UTF-8 or not a list stops the dataset with one
sentence (no page of it can be trusted). A page that is not an object or has no usable ``image_path`` is skipped with
a reason naming ``file, page N`` (it has no id a test could carry); a second page with the same ``image_path`` is
skipped likewise. A page with an id whose content is malformed (``layout_dets`` not a list, a block without
``category_type``, a ``text`` that is not a string, a ``page_attribute`` value that is no string) errors that page's
test; the rest of the dataset runs.

Images are optional. A page whose image is in ``images/`` is checked as every dataset's images are (inside the
folder, a regular file, an image by its first bytes; otherwise that page errors). A page whose image is absent (no
``images/``, or no such file) still loads: replayed predictions (``--ocr-engine=replay:DIR``, ``DIR/<stem>.md``) are
scored, and a live engine errors that page with a sentence naming the missing image.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath
from typing import Any, Mapping

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.datasets.base import (
    Dataset,
    DatasetError,
    DatasetFolder,
    SkippedEntry,
    capped_skipped,
    entry_error,
    image_error,
    json_error_message,
    nested_too_deep,
    parse_json,
    read_regular_head,
    resolve_inside,
)

__all__ = ["OmniDocBenchLoader", "IMAGES_DIR", "page_tags", "is_omnidocbench_json", "prediction_stem"]

IMAGES_DIR = "images"

_SNIFF_BYTES = 65_536
_MARKERS = (b'"layout_dets"', b'"page_info"')
_TEXT_KEYS = ("text", "latex", "html")
_SIDECAR_FIELDS = ".fields.json"


def is_omnidocbench_json(path: Path) -> bool:
    """Whether ``path`` looks like an OmniDocBench ground-truth file, from its first bytes only (cheap, never blocks):
    a regular ``.json`` file (not a sidecar's ``x.fields.json``) whose content is a list (``[`` after any whitespace or
    byte-order mark) and whose first 64 KiB name ``layout_dets`` or ``page_info``."""
    name = path.name.lower()
    if not name.endswith(".json") or name.startswith(".") or name.endswith(_SIDECAR_FIELDS):
        return False  # a sidecar dataset's x.fields.json (one per image) is never opened to find out
    try:
        head = read_regular_head(path, _SNIFF_BYTES)
    except (OSError, ValueError):  # NotRegularFileError (a FIFO) is an OSError: not detected, never opened
        return False
    body = head.lstrip(b"\xef\xbb\xbf").lstrip()
    return body.startswith(b"[") and any(marker in head for marker in _MARKERS)


def _ground_truth_files(folder: Path) -> list[Path]:
    try:
        candidates = sorted(p for p in folder.iterdir() if p.suffix.lower() == ".json")
    except OSError:
        return []
    return [p for p in candidates if is_omnidocbench_json(p)]


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def page_tags(attributes: Any, where: str) -> tuple[str, ...]:
    """The tags of a page from its ``page_attribute`` object: ``key:value`` per attribute, one per entry of a list
    value; ``None`` or an absent object gives none. A value that is not a string (or a list of strings) raises
    :class:`DatasetError` naming it.

    >>> page_tags({"language": "english", "special_issue": ["table_span", "fuzzy_scan"]}, "gt.json, page 1")
    ('language:english', 'special_issue:table_span', 'special_issue:fuzzy_scan')
    """
    if attributes is None:
        return ()
    if not isinstance(attributes, Mapping):
        raise DatasetError(f"{where}: 'page_info.page_attribute' must be an object, got {_type_name(attributes)}.")
    tags: list[str] = []
    for key, value in attributes.items():
        values = value if isinstance(value, list) else [value]
        for item in values:
            if item is None:
                continue
            if not isinstance(item, str) or isinstance(item, bool):
                raise DatasetError(f"{where}: page attribute {key!r} must be a string or a list of strings, got "
                                   f"{json.dumps(value, ensure_ascii=False)[:80]}.")
            tags.append(f"{key}:{item}")
    return tuple(dict.fromkeys(tags))


def _check_layout(page: Mapping[str, Any], where: str) -> None:
    """Raise :class:`DatasetError` for a page whose ``layout_dets`` or ``extra.relation`` cannot be scored."""
    dets = page.get("layout_dets")
    if not isinstance(dets, list):
        raise DatasetError(f"{where}: 'layout_dets' must be a list of annotated blocks, got {_type_name(dets)}.")
    for number, det in enumerate(dets, start=1):
        at = f"{where}, block {number}"
        if not isinstance(det, Mapping):
            raise DatasetError(f"{at}: a block must be an object with 'category_type', got {_type_name(det)}.")
        category = det.get("category_type")
        if not isinstance(category, str) or not category:
            raise DatasetError(f"{at}: 'category_type' must be a block category such as \"text_block\", got "
                               f"{_type_name(category)}.")
        for key in _TEXT_KEYS:
            if det.get(key) is not None and not isinstance(det[key], str):
                raise DatasetError(f"{at}: {key!r} must be a string, got {_type_name(det[key])}.")
        order = det.get("order")
        if order is not None and (isinstance(order, bool) or not isinstance(order, (int, float))):
            raise DatasetError(f"{at}: 'order' must be a number or null, got {_type_name(order)}.")
        ignore = det.get("ignore")
        if ignore is not None and not isinstance(ignore, bool):
            raise DatasetError(f"{at}: 'ignore' must be true or false, got {_type_name(ignore)}.")
    extra = page.get("extra")
    if extra is None:
        return
    if not isinstance(extra, Mapping):
        raise DatasetError(f"{where}: 'extra' must be an object with 'relation', got {_type_name(extra)}.")
    relation = extra.get("relation")
    if relation is not None and (not isinstance(relation, list) or not all(isinstance(r, Mapping) for r in relation)):
        raise DatasetError(f"{where}: 'extra.relation' must be a list of objects, got {_type_name(relation)}.")


class OmniDocBenchLoader:
    """Loads an OmniDocBench folder: one ground-truth JSON (any name) at the top level, optional ``images/``."""

    name = "omnidocbench"
    description = f"an OmniDocBench folder (its ground-truth JSON, any name, and optional {IMAGES_DIR}/)"

    def detect(self, path: Path) -> bool:
        if path.is_file():
            return is_omnidocbench_json(path)
        return path.is_dir() and bool(_ground_truth_files(path))

    def load(self, path: Path, *, name: str) -> Dataset:
        if path.is_file():
            root, gt_path = path.parent, path
        else:
            root = path
            found = _ground_truth_files(path)
            if not found:
                raise DatasetError(f"{path}: no OmniDocBench ground-truth JSON (a list of pages with 'layout_dets' "
                                   "and 'page_info') at the top of the folder.")
            if len(found) > 1:
                names = ", ".join(repr(p.name) for p in found[:4])
                raise DatasetError(f"{path}: {len(found)} OmniDocBench ground-truth files ({names}); keep one per "
                                   "folder, or pass the file itself as --ocr-dataset.")
            gt_path = found[0]
        folder = DatasetFolder(root)
        text = folder.read_text(gt_path, "OmniDocBench ground-truth file")
        try:
            data = parse_json(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(json_error_message(gt_path, exc)) from None
        except RecursionError:
            raise DatasetError(nested_too_deep(f"{gt_path}: the file")) from None
        if not isinstance(data, list):
            raise DatasetError(f"{gt_path}: an OmniDocBench ground truth is a list of pages, got {_type_name(data)}.")
        images = root / IMAGES_DIR
        documents: list[Document] = []
        skipped: list[SkippedEntry] = []
        seen: dict[str, int] = {}
        for number, page in enumerate(data, start=1):
            where = f"{gt_path}, page {number}"
            info = page.get("page_info") if isinstance(page, Mapping) else None
            written = info.get("image_path") if isinstance(info, Mapping) else None
            if not isinstance(page, Mapping) or not isinstance(info, Mapping):
                what = "the page" if not isinstance(page, Mapping) else "'page_info'"
                value = page if not isinstance(page, Mapping) else info
                skipped.append(SkippedEntry(where, f"{where}: {what} must be an object with 'image_path', got "
                                                   f"{_type_name(value)}; the page is skipped."))
                continue
            if not isinstance(written, str) or not written.strip():
                skipped.append(SkippedEntry(where, f"{where}: 'page_info.image_path' must name the page's image, got "
                                                   f"{_type_name(written)}; the page is skipped."))
                continue
            try:
                doc_id, image_path = resolve_inside(images, written, source=where)
            except DatasetError as exc:
                skipped.append(SkippedEntry(where, str(exc)))
                continue
            if doc_id in seen:
                skipped.append(SkippedEntry(where, f"{where}: image_path {doc_id!r} is already page {seen[doc_id]}; "
                                                   "each page may appear once, the later one is skipped."))
                continue
            seen[doc_id] = number
            source = f"{gt_path}, page {number} ({doc_id})"
            try:
                tags = page_tags(info.get("page_attribute"), where)
                _check_layout(page, where)
            except DatasetError as exc:
                documents.append(entry_error(doc_id, str(exc), dataset=name, source=source, image_path=image_path))
                continue
            error = None
            if os.path.lexists(image_path):  # an image that is there is checked; an absent one only stops live engines
                error = image_error(image_path, folder, source=source)
            documents.append(Document(id=doc_id, dataset=name, image_path=image_path, tags=tags, source=source,
                                      error=error, omnidoc_page=page))
        documents.sort(key=lambda d: d.id)
        return Dataset(name=name, root=root, format=self.name, documents=tuple(documents),
                       skipped=tuple(capped_skipped(skipped, gt_path, noun="page")))


def prediction_stem(doc_id: str) -> str:
    """The benchmark's prediction name of a page, without ``.md``: the image file's stem.

    >>> prediction_stem("sub/x.pdf_3.jpg")
    'x.pdf_3'
    """
    return PurePosixPath(doc_id).stem

