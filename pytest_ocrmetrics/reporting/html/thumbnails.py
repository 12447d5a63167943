"""Page images in the HTML report: a thumbnail per page image as a ``data:`` URL, embedded once in the report's
image store and referred to by every detail view that shows it."""

from __future__ import annotations

import base64
import io
import math
from pathlib import Path
from typing import Any, Mapping

from pytest_ocrmetrics.reporting.html.markup import e
from pytest_ocrmetrics.reporting.images import ImageFinder

_RAW_IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
                    ".webp": "image/webp"}


_MAX_RAW_IMAGE_BYTES = 1_500_000


#: the page images of a report: path -> (image id in the report's store, data URL, note when there is none)
ImageStore = dict[Path, tuple[str | None, str | None, str | None]]

def image_data_url(path: Path, *, max_pixels: int = 400_000, max_side: int = 1600) -> tuple[str | None, str | None]:
    """A thumbnail of the image at ``path`` as a ``data:`` URL, or ``(None, note)`` saying why there is none.

    With Pillow installed any format it reads (TIFF included) is scaled down to at most ``max_pixels`` pixels and
    ``max_side`` pixels on its longer side (so a long text-line image stays legible) and stored as PNG
    (bilevel and palette scans, which compress well that way) or JPEG; without Pillow, small PNG/JPEG/GIF/WebP files
    are embedded unchanged and other formats get a note.
    """
    if not path.is_file():
        return None, f"image not found: {path}"
    try:
        from PIL import Image, ImageOps
    except ImportError:
        mime = _RAW_IMAGE_TYPES.get(path.suffix.lower())
        if mime is None:
            return None, f"install Pillow to show {path.suffix or 'this'} images in the report ({path.name})"
        if path.stat().st_size > _MAX_RAW_IMAGE_BYTES:
            return None, f"image too large to embed without Pillow to scale it ({path.name})"
        return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}", None
    try:
        with Image.open(path) as opened:
            opened.seek(0)
            image: Image.Image = ImageOps.exif_transpose(opened) or opened
            lossless = image.mode in ("1", "P")
            if image.mode not in ("1", "L", "RGB"):
                image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
                if image.mode == "RGBA":
                    background = Image.new("RGB", image.size, "white")
                    background.paste(image, mask=image.getchannel("A"))
                    image = background
            image = image.copy()
            width, height = image.size
            scale = min(1.0, math.sqrt(max_pixels / max(1, width * height)), max_side / max(1, width, height))
            if scale < 1.0:
                image = image.resize((max(1, round(width * scale)), max(1, round(height * scale))),
                                     Image.Resampling.LANCZOS)
            buffer = io.BytesIO()
            if lossless:
                image.save(buffer, "PNG", optimize=True)
                mime = "image/png"
            else:
                image.save(buffer, "JPEG", quality=72, optimize=True)
                mime = "image/jpeg"
    except Exception as exc:  # a corrupt or exotic file must not break the report
        return None, f"image could not be read ({path.name}): {type(exc).__name__}: {exc}"
    return f"data:{mime};base64,{base64.b64encode(buffer.getvalue()).decode('ascii')}", None


def _resolve_image(doc: Mapping[str, Any], finder: ImageFinder) -> Path:
    """Where the document's image is on this machine (see :class:`~pytest_ocrmetrics.reporting.images.ImageFinder`),
    else the most likely place, which the report's note names."""
    return finder.resolve(str(doc["image"]), str(doc.get("dataset", "")))


def missing_images_note(images: Mapping[Path, tuple[str | None, str | None, str | None]]) -> str:
    """A note when page images were not found: the run file was made elsewhere; ``--image-root`` says where they are."""
    missing = sum(1 for path, (image_id, _, _) in images.items() if image_id is None and not path.is_file())
    if not missing:
        return ""
    noun = "page image was" if missing == 1 else "page images were"
    return (f'<p class="note" id="images-missing">{missing} of {len(images)} {noun} not found on this machine; '
            f'give the folder that holds the datasets with ocrmetrics report --image-root DIR.</p>')


def image_html(doc: Mapping[str, Any], finder: ImageFinder, thumbnail_pixels: int, with_image: bool,
                images: dict[Path, tuple[str | None, str | None, str | None]]) -> str:
    """The page image of ``doc`` as a thumbnail referring to the report's image store (each page image is embedded
    once, however many engines read it), or a note saying why there is none."""
    image = doc.get("image")
    if not with_image:
        return '<div class="missing-image">image left out to keep the report small</div>'
    if not image:
        return '<div class="missing-image">no image recorded for this document</div>'
    path = _resolve_image(doc, finder)
    if path not in images:
        url, note = image_data_url(path, max_pixels=thumbnail_pixels)
        images[path] = (f"image-{len(images) + 1}" if url else None, url, note)
    image_id, _, note = images[path]
    if image_id:
        return f'<img class="thumb" data-image="{image_id}" alt="{e(doc["id"])}" title="click to enlarge">'
    return f'<div class="missing-image">{e(note)}</div>'
