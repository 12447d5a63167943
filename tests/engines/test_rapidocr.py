"""The rapidocr engine: offline PP-OCR on the shared data, reading order, settings."""

from __future__ import annotations

import json
import socket
import sys
import unicodedata
from pathlib import Path

import pytest

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.datasets import load_dataset
from pytest_ocrmetrics.engines.base import EngineError, EngineOptionError, EngineUnavailable
from pytest_ocrmetrics.engines.rapidocr import RapidOcrEngine, RapidOcrSettings, reading_order
from pytest_ocrmetrics.engines.registry import default_registry


def cer(reference: str, hypothesis: str) -> float:
    from rapidfuzz.distance import Levenshtein

    reference, hypothesis = unicodedata.normalize("NFC", reference), unicodedata.normalize("NFC", hypothesis)
    return Levenshtein.distance(reference, hypothesis) / max(len(reference), 1)


def create(options: dict[str, str] | None = None) -> RapidOcrEngine:
    try:
        engine = default_registry(entry_points=False).create("rapidocr", options or {})
    except EngineUnavailable as exc:
        pytest.skip(str(exc))
    assert isinstance(engine, RapidOcrEngine)
    return engine


@pytest.fixture(scope="module")
def offline_engine() -> RapidOcrEngine:
    """Created and first run with every socket connection refused: the bundled models must be enough."""
    original = socket.socket.connect

    def refuse(self: socket.socket, address: object) -> None:
        raise OSError(f"network access attempted: {address}")

    socket.socket.connect = refuse  # type: ignore[method-assign]
    try:
        return create()
    finally:
        socket.socket.connect = original  # type: ignore[method-assign]


def phototest(shared_data: Path) -> Document:
    return next(d for d in load_dataset(shared_data / "ocr_pages_lines") if d.id == "page-tesseract-phototest.tif")


def test_phototest_offline_nearly_perfect_in_reading_order(offline_engine: RapidOcrEngine, shared_data: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: socket.socket, address: object) -> None:
        raise OSError(f"network access attempted: {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    document = phototest(shared_data)
    output = offline_engine.recognize(document)
    reference = (document.reference_text or "").replace("\n\n", "\n")  # RapidOCR has no paragraph breaks
    assert cer(reference, output.text) < 0.02
    assert output.text.splitlines()[0].startswith("This is a lot of 12 point text")
    assert output.words is not None and [w.text for w in output.words] == output.text.split("\n")
    scores = [w.confidence for w in output.words]
    assert all(s is not None and 0.5 <= s <= 1 for s in scores)
    assert output.confidence == pytest.approx(sum(scores) / len(scores))  # type: ignore[arg-type]
    boxes = [w.box for w in output.words]
    assert all(b is not None and b[0] < b[2] and b[1] < b[3] for b in boxes)
    assert [b[1] for b in boxes] == sorted(b[1] for b in boxes)  # type: ignore[index]


def test_identity_names_the_bundled_models_with_hashes(offline_engine: RapidOcrEngine) -> None:
    identity = json.loads(json.dumps(offline_engine.identity()))
    assert identity["engine"] == "rapidocr" and identity["rapidocr"].startswith("3.")
    assert set(identity["models"]) == {"det", "rec"}  # the classifier is off, so it does not count
    assert all(len(m["sha256"]) == 64 and m["file"].endswith(".onnx") for m in identity["models"].values())
    assert identity["use_cls"] is False and identity["text_score"] == 0.5
    assert "threads" not in identity


def test_settings_reach_rapidocr_and_the_identity(shared_data: Path) -> None:
    engine = create({"use_cls": "true", "text_score": "0.9", "word_boxes": "yes", "det_limit_type": "max"})
    identity = engine.identity()
    assert identity["use_cls"] is True and identity["text_score"] == 0.9 and identity["word_boxes"] is True
    assert "cls" in identity["models"]
    line = next(d for d in load_dataset(shared_data / "ocr_pages_lines") if d.id == "line-uw3-test-010001.bin.png")
    output = engine.recognize(line)
    assert output.words is not None and len(output.words) == len(output.text.split())  # words, not lines
    assert cer(line.reference_text or "", output.text) < 0.05


def test_unreadable_or_missing_image_errors_the_document(offline_engine: RapidOcrEngine, tmp_path: Path) -> None:
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + b"not an image")  # a PNG signature, then garbage: the decoder fails
    with pytest.raises(EngineError, match=r"rapidocr failed on .*bad.png.* \(document 'bad.png'\)"):
        offline_engine.recognize(Document("bad.png", "d", bad))
    with pytest.raises(EngineError, match="does not exist"):
        offline_engine.recognize(Document("gone.png", "d", tmp_path / "gone.png"))


