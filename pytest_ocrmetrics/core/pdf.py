"""PDF pages as images: what a live engine sees for a document that is one page of a PDF (olmOCR-bench).

Pages are rendered with pypdfium2 (the ``pdf`` extra) so that the longest side is :data:`DEFAULT_LONGEST_SIDE`
pixels, the size olmOCR's own pipeline renders at (``--target_longest_image_dim``), unless
``--ocr-pdf-longest-side`` says otherwise (``Document.render_longest_side``). The PNG bytes are the document's
image: the output cache hashes them, so a changed PDF or resolution is a different cache key.
"""

from __future__ import annotations

import io
import math
import threading
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_LONGEST_SIDE", "render_pdf_page", "pdf_page_count", "PdfError"]

DEFAULT_LONGEST_SIDE = 1288
"""Pixels on the longest side of a rendered page: olmOCR's pipeline default."""

_PDFIUM_LOCK = threading.Lock()  # PDFium is not thread-safe; engines may read images from several threads


class PdfError(OSError):
    """A PDF that cannot be opened or rendered, or pypdfium2 missing; the message names the file and the fix."""


def _pdfium() -> Any:  # the pypdfium2 module (untyped)
    try:
        import pypdfium2  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise PdfError("rendering PDF pages needs pypdfium2: pip install 'pytest-ocrmetrics[pdf]'") from None
    return pypdfium2


def pdf_page_count(path: Path) -> int:
    """The number of pages of the PDF at ``path``; :class:`PdfError` when it cannot be read."""
    pdfium = _pdfium()
    with _PDFIUM_LOCK:
        return _page_count(pdfium, path)


def _page_count(pdfium: Any, path: Path) -> int:
    try:
        document = pdfium.PdfDocument(str(path))
    except Exception as exc:  # pypdfium2.PdfiumError and OSError
        raise PdfError(f"cannot open PDF {str(path)!r}: {exc}") from None
    try:
        return len(document)
    finally:
        document.close()


def render_pdf_page(path: Path, page: int, *, longest_side: int = DEFAULT_LONGEST_SIDE, document: str = "") -> bytes:
    """PNG bytes of page ``page`` (from 1) of the PDF at ``path``, exactly ``longest_side`` pixels on its longest side
    (the other side in proportion, rounded up). :class:`PdfError` names the file (and ``document``) when the PDF
    cannot be opened or has no such page.

    Example::

        >>> png = render_pdf_page(Path("pdfs/earnings.pdf"), 1)   # doctest: +SKIP
        >>> png[:8]                                               # doctest: +SKIP
        b'\\x89PNG\\r\\n\\x1a\\n'
    """
    pdfium = _pdfium()
    with _PDFIUM_LOCK:
        return _render(pdfium, path, page, longest_side, document)


def _render(pdfium: Any, path: Path, page: int, longest_side: int, document: str) -> bytes:
    of = f" of document {document!r}" if document else ""
    try:
        pdf = pdfium.PdfDocument(str(path))
    except Exception as exc:
        raise PdfError(f"cannot open PDF {str(path)!r}{of}: {exc}") from None
    try:
        if not 1 <= page <= len(pdf):
            raise PdfError(f"PDF {str(path)!r}{of} has {len(pdf)} page(s), not page {page}")
        pdf_page = pdf[page - 1]
        longest = max(*pdf_page.get_size(), 1e-6)
        scale = longest_side / longest
        while math.ceil(longest * scale) > longest_side:  # pdfium rounds up: 700.3 pt at 3333 px would give 3334
            scale = math.nextafter(scale, 0.0)
        image = pdf_page.render(scale=scale).to_pil()
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        return buffer.getvalue()
    except PdfError:
        raise
    except Exception as exc:
        raise PdfError(f"cannot render page {page} of PDF {str(path)!r}{of}: {exc}") from None
    finally:
        pdf.close()
