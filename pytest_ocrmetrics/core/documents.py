"""The unit of work: one document with its ground truth, and the check that its image is an image."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from pytest_ocrmetrics.core.pdf import DEFAULT_LONGEST_SIDE, render_pdf_page

__all__ = ["Document", "ImageFileError", "IMAGE_FORMATS", "MAX_IMAGE_PIXELS", "PIXEL_LIMIT_SETTING", "sniff_image_format",
           "not_an_image_reason", "image_dimensions", "too_many_pixels_reason", "memory_text"]

IMAGE_FORMATS = ("PNG", "JPEG", "TIFF", "BMP", "GIF", "WebP", "JPEG 2000", "PNM")
"""The image formats a document's image may be in (recognised by their first bytes, whatever the file suffix)."""

_SNIFF_BYTES = 16

MAX_IMAGE_PIXELS = 89_478_485
"""The default of the most pixels (width × height) a document's image may have, for every engine: Pillow's own
default limit (``PIL.Image.MAX_IMAGE_PIXELS``, about a 9,500 × 9,500 image; an A4 page at 600 dpi is 35 M). A small
file can declare a huge image (a 0.9 MB PNG of 30,000 × 30,000 pixels): rapidocr refuses it through Pillow, but
Tesseract decodes it (about 4 GB of memory). Checked from the image's header, before anything decodes it.

The limit of a run is a setting (``Document.max_image_pixels``): ``--ocr-max-image-pixels`` / ``ocr_max_image_pixels``
in pytest, ``--max-image-pixels`` of ``ocrmetrics evaluate``, ``max_image_pixels=`` of the evaluator; see
``docs/reference/limits.md``."""

PIXEL_LIMIT_SETTING = "--ocr-max-image-pixels, or --max-image-pixels of ocrmetrics evaluate"
"""How the pixel limit's setting is named in the sentence of an image over it."""


def sniff_image_format(head: bytes) -> str | None:
    """The format named in :data:`IMAGE_FORMATS` whose signature ``head`` (a file's first bytes) starts with, or None.

    The check is on content, not on the file name: a text file named ``x.png`` is not an image (Tesseract would read
    it as a list of image paths and recognise the files it names).

    >>> sniff_image_format(b"\\x89PNG\\r\\n\\x1a\\n...")
    'PNG'
    >>> sniff_image_format(b"/etc/secret.png\\n") is None
    True
    """
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "PNG"
    if head.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if head[:4] in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):  # TIFF and BigTIFF
        return "TIFF"
    if head.startswith(b"BM"):
        return "BMP"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "GIF"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WebP"
    if head.startswith(b"\x00\x00\x00\x0cjP  \r\n\x87\n") or head.startswith(b"\xff\x4f\xff\x51"):
        return "JPEG 2000"
    if len(head) >= 3 and head[0:1] == b"P" and head[1:2] in b"1234567" and head[2:3] in b" \t\r\n#":
        return "PNM"
    return None


def not_an_image_reason(head: bytes) -> str:
    """Why ``head`` is not an image, for an error message: what it starts with and what was expected."""
    if not head:
        return "the file is empty"
    return (f"it starts with {head[:_SNIFF_BYTES]!r}, not with the signature of an image "
            f"({', '.join(IMAGE_FORMATS)})")


class ImageFileError(OSError):
    """A document's image cannot be used: missing, unreadable, or not an image at all.

    An :class:`OSError` (like Pillow's ``UnidentifiedImageError``), so code that handles unreadable files handles it.
    """


