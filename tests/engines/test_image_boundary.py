"""Engines read only checked image bytes: a text file named ``x.png`` never reaches a backend, and reading the image
from memory (or from a private copy of its bytes) gives the same output as reading the file did."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ocrmetrics.core.documents import Document, sniff_image_format
from pytest_ocrmetrics.engines.base import EngineError, EngineUnavailable, image_temp_file, read_image


def _listing(tmp_path: Path, shared_data: Path) -> Document:
    """A "page" that is a text file naming an image outside the dataset (a Tesseract list file)."""
    outside = shared_data / "sroie_receipts" / "images" / "001.jpg"
    page = tmp_path / "dataset" / "page.png"
    page.parent.mkdir()
    page.write_text(f"{outside}\n", encoding="utf-8")
    return Document("page.png", "d", page, source="ground_truth.json: page.png")


def test_tesseract_never_reads_a_text_file_as_a_list_of_images(tmp_path: Path, shared_data: Path) -> None:
    pytest.importorskip("pytesseract")
    from pytest_ocrmetrics.engines.tesseract import TesseractEngine

    try:
        engine = TesseractEngine()
    except EngineUnavailable as exc:
        pytest.skip(str(exc))
    with pytest.raises(EngineError, match=r"page\.png' of document 'page.png' \(ground_truth.json: page.png\) is not an"
                                          r" image: it starts with b'/"):
        engine.recognize(_listing(tmp_path, shared_data))


def test_rapidocr_and_openai_refuse_a_text_file_too(tmp_path: Path, shared_data: Path) -> None:
    from pytest_ocrmetrics.engines.openai_compat import image_data_url

    document = _listing(tmp_path, shared_data)
    with pytest.raises(EngineError, match="is not an image"):
        image_data_url(document)
    with pytest.raises(EngineError, match="is not an image"):
        read_image(document)


def test_tesseract_output_is_unchanged_by_reading_a_copy_of_the_bytes(shared_data: Path) -> None:
    pytest.importorskip("pytesseract")
    from pytest_ocrmetrics.engines.tesseract import TesseractEngine, parse_tsv, text_from_data

    try:
        engine = TesseractEngine()
    except EngineUnavailable as exc:
        pytest.skip(str(exc))
    image = shared_data / "sroie_receipts" / "images" / "001.jpg"  # a JPEG: re-encoding it would change the pixels
    document = Document("001.jpg", "sroie", image)
    output = engine.recognize(document)
    with engine._pytesseract_call() as pytesseract:  # the old way: tesseract reads the dataset's file itself
        data = parse_tsv(pytesseract.image_to_data(str(image), lang=engine.lang, config=engine._command_config(),
                                                   output_type=pytesseract.Output.STRING))
    assert output.text == text_from_data(data) and output.text.strip()


def test_rapidocr_output_is_unchanged_by_decoding_from_memory(shared_data: Path) -> None:
    pytest.importorskip("rapidocr")
    from pytest_ocrmetrics.engines.registry import default_registry

    try:
        engine = default_registry(entry_points=False).create("rapidocr", {})
    except EngineUnavailable as exc:
        pytest.skip(str(exc))
    image = shared_data / "sroie_receipts" / "images" / "001.jpg"
    document = Document(image.name, "d", image)
    output = engine.recognize(document)
    raw_by_path = engine._ocr(str(image))  # the old way: rapidocr opens the dataset's file itself
    assert list(raw_by_path.txts) and [w.text for w in output.words or ()] != []
    assert sorted(output.text.split()) == sorted(" ".join(raw_by_path.txts).split())


def test_image_temp_file_holds_exactly_the_bytes_and_is_removed() -> None:
    data = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    with image_temp_file(data, suffix=".png") as path:
        assert path.read_bytes() == data and path.suffix == ".png"
    assert not path.exists()


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b"\x89PNG\r\n\x1a\n\x00", "PNG"),
        (b"\xff\xd8\xff\xe0", "JPEG"),
        (b"II*\x00", "TIFF"),
        (b"MM\x00*", "TIFF"),
        (b"BM\x00\x00", "BMP"),
        (b"GIF89a", "GIF"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "WebP"),
        (b"\x00\x00\x00\x0cjP  \r\n\x87\n", "JPEG 2000"),
        (b"P4\n# comment", "PNM"),
        (b"", None),
        (b"/etc/passwd\n", None),
        (b"%PDF-1.7", None),
        (b"PNG but text", None),
        (b"<svg xmlns=", None),
    ],
)
def test_image_signatures(head: bytes, expected: str | None) -> None:
    assert sniff_image_format(head) == expected


def test_a_damaged_image_is_described_not_shown_as_an_in_memory_buffer(tmp_path: Path) -> None:
    pytest.importorskip("PIL")
    from PIL import Image, UnidentifiedImageError

    from pytest_ocrmetrics.engines.base import image_decode_problem

    data = b"\x89PNG\r\n\x1a\n" + b"\x00" * 20
    try:
        import io

        Image.open(io.BytesIO(data))
    except UnidentifiedImageError as exc:
        assert "BytesIO" in str(exc)  # noqa: PT017 - what Pillow says, then what we make of it
        assert image_decode_problem(exc, data) == (  # noqa: PT017
            "it starts like a PNG file but cannot be decoded (damaged, or a variant the decoder does not support)"
        )
    assert image_decode_problem(OSError("image file is truncated"), data) == "OSError: image file is truncated"


def test_rapidocr_names_the_damaged_file(tmp_path: Path) -> None:
    pytest.importorskip("rapidocr")
    from pytest_ocrmetrics.engines.registry import default_registry

    try:
        engine = default_registry(entry_points=False).create("rapidocr", {})
    except EngineUnavailable as exc:
        pytest.skip(str(exc))
    damaged = tmp_path / "damaged.png"
    damaged.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 20)
    with pytest.raises(EngineError) as excinfo:
        engine.recognize(Document("damaged.png", "d", damaged))
    assert str(excinfo.value) == (
        f"rapidocr failed on {str(damaged)!r} (document 'damaged.png'): it starts like a PNG file but cannot be "
        "decoded (damaged, or a variant the decoder does not support)"
    )