def test_blank_image_gives_empty_text_and_no_confidence(offline_engine: RapidOcrEngine, tmp_path: Path) -> None:
    from PIL import Image

    path = tmp_path / "blank.png"
    Image.new("L", (300, 300), 255).save(path)
    output = offline_engine.recognize(Document("blank.png", "d", path))
    assert (output.text, output.words, output.confidence) == ("", (), None)


def test_recognition_only_for_images_cropped_to_one_line(shared_data: Path) -> None:
    engine = create({"use_det": "false"})
    identity = engine.identity()
    assert identity["use_det"] is False and set(identity["models"]) == {"rec"}
    line = next(d for d in load_dataset(shared_data / "ocr_pages_lines") if d.id == "line-uw3-test-010001.bin.png")
    output = engine.recognize(line)
    assert cer(line.reference_text or "", output.text) < 0.05
    assert output.words is not None and len(output.words) == 1 and output.words[0].box is None
    assert output.confidence == output.words[0].confidence


def test_detector_resize_settings_reach_the_identity() -> None:
    engine = create({"det_limit_type": "max", "det_limit_side_len": "960"})
    assert (engine.identity()["det_limit_type"], engine.identity()["det_limit_side_len"]) == ("max", 960)


@pytest.mark.parametrize(("options", "expected"), [
    ({"det_limit_type": "mean"}, "rapidocr.det_limit_type must be min or max"),
    ({"use_det": "nope"}, "rapidocr.use_det must be true or false"),
    ({"use_cls": "maybe"}, "rapidocr.use_cls must be true or false"),
    ({"text_score": "1.5"}, "rapidocr.text_score must be a number 0..1"),
    ({"box_thresh": "high"}, "rapidocr.box_thresh must be a number 0..1"),
    ({"threads": "0"}, "rapidocr.threads must be a whole number >= 1"),
    ({"det_limit_side_len": "960.5"}, "rapidocr.det_limit_side_len must be a whole number 32..10000"),
    ({"det_model": "/nonexistent/det.onnx"}, "rapidocr.det_model: model file '/nonexistent/det.onnx' does not exist"),
])
def test_bad_settings(options: dict[str, str], expected: str) -> None:
    with pytest.raises(EngineOptionError, match=expected):
        RapidOcrSettings.from_options(options)


def test_no_argument_after_colon() -> None:
    with pytest.raises(EngineOptionError, match="rapidocr takes no argument"):
        default_registry(entry_points=False).create("rapidocr:fast", {})


def test_missing_package_gives_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "rapidocr", None)
    with pytest.raises(EngineUnavailable, match=r'pip install "pytest-ocrmetrics\[rapidocr\]"'):
        RapidOcrEngine()


# -- reading order (pure) ---------------------------------------------------------------------------------------------
def test_reading_order_rows_top_to_bottom_left_to_right() -> None:
    boxes = [
        (400, 100, 480, 122),  # row 3, right: the amount
        (10, 10, 200, 40),     # row 1
        (10, 101, 150, 121),   # row 3, left: the label
        (12, 55, 300, 80),     # row 2
    ]
    assert reading_order(boxes) == [[1], [3], [2, 0]]


def test_reading_order_tolerates_slight_rotation_without_merging_rows() -> None:
    # two rows of label + amount, the right-hand boxes 8 px lower (about 1.5 degrees over 300 px)
    boxes = [(10, 10, 100, 30), (310, 18, 380, 38), (10, 40, 100, 60), (310, 48, 380, 68)]
    assert reading_order(boxes) == [[0, 1], [2, 3]]


def test_reading_order_of_nothing() -> None:
    assert reading_order([]) == []