@dataclass(frozen=True)
class Document:
    """One document of a dataset: an image and what a perfect OCR engine would return for it.

    ``id`` is stable and unique within its dataset (the image path relative to the dataset root, with ``/``).
    ``dataset`` is the dataset's display name. ``source`` names where the ground truth came from
    (``"data/ground_truth.json: doc_001.png"``), so errors can point at the file and entry.
    ``thresholds`` are per-document limits from the ground truth (``{"cer": 0.1}``); they override every other level.
    ``tasks`` are the document's downstream tasks (extraction, qa, classification; see
    :func:`pytest_ocrmetrics.metrics.downstream.downstream_task`), each ``{"type": ..., "reference": {...}}``.
    ``image_data`` holds the image bytes once they were read for recognition (:meth:`with_image_bytes`), so the
    output cache hashes exactly the bytes the engine reads; it is None in a loaded dataset.
    """

    id: str
    dataset: str
    image_path: Path | None
    reference_text: str | None = None
    fields: Mapping[str, Any] | None = None
    thresholds: Mapping[str, float] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    schema: Mapping[str, Any] | None = None
    source: str = ""
    error: str | None = None  # a problem found at load time (e.g. missing image); the document's test errors with it
    image_data: bytes | None = field(default=None, repr=False, compare=False)
    # a PDF page (olmOCR-bench): image_path is the PDF, page counts from 1; the image is the page rendered to PNG
    # with render_longest_side pixels on its longest side (below)
    page: int | None = None
    # page-level facts (:mod:`pytest_ocrmetrics.metrics.facts`) checked on the output
    facts: tuple[Any, ...] = ()
    # downstream tasks (:mod:`pytest_ocrmetrics.metrics.downstream`), scored with ``--ocr-metric=task_success``:
    # ``{"type": "extraction" | "qa" | "classification", "reference": {...}}`` each, the reference being the
    # specification's ground-truth dict (fields, ``{"answer": ...}``, ``{"class": ...}``)
    tasks: tuple[Mapping[str, Any], ...] = ()
    # pixels on the longest side of a PDF page's rendered image (--ocr-pdf-longest-side); part of the cache key
    render_longest_side: int = DEFAULT_LONGEST_SIDE
    # the most pixels its image may have (the run's --ocr-max-image-pixels); a setting, not part of the document's
    # identity (equal documents compare equal whatever limit they were read under)
    max_image_pixels: int = field(default=MAX_IMAGE_PIXELS, compare=False)
    # an OmniDocBench page (:mod:`pytest_ocrmetrics.datasets.omnidocbench`): the page's ground-truth object as the
    # benchmark's JSON has it (page_info, layout_dets, extra), scored by :mod:`pytest_ocrmetrics.metrics.omnidoc`
    omnidoc_page: Mapping[str, Any] | None = field(default=None, repr=False)

    def image_file(self) -> Path:
        """The image's path; raises ``FileNotFoundError`` naming the document and its source when there is none."""
        if self.image_path is None:
            raise FileNotFoundError(f"document {self.id!r}{self._source()} has no image")
        if not self.image_path.is_file():
            raise FileNotFoundError(f"image {str(self.image_path)!r} of document {self.id!r}{self._source()} does not exist")
        return self.image_path

    def image_bytes(self) -> bytes:
        """The image's bytes: ``image_data`` when already read, else the file's content, checked to be an image.

        Raises ``FileNotFoundError`` when the image is missing and :class:`ImageFileError` when it cannot be read or
        is not an image (see :func:`sniff_image_format`), naming the file and the document.
        """
        if self.image_data is not None:
            return self.image_data
        path = self.image_file()
        if self.page is not None:  # a PDF page: the rendered PNG is the image (and what the output cache hashes)
            return render_pdf_page(path, self.page, longest_side=self.render_longest_side, document=self.id)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ImageFileError(
                f"cannot read image {str(path)!r} of document {self.id!r}{self._source()}: {exc.strerror or exc}"
            ) from None
        if sniff_image_format(data[:_SNIFF_BYTES]) is None:
            raise ImageFileError(
                f"image {str(path)!r} of document {self.id!r}{self._source()} is not an image: "
                f"{not_an_image_reason(data[:_SNIFF_BYTES])}; replace the file or fix its path in the ground truth"
            )
        too_big = too_many_pixels_reason(data, self.max_image_pixels)
        if too_big:
            raise ImageFileError(f"image {str(path)!r} of document {self.id!r}{self._source()} {too_big}")
        return data

    def _source(self) -> str:
        return f" ({self.source})" if self.source else ""

    def with_image_bytes(self) -> Document:
        """This document carrying its image bytes (read once now, see :meth:`image_bytes`) in ``image_data``.

        Whoever holds the copy (the output cache, then the engine) sees the same bytes, even if the file changes.
        """
        if self.image_data is not None:
            return self
        return replace(self, image_data=self.image_bytes())


def image_dimensions(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` of the image in ``data``, read from its header only (nothing is decoded), or None when
    it cannot be told (no Pillow and not a PNG, or a header no decoder recognises: the engine reports that).

    Pillow's ``Image.open`` refuses a header declaring more than twice its pixel limit (``DecompressionBombError``)
    before saying how big the image is, so each format's header reader is asked directly, as ``Image.open`` does.
    """
    import io
    import warnings

    try:
        from PIL import Image
    except ImportError:  # a PNG's size is at a fixed place; other formats need Pillow
        if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR" and len(data) >= 24:
            return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        return None
    Image.init()
    head = data[:16]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DecompressionBombWarning and friends: the size is what is wanted here
        for name in Image.ID:
            factory, accept = Image.OPEN[name]
            if accept is not None and not accept(head):
                continue
            try:
                with factory(io.BytesIO(data), "") as image:
                    width, height = image.size
                return int(width), int(height)
            except Exception:  # noqa: BLE001 - not this format (Pillow's readers raise SyntaxError, OSError, ...)
                continue
    return None


def too_many_pixels_reason(data: bytes, limit: int = MAX_IMAGE_PIXELS) -> str | None:
    """Why the image in ``data`` is too big to recognise (the end of a sentence naming it), or None when it is not:
    ``is 30000 × 30000 pixels (900,000,000), more than the 89,478,485 allowed (...)``.

    Args:
        data: the image file's bytes (only its header is read).
        limit: the most pixels allowed (the run's pixel-limit setting).

    Returns:
        The reason, naming the limit's setting, or None for an image within the limit or whose size cannot be told.
    """
    size = image_dimensions(data)
    if size is None or size[0] * size[1] <= limit:
        return None
    width, height = size
    default = "; the default is Pillow's limit" if limit == MAX_IMAGE_PIXELS else ""
    return (f"is {width} × {height} pixels ({width * height:,}), more than the {limit:,} allowed "
            f"(set by {PIXEL_LIMIT_SETTING}{default}): decoding it would take about {memory_text(width * height * 4)} of "
            "memory; scale the image down or raise the limit")


def memory_text(size: float) -> str:
    """``size`` bytes for a sentence of an error message.

    Args:
        size: a number of bytes.

    Returns:
        ``3.6 GB``, ``24 MB``, ``2.0 kB`` or ``12 bytes``.

    >>> memory_text(3.6e9), memory_text(24e6), memory_text(12)
    ('3.6 GB', '24 MB', '12 bytes')
    """
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}" if size < 10 * scale else f"{size / scale:.0f} {unit}"
    return f"{size:.0f} bytes"
