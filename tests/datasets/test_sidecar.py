"""Format 3: images with .gt.txt sidecars."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pytest_ocrmetrics.datasets import load_dataset
from tests.dataset_errors import entry_error


def write(path: Path, content: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode("utf-8"))


def test_recursive_sidecars_with_fields_and_one_trailing_newline_stripped(tmp_path: Path) -> None:
    root = tmp_path / "pages"
    write(root / "p1.png", b"\x89PNG\r\n\x1a\nimg")
    write(root / "p1.gt.txt", "first line\nsecond line\n")
    write(root / "p1.fields.json", json.dumps({"title": "first line"}))
    write(root / "sub" / "p2.TIF", b"\x89PNG\r\n\x1a\nimg")
    write(root / "sub" / "p2.gt.txt", "para one\r\n\r\n")
    write(root / ".hidden" / "x.png", b"\x89PNG\r\n\x1a\nimg")
    write(root / ".hidden" / "x.gt.txt", "ignored")
    dataset = load_dataset(root)
    assert dataset.format == "sidecar"
    assert [d.id for d in dataset] == ["p1.png", "sub/p2.TIF"]
    p1, p2 = dataset.documents
    assert p1.reference_text == "first line\nsecond line"
    assert p1.fields == {"title": "first line"}
    assert p2.reference_text == "para one\n"
    assert p2.fields is None and p2.error is None
    assert p2.source == str(root / "sub" / "p2.gt.txt")


def test_ocropus_binarized_image_names(tmp_path: Path) -> None:
    root = tmp_path / "lines"
    write(root / "010001.bin.png", b"\x89PNG\r\n\x1a\nimg")
    write(root / "010001.nrm.png", b"\x89PNG\r\n\x1a\nimg")
    write(root / "010001.gt.txt", "The problem")
    dataset = load_dataset(root)
    assert [d.id for d in dataset] == ["010001.bin.png"]


def test_missing_image_gives_the_base_path_as_id_and_an_error(tmp_path: Path) -> None:
    root = tmp_path / "pages"
    write(root / "sub" / "lost.gt.txt", "text")
    (document,) = load_dataset(root).documents
    assert document.id == "sub/lost"
    assert document.error is not None and "does not exist" in document.error and "lost.gt.txt" in document.error


def test_bad_fields_file_names_file_and_line(tmp_path: Path) -> None:
    root = tmp_path / "pages"
    write(root / "p.png", b"\x89PNG\r\n\x1a\nimg")
    write(root / "p.gt.txt", "x")
    write(root / "q.png", b"\x89PNG\r\n\x1a\nimg")
    write(root / "q.gt.txt", "y")
    write(root / "p.fields.json", '{\n"a": }')
    assert re.search(r"p.fields.json: invalid JSON at line 2, column", entry_error(load_dataset(root), "p.png"))
    write(root / "p.fields.json", "[1, 2]")
    assert "must be a JSON object" in entry_error(load_dataset(root), "p.png")


def test_ground_truth_that_is_not_utf8_is_a_clear_error(tmp_path: Path) -> None:
    root = tmp_path / "pages"
    write(root / "p.png", b"\x89PNG\r\n\x1a\nimg")
    write(root / "p.gt.txt", "Stra\xdfe".encode("latin-1"))
    write(root / "q.png", b"\x89PNG\r\n\x1a\nimg")
    write(root / "q.gt.txt", "y")
    dataset = load_dataset(root)
    assert "p.gt.txt: ground-truth file is not valid UTF-8" in entry_error(dataset, "p.png")
    assert dataset.documents[1].reference_text == "y"
