"""Format 2: '<image path>\\t<text>' label files."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ocrmetrics.datasets import DatasetError, DatasetWarning, load_dataset
from tests.dataset_errors import entry_error


def make(tmp_path: Path, lines: str, name: str = "labels.txt", images: tuple[str, ...] = ()) -> Path:
    root = tmp_path / "plates"
    root.mkdir(exist_ok=True)
    for image in images:
        (root / image).parent.mkdir(parents=True, exist_ok=True)
        (root / image).write_bytes(b"\x89PNG\r\n\x1a\nimg")
    (root / name).write_text(lines, encoding="utf-8")
    return root


def test_label_file_with_cjk_text_and_sub_folders(tmp_path: Path) -> None:
    root = make(tmp_path, "img/b.png\t京A12345\n./img/a.png\tB-MW 1234\n\n", images=("img/a.png", "img/b.png"))
    dataset = load_dataset(root / "labels.txt")
    assert dataset.format == "label_file"
    assert dataset.root == root
    assert [(d.id, d.reference_text) for d in dataset] == [("img/a.png", "B-MW 1234"), ("img/b.png", "京A12345")]
    assert dataset.documents[0].source == f"{root / 'labels.txt'}:2"
    assert dataset.documents[0].image_path == root / "img" / "a.png"
    assert dataset.skipped == ()


def test_folder_with_exactly_one_label_file(tmp_path: Path) -> None:
    root = make(tmp_path, "a.png\tA1\n", name="gt.tsv", images=("a.png",))
    (root / "README.txt").write_text("no tabs here\n", encoding="utf-8")
    dataset = load_dataset(root)
    assert dataset.format == "label_file" and dataset.name == "plates" and len(dataset) == 1


def test_folder_with_two_label_files_asks_for_one(tmp_path: Path) -> None:
    root = make(tmp_path, "a.png\tA1\n", name="train.tsv")
    (root / "test.txt").write_text("b.png\tB2\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"several label files \(test.txt, train.tsv\); pass the one to use"):
        load_dataset(root)


def test_bad_lines_are_skipped_with_a_warning_naming_file_and_line(tmp_path: Path) -> None:
    root = make(tmp_path, "a.png\tA1\nno tab here\n\tmissing path\na.png\tagain\nb.png\t\n", images=("a.png", "b.png"))
    with pytest.warns(DatasetWarning) as record:
        dataset = load_dataset(root / "labels.txt")
    label_file = root / "labels.txt"
    assert [str(w.message).split(": line skipped")[0] for w in record] == [
        f"{label_file}:2", f"{label_file}:3", f"{label_file}:4"]
    assert [s.source for s in dataset.skipped] == [f"{label_file}:2", f"{label_file}:3", f"{label_file}:4"]
    assert "no tab" in dataset.skipped[0].reason
    assert "image path before the tab is empty" in dataset.skipped[1].reason
    assert "already listed at line 1" in dataset.skipped[2].reason
    assert [(d.id, d.reference_text) for d in dataset] == [("a.png", "A1"), ("b.png", "")]


def test_text_keeps_inner_tabs_and_spaces_and_drops_carriage_returns(tmp_path: Path) -> None:
    root = make(tmp_path, "a.png\t AB\t12 \r\n", images=("a.png",))
    assert load_dataset(root / "labels.txt").documents[0].reference_text == " AB\t12 "


def test_missing_image_errors_only_that_document(tmp_path: Path) -> None:
    root = make(tmp_path, "a.png\tA\nmissing.png\tM\n", images=("a.png",))
    dataset = load_dataset(root / "labels.txt")
    assert dataset.documents[0].error is None
    assert dataset.documents[1].error is not None and "does not exist" in dataset.documents[1].error


def test_path_leaving_the_folder_is_an_error_not_a_skip(tmp_path: Path) -> None:
    """That line's document errors (not skipped in silence); the other lines load."""
    root = make(tmp_path, "a.png\tA\n../secret.png\tS\n", images=("a.png",))
    dataset = load_dataset(root / "labels.txt")
    assert "labels.txt:2: image path '../secret.png' leaves the dataset folder" in entry_error(dataset, "../secret.png")


def test_file_with_other_suffix_is_detected_by_its_tabs(tmp_path: Path) -> None:
    root = make(tmp_path, "a.png\tA\n", name="rec_gt.lst")
    assert load_dataset(root / "rec_gt.lst").format == "label_file"
