"""Format 3: images with sidecar ground truth (OCR-D / Tesseract training style), found recursively.

::

    pages/page_01.png          the image
    pages/page_01.gt.txt       its text (UTF-8)
    pages/page_01.fields.json  optional: its fields, a bare JSON object {"title": "..."}

Every ``*.gt.txt`` below the folder is one document (hidden folders are skipped); its image is the file next to it
with the same base name and an image suffix (``.png``, ``.jpg``, ``.jpeg``, ``.tif``, ``.tiff``, ``.bmp``,
``.webp``, ``.gif``, ``.jp2``, ``.pbm``, ``.pgm``, ``.ppm``; also ``.bin.png``/``.nrm.png`` as written by ocropus
and calamari); when several exist, the first in that order is used (ocropus writes both ``x.bin.png`` and
``x.nrm.png``). The document id is the image path relative to the folder (``sub/page_01.png``); when no image exists
the id is the base path (``sub/page_01``) and the document's test errors.

The text is read as UTF-8; Windows line ends become ``\\n`` and exactly one trailing newline is removed (editors
and ``tesseract`` add one; it is not part of the ground truth). This format has no per-document thresholds or tags:
use format 1 or 4 for those. A ``.gt.txt`` or ``.fields.json`` that is not a regular file (a FIFO) or is a symbolic
link leading outside the folder errors its document (:class:`~pytest_ocrmetrics.datasets.base.DatasetFolder`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.datasets.base import (
    Dataset,
    DatasetError,
    DatasetFolder,
    entry_error,
    finish,
    json_error_message,
    nested_too_deep,
    parse_json,
)

__all__ = ["SidecarLoader", "IMAGE_SUFFIXES", "GT_SUFFIX", "FIELDS_SUFFIX", "strip_trailing_newline"]

GT_SUFFIX = ".gt.txt"
FIELDS_SUFFIX = ".fields.json"
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".webp", ".gif", ".jp2", ".pbm", ".pgm", ".ppm",
                  ".bin.png", ".nrm.png")


def strip_trailing_newline(text: str) -> str:
    """Normalize line ends to ``\\n`` and drop exactly one trailing newline.

    >>> strip_trailing_newline("line one\\r\\nline two\\n")
    'line one\\nline two'
    >>> strip_trailing_newline("para\\n\\n")
    'para\\n'
    """
    text = text.replace("\r\n", "\n")
    return text[:-1] if text.endswith("\n") else text


def _visible(path: Path, root: Path) -> bool:
    return not any(part.startswith(".") for part in path.relative_to(root).parts[:-1])


class SidecarLoader:
    """Loads format 3 (``x.png`` + ``x.gt.txt`` + optional ``x.fields.json``)."""

    name = "sidecar"
    description = "image files with sidecar ground truth (x.png + x.gt.txt [+ x.fields.json]), recursively"

    def detect(self, path: Path) -> bool:
        return path.is_dir() and any(_visible(p, path) for p in path.rglob(f"*{GT_SUFFIX}"))

    def load(self, path: Path, *, name: str) -> Dataset:
        root = path
        folder_check = DatasetFolder(root)
        documents: list[Document] = []
        listings: dict[Path, dict[str, str]] = {}
        for gt_path in sorted(p for p in root.rglob(f"*{GT_SUFFIX}") if _visible(p, root)):
            folder = gt_path.parent
            if folder not in listings:  # lower-cased name -> real name, so X.PNG is found too
                listings[folder] = {p.name.lower(): p.name for p in folder.iterdir()}
            base = gt_path.name[: -len(GT_SUFFIX)]
            found = [listings[folder][n] for n in (base.lower() + s for s in IMAGE_SUFFIXES) if n in listings[folder]]
            relative_base = gt_path.relative_to(root).parent / base
            if found:
                image_path = folder / found[0]
                doc_id = image_path.relative_to(root).as_posix()
                error = None
            else:
                image_path = folder / (base + IMAGE_SUFFIXES[0])
                doc_id = relative_base.as_posix()
                error = (f"image {str(folder / base) + '.*'!r} does not exist "
                         f"(no {base}.png/.jpg/.tif/... next to {gt_path.name})")
            try:
                text = strip_trailing_newline(folder_check.read_text(gt_path))
                fields = self._fields(folder / (base + FIELDS_SUFFIX), folder_check)
            except DatasetError as exc:  # this document's test errors; the others run
                documents.append(entry_error(doc_id, str(exc), dataset=name, source=str(gt_path),
                                             image_path=image_path))
                continue
            documents.append(Document(
                id=doc_id, dataset=name, image_path=image_path, reference_text=text, fields=fields,
                source=str(gt_path), error=error,
            ))
        return finish(documents, name=name, root=root, format=self.name, folder=folder_check)

    @staticmethod
    def _fields(path: Path, folder: DatasetFolder) -> dict[str, object] | None:
        """The fields of ``path`` (None when there is no such file); :class:`DatasetError` for a fields file that
        is not a JSON object, not a regular file, or a link leading outside the dataset folder."""
        if not os.path.lexists(path):
            return None
        try:
            data = parse_json(folder.read_text(path, "fields file"))
        except json.JSONDecodeError as exc:
            raise DatasetError(json_error_message(path, exc)) from None
        except RecursionError:
            raise DatasetError(nested_too_deep(f"{path}: the fields file")) from None
        if not isinstance(data, dict):
            raise DatasetError(f"{path}: a fields file must be a JSON object of field name to value.")
        return data
