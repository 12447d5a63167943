"""Format 2: a label file of ``<image path>\\t<text>`` lines (the plate-evaluation format).

::

    images/plate_01.png\tB-MW 1234
    images/plate_02.png\t京A12345

Image paths are relative to the label file's folder, which is the dataset root; the document id is that relative
path. The text is everything after the first tab, verbatim (a trailing ``\\r`` is dropped). Blank lines are ignored.
A bad line (no tab, an empty image path, an empty or whitespace-only ground truth, an image listed twice) is skipped
with a :class:`DatasetWarning` naming the file and line, and recorded in :attr:`Dataset.skipped` so the summary can
count it; past the first ten (:data:`~pytest_ocrmetrics.datasets.base.MAX_SKIPPED_LISTED`), one warning and one entry
give the count of the rest. An empty ground truth is skipped, not scored (documents 003/004: a sample whose label is missing or empty is
skipped with a warning, as :mod:`pytest_ocrmetrics.evaluator` does); any output would score CER 1.0 against it. A
path that leaves the folder is an error, not a skip. A label file that is not a regular file (a FIFO) or a symbolic
link leading out of its folder is refused with a sentence saying so.

Detection:

* a file ending in ``.tsv`` or ``.txt`` (but not ``.gt.txt``, a sidecar), or any other file (not ``.json``/``.jsonl``)
  whose first non-blank line contains a tab;
* a folder containing exactly one label file at its top level: a ``*.tsv`` file, or a ``*.txt`` file (not
  ``*.gt.txt``) whose first non-blank line contains a tab. Several candidates are an error asking for the file itself.
"""

from __future__ import annotations

from pathlib import Path

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.datasets.base import (
    Dataset,
    DatasetError,
    DatasetFolder,
    SkippedLog,
    entry_error,
    finish,
    image_error,
    read_regular_head,
    resolve_inside,
)

__all__ = ["LabelFileLoader", "DatasetWarning", "label_files_in"]

_SNIFF_BYTES = 65536


class DatasetWarning(UserWarning):
    """A ground-truth entry was skipped while loading a dataset (the dataset still loads)."""


def _first_line_has_tab(path: Path) -> bool:
    try:
        head = read_regular_head(path, _SNIFF_BYTES)  # a FIFO is never opened for a blocking read
    except OSError:
        return False
    for line in head.split(b"\n"):
        if line.strip():
            return b"\t" in line
    return False


def _is_sidecar(path: Path) -> bool:
    return path.name.lower().endswith(".gt.txt")


def _is_label_file(path: Path) -> bool:
    """An explicitly given file: by suffix (``.tsv``/``.txt``), else by content (a tab in the first line)."""
    suffix = path.suffix.lower()
    if _is_sidecar(path) or suffix in (".json", ".jsonl"):
        return False
    return suffix in (".tsv", ".txt") or _first_line_has_tab(path)


def label_files_in(folder: Path) -> list[Path]:
    """The label-file candidates at the top level of ``folder`` (sorted). A ``*.tsv`` that is not a regular file
    (a FIFO) is a candidate too, so that loading it says what it is; a ``*.txt`` must be read to be recognised."""
    try:
        entries = sorted(p for p in folder.iterdir() if not p.is_dir())
    except OSError:
        return []
    return [
        p for p in entries
        if not _is_sidecar(p)
        and (p.suffix.lower() == ".tsv" or (p.suffix.lower() == ".txt" and p.is_file() and _first_line_has_tab(p)))
    ]


class LabelFileLoader:
    """Loads format 2 (``<image path>\\t<text>`` lines)."""

    name = "label_file"
    description = "a label file of '<image path>\\t<text>' lines (*.tsv, *.txt, or a folder with exactly one)"

    def detect(self, path: Path) -> bool:
        if path.is_file():
            return _is_label_file(path)
        return bool(label_files_in(path))

    def load(self, path: Path, *, name: str) -> Dataset:
        if path.is_file():
            label_file = path
        else:
            candidates = label_files_in(path)
            if not candidates:
                raise DatasetError(f"{path}: no label file ('*.tsv', or '*.txt' with tab-separated lines) in this folder.")
            if len(candidates) > 1:
                names = ", ".join(p.name for p in candidates)
                raise DatasetError(
                    f"{path}: found several label files ({names}); pass the one to use, e.g. {candidates[0]}."
                )
            label_file = candidates[0]
        root = label_file.parent
        folder = DatasetFolder(root)
        documents: list[Document] = []
        skipped = SkippedLog(label_file, category=DatasetWarning)  # the first few warned, then one count
        first_line: dict[str, int] = {}

        def skip(number: int, reason: str) -> None:
            skipped.add(f"{label_file}:{number}", reason)

        for number, line in enumerate(folder.read_text(label_file, "label file").split("\n"), start=1):
            line = line.removesuffix("\r")
            if not line.strip():
                continue
            written, tab, text = line.partition("\t")
            if not tab:
                skip(number, "no tab between image path and text (expected '<image path>\\t<text>')")
                continue
            written = written.strip()
            if not written:
                skip(number, "the image path before the tab is empty")
                continue
            if not text.strip():  # the evaluator's sentence (evaluator._parse_line)
                skip(number, "the ground truth after the tab is empty; write the expected text after the tab or "
                             "remove the line")
                continue
            source = f"{label_file}:{number}"
            try:
                doc_id, image_path = resolve_inside(root, written, source=source)
            except DatasetError as exc:  # this line's test errors; the others run
                documents.append(entry_error(written, str(exc), dataset=name, source=source))
                continue
            if doc_id in first_line:
                skip(number, f"image {doc_id!r} is already listed at line {first_line[doc_id]}")
                continue
            first_line[doc_id] = number
            documents.append(Document(
                id=doc_id, dataset=name, image_path=image_path, reference_text=text, source=source,
                error=image_error(image_path),
            ))
        return finish(documents, name=name, root=root, format=self.name, skipped=skipped.entries(),
                      folder=folder)
