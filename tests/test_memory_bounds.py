"""Inputs that would exhaust memory error their own document in one sentence: an image whose header declares too
many pixels (:data:`~pytest_ocrmetrics.core.documents.MAX_IMAGE_PIXELS`, checked before anything decodes it) and an output
too long to align (:data:`~pytest_ocrmetrics.scoring.document.MAX_SCORED_CHARACTERS`)."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import pytest

from pytest_ocrmetrics.core.documents import (
    MAX_IMAGE_PIXELS,
    Document,
    ImageFileError,
    image_dimensions,
    too_many_pixels_reason,
)
from pytest_ocrmetrics.engines.base import EngineError, OcrOutput, read_image, with_image_bytes
from pytest_ocrmetrics.scoring.document import MAX_SCORED_CHARACTERS, OutputTooLong, check_output_length


def _png(width: int, height: int, bit_depth: int, pixels: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(pixels)) + chunk(b"IEND", b"")


def png_header(width: int, height: int) -> bytes:
    """A PNG that declares ``width`` × ``height`` pixels (1 bit each) with no pixel data: a few dozen bytes, however
    large the image it claims to be (generating a real 30,000 × 30,000 image would take about a gigabyte)."""
    return _png(width, height, 1, b"")


def blank_png(width: int, height: int) -> bytes:
    """A real, decodable white grayscale PNG, written without Pillow (importing Pillow inside a pytester test would
    let pytester's module snapshot drop it afterwards)."""
    return _png(width, height, 8, (b"\x00" + b"\xff" * width) * height)


def _document(tmp_path: Path, data: bytes, name: str = "big.png") -> Document:
    path = tmp_path / name
    path.write_bytes(data)
    return Document(name, "d", path, reference_text="x", source="ground_truth.json: " + name)


def test_the_pixel_limit_is_pillows_default() -> None:
    pil = pytest.importorskip("PIL.Image")
    assert MAX_IMAGE_PIXELS == pil.MAX_IMAGE_PIXELS == 89_478_485


def test_dimensions_come_from_the_header_even_past_pillows_bomb_limit() -> None:
    assert image_dimensions(png_header(30000, 30000)) == (30000, 30000)  # Image.open itself raises here
    assert image_dimensions(blank_png(30, 20)) == (30, 20)
    assert image_dimensions(png_header(640, 480)) == (640, 480)
    assert image_dimensions(b"\x89PNG\r\n\x1a\nnot a header") is None  # undecodable: left to the engine to report


@pytest.mark.parametrize("fmt", ["JPEG", "TIFF", "BMP", "GIF", "WEBP"])
def test_dimensions_of_other_formats(fmt: str) -> None:
    image_module = pytest.importorskip("PIL.Image")
    buffer = io.BytesIO()
    image_module.new("L", (123, 45)).save(buffer, format=fmt)
    assert image_dimensions(buffer.getvalue()) == (123, 45)


def test_too_many_pixels_names_both_sides_and_the_limit() -> None:
    assert too_many_pixels_reason(png_header(9459, 9459)) is None  # 89,472,681 pixels: within the limit
    reason = too_many_pixels_reason(png_header(30000, 30000))
    assert reason is not None
    assert reason.startswith("is 30000 × 30000 pixels (900,000,000), more than the 89,478,485 allowed")
    assert too_many_pixels_reason(png_header(100, 100), limit=9_999) is not None


def test_an_image_with_too_many_pixels_errors_its_document_for_every_engine(tmp_path: Path) -> None:
    document = _document(tmp_path, png_header(30000, 30000))
    with pytest.raises(ImageFileError) as raised:
        document.image_bytes()
    message = str(raised.value)
    assert message.startswith(f"image {str(tmp_path / 'big.png')!r} of document 'big.png' (ground_truth.json: big.png)"
                              " is 30000 × 30000 pixels")
    assert "\n" not in message
    # read_image and with_image_bytes are how every engine (and the output cache) reads an image
    with pytest.raises(EngineError, match="is 30000 × 30000 pixels"):
        read_image(document)
    with pytest.raises(EngineError, match="is 30000 × 30000 pixels"):
        with_image_bytes(document)


def test_an_image_within_the_limit_is_read_unchanged(tmp_path: Path) -> None:
    data = png_header(2000, 3000)
    assert read_image(_document(tmp_path, data, "ok.png")) == data


def test_an_output_within_the_bound_passes() -> None:
    document = Document("a.png", "d", None, reference_text="abc")
    check_output_length(document, OcrOutput(text="x" * MAX_SCORED_CHARACTERS))


def test_an_output_past_the_bound_is_one_sentence() -> None:
    document = Document("a.png", "d", None, reference_text="abc")
    with pytest.raises(OutputTooLong) as raised:
        check_output_length(document, OcrOutput(text="x" * (MAX_SCORED_CHARACTERS + 1)))
    message = str(raised.value)
    assert message.startswith("the output is 2,000,001 characters, more than the 2,000,000 scored (set by --ocr-max-output-chars, ")
    assert "\n" not in message and isinstance(raised.value, EngineError)  # so the plugin errors only this document


def test_a_long_reference_allows_twice_its_length() -> None:
    check_output_length(Document("a.png", "d", None, reference_text="r" * 30), OcrOutput(text="x" * 60), limit=10)
    with pytest.raises(OutputTooLong, match="the output is 61 characters, more than the 60 scored"):
        check_output_length(Document("a.png", "d", None, reference_text="r" * 30), OcrOutput(text="x" * 61), limit=10)

