"""Every loader checks each document's image: inside the dataset folder once links are followed, and an image."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

import pytest

from pytest_ocrmetrics.datasets import load_dataset

PNG = b"\x89PNG\r\n\x1a\n" + b"rest"


def _ground_truth_json(root: Path, names: list[str]) -> Path:
    (root / "ground_truth.json").write_text(json.dumps({n: {"full_text": n} for n in names}), encoding="utf-8")
    return root / "images"


def _jsonl(root: Path, names: list[str]) -> Path:
    lines = [json.dumps({"image": f"images/{n}", "full_text": n}) for n in names]
    (root / "manifest.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root / "images"


def _label_file(root: Path, names: list[str]) -> Path:
    (root / "labels.tsv").write_text("".join(f"images/{n}\t{n}\n" for n in names), encoding="utf-8")
    return root / "images"


def _sidecar(root: Path, names: list[str]) -> Path:
    for n in names:
        (root / "images").mkdir(exist_ok=True)
        (root / "images" / n).with_suffix(".gt.txt").write_text(n, encoding="utf-8")
    return root / "images"


FORMATS: dict[str, Callable[[Path, list[str]], Path]] = {
    "ground_truth_json": _ground_truth_json, "jsonl": _jsonl, "label_file": _label_file, "sidecar": _sidecar,
}


def _ids_and_errors(root: Path) -> dict[str, str | None]:
    return {d.id.rsplit("/", 1)[-1]: d.error for d in load_dataset(root)}


@pytest.mark.parametrize("layout", FORMATS.values(), ids=FORMATS.keys())
def test_a_text_file_named_like_an_image_errors_only_its_document(tmp_path: Path, layout) -> None:
    root = tmp_path / "set"
    images = root / "images"
    images.mkdir(parents=True)
    layout(root, ["good.png", "list.png", "empty.jpg"])
    (images / "good.png").write_bytes(PNG)
    (images / "list.png").write_text("/etc/hostname\n", encoding="utf-8")  # tesseract would OCR what this lists
    (images / "empty.jpg").write_bytes(b"")
    errors = _ids_and_errors(root)
    assert errors["good.png"] is None
    assert errors["list.png"] is not None and errors["empty.jpg"] is not None
    assert f"image {str(images / 'list.png')!r} is not an image (it starts with b'/etc/hostname\\n'" in errors["list.png"]
    assert "not with the signature of an image (PNG, JPEG, TIFF, BMP, GIF, WebP" in errors["list.png"]
    source = next(d.source for d in load_dataset(root) if d.id.endswith("list.png"))
    assert source and errors["list.png"].endswith(f"; replace the file or fix its path in {source}")
    assert "is not an image (the file is empty)" in errors["empty.jpg"]


@pytest.mark.parametrize("layout", FORMATS.values(), ids=FORMATS.keys())
def test_a_symbolic_link_out_of_the_dataset_folder_errors_only_its_document(tmp_path: Path, layout) -> None:
    root = tmp_path / "set"
    images = root / "images"
    images.mkdir(parents=True)
    outside = tmp_path / "elsewhere" / "private.png"
    outside.parent.mkdir()
    outside.write_bytes(PNG)  # a real image: the link is refused for where it leads, not for what it holds
    (root / "store").mkdir()
    (root / "store" / "kept.png").write_bytes(PNG)
    layout(root, ["good.png", "escape.png", "inside.png"])
    (images / "good.png").write_bytes(PNG)
    os.symlink(outside, images / "escape.png")
    os.symlink(Path("..") / "store" / "kept.png", images / "inside.png")  # a link within the folder is fine
    errors = _ids_and_errors(root)
    assert errors["good.png"] is None and errors["inside.png"] is None
    assert errors["escape.png"] == (
        f"image {str(images / 'escape.png')!r} is a symbolic link to {str(outside.resolve())!r}, outside the dataset "
        f"folder {str(root)!r}; copy the image into the dataset folder or fix its path in "
        + next(d.source for d in load_dataset(root) if d.id.endswith("escape.png"))
    )


def test_a_linked_images_folder_leading_outside_is_refused_for_every_document(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "a.png").write_bytes(PNG)
    root = tmp_path / "set"
    root.mkdir()
    os.symlink(store, root / "images")
    _ground_truth_json(root, ["a.png"])
    (document,) = load_dataset(root)
    assert document.error is not None and "outside the dataset folder" in document.error


def test_a_dataset_folder_that_is_itself_a_link_is_fine(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "images").mkdir(parents=True)
    (real / "images" / "a.png").write_bytes(PNG)
    _ground_truth_json(real, ["a.png"])
    os.symlink(real, tmp_path / "alias")
    assert [d.error for d in load_dataset(tmp_path / "alias")] == [None]


def test_a_symbolic_link_loop_is_an_error_of_that_document(tmp_path: Path) -> None:
    root = tmp_path / "set"
    (root / "images").mkdir(parents=True)
    _ground_truth_json(root, ["loop.png"])
    os.symlink(root / "images" / "loop.png", root / "images" / "loop.png")
    (document,) = load_dataset(root)
    assert document.error is not None and "loop.png" in document.error


def test_every_shared_dataset_still_loads_without_image_errors(shared_data: Path) -> None:
    for name in ("sroie_receipts", "ocr_pages_lines"):
        dataset = load_dataset(shared_data / name)
        assert len(dataset) > 0 and [d.id for d in dataset if d.error] == []
