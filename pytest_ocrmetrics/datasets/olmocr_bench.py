"""An olmOCR-bench folder (``allenai/olmocr``, ``olmocr/bench/``): PDF pages and the facts that name them.

The folder holds ``*.jsonl`` fact files at its top level (one JSON object per line, blank lines allowed) and the PDFs
under ``pdfs/`` (sub-folders allowed)::

    bench_data/
        table_tests.jsonl          {"pdf": "earnings.pdf", "page": 1, "id": "earnings_table00", "type": "table", ...}
        headers_footers.jsonl      {"pdf": "headers_footers/x.pdf", "page": 1, "id": "x_02a", "type": "absent", ...}
        pdfs/earnings.pdf
        pdfs/headers_footers/x.pdf

A document is one page: id ``<pdf path without .pdf>_pg<page>`` (``headers_footers/x_pg1``), image the PDF page
(rendered for live engines, :mod:`pytest_ocrmetrics.core.pdf`), facts the lines that name it
(:mod:`pytest_ocrmetrics.metrics.facts`). As the benchmark does, every PDF without a ``baseline`` fact gets one,
``<pdf path>_baseline`` on page 1. A line that is not JSON, an unknown fact type or field, a duplicate id or a PDF
that is not under ``pdfs/`` skips that line with a reason naming ``file:line``; the rest of the dataset runs. A fact
file that is not a regular file (a FIFO) or a symbolic link out of the folder stops the dataset with a sentence; such
a PDF errors its pages.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.datasets.base import (
    Dataset,
    DatasetError,
    DatasetFolder,
    NotRegularFileError,
    SkippedEntry,
    capped_skipped,
    file_kind,
    json_error_message,
    jsonl_lines,
    nested_too_deep,
    read_regular_head,
)

if TYPE_CHECKING:  # the facts package is imported when such a folder is loaded, not by every run
    from pytest_ocrmetrics.metrics.facts import Fact

__all__ = ["OlmocrBenchLoader", "PDF_FOLDER", "page_document_id"]

PDF_FOLDER = "pdfs"


def page_document_id(pdf: str, page: int) -> str:
    """The document id of page ``page`` of ``pdf`` (a path under ``pdfs/``): the benchmark's candidate file name
    without ``_repeat<r>.md``.

    >>> page_document_id("headers_footers/x.pdf", 1)
    'headers_footers/x_pg1'
    """
    path = PurePosixPath(pdf)
    stem = str(path.with_suffix("")) if path.suffix.lower() == ".pdf" else pdf
    return f"{stem}_pg{page}"


def _pdf_error(path: Path, folder: DatasetFolder) -> str | None:
    """Why the page of PDF ``path`` cannot be scored (its test errors with it), else None: the PDF must be a regular
    file inside the bench folder (:meth:`DatasetFolder.file_error`) starting with ``%PDF-``."""
    problem = folder.file_error(path, "PDF")
    if problem is not None:
        return problem.rstrip(".")
    try:
        head = read_regular_head(path, 5)
    except NotRegularFileError as exc:
        return f"PDF {str(path)!r} is {file_kind(exc.mode)}, not a regular file"
    except OSError as exc:
        return f"PDF {str(path)!r} cannot be read: {exc.strerror or exc}"
    if head != b"%PDF-":
        return f"{str(path)!r} is not a PDF (it starts with {head!r}); replace the file"
    return None


class OlmocrBenchLoader:
    """Loads an olmOCR-bench folder: ``*.jsonl`` fact files at the top level and a ``pdfs/`` folder."""

    name = "olmocr_bench"
    description = f"an olmOCR-bench folder (*.jsonl facts and {PDF_FOLDER}/)"

    def detect(self, path: Path) -> bool:
        return path.is_dir() and (path / PDF_FOLDER).is_dir() and any(path.glob("*.jsonl"))

    def load(self, path: Path, *, name: str) -> Dataset:
        from pytest_ocrmetrics.metrics.facts import FactError, baseline_fact, parse_fact

        folder = DatasetFolder(path)
        pdf_root = path / PDF_FOLDER
        pdfs = sorted(p.relative_to(pdf_root).as_posix() for p in pdf_root.rglob("*")
                      if p.suffix.lower() == ".pdf" and not p.is_dir()  # a FIFO: its pages error, saying so
                      and not any(part.startswith(".") for part in p.relative_to(pdf_root).parts))
        if not pdfs:
            raise DatasetError(f"{pdf_root}: no PDF files; an olmOCR-bench folder keeps its PDFs under {PDF_FOLDER}/.")
        known = set(pdfs)
        facts: list[Fact] = []
        skipped: list[SkippedEntry] = []
        seen: dict[str, str] = {}
        for jsonl in sorted(path.glob("*.jsonl")):
            for number, line in jsonl_lines(jsonl, "fact file", root=folder):
                where = f"{jsonl}:{number}"
                try:
                    data = json.loads(line)
                except json.JSONDecodeError as exc:
                    skipped.append(SkippedEntry(where, json_error_message(jsonl, exc, line=number)))
                    continue
                except RecursionError:
                    skipped.append(SkippedEntry(where, nested_too_deep(f"{where}: the line")))
                    continue
                try:
                    fact = parse_fact(data, source=where, group=jsonl.name)
                except FactError as exc:
                    skipped.append(SkippedEntry(where, str(exc)))
                    continue
                if fact.pdf not in known:
                    close = [p for p in pdfs if PurePosixPath(p).name == PurePosixPath(str(fact.pdf)).name]
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                    skipped.append(SkippedEntry(where, f"{where}: fact {fact.id!r} names PDF {fact.pdf!r}, which is "
                                                       f"not under {pdf_root}{hint}; fix 'pdf'."))
                    continue
                if fact.id in seen:
                    skipped.append(SkippedEntry(where, f"{where}: fact id {fact.id!r} is already used at "
                                                       f"{seen[fact.id]}; ids must be unique."))
                    continue
                seen[fact.id] = where
                facts.append(fact)
        with_baseline = {fact.pdf for fact in facts if fact.type == "baseline"}
        facts.extend(baseline_fact(pdf) for pdf in pdfs if pdf not in with_baseline)
        by_page: dict[tuple[str, int], list[Fact]] = {}
        for fact in facts:
            by_page.setdefault((str(fact.pdf), int(fact.page or 1)), []).append(fact)
        documents = []
        for (pdf, page), page_facts in by_page.items():
            pdf_path = pdf_root / PurePosixPath(pdf)
            documents.append(Document(
                id=page_document_id(pdf, page), dataset=name, image_path=pdf_path, page=page,
                facts=tuple(page_facts), source=f"{pdf_path} page {page}", error=_pdf_error(pdf_path, folder),
            ))
        documents.sort(key=lambda d: d.id)
        return Dataset(name=name, root=path, format=self.name, documents=tuple(documents), skipped=tuple(capped_skipped(skipped, path)))
