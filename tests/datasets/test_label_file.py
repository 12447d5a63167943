"""Format 2: '<image path>\\t<text>' label files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ocrmetrics.datasets import DatasetError, DatasetWarning, load_dataset
from tests.dataset_errors import entry_error
from tests.helpers.plugin import PNG_1X1

pytest_plugins = ["pytester"]


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
        f"{label_file}:2", f"{label_file}:3", f"{label_file}:4", f"{label_file}:5"]
    assert [s.source for s in dataset.skipped] == [
        f"{label_file}:2", f"{label_file}:3", f"{label_file}:4", f"{label_file}:5"]
    assert "no tab" in dataset.skipped[0].reason
    assert "image path before the tab is empty" in dataset.skipped[1].reason
    assert "already listed at line 1" in dataset.skipped[2].reason
    assert "ground truth after the tab is empty" in dataset.skipped[3].reason
    assert [(d.id, d.reference_text) for d in dataset] == [("a.png", "A1")]


@pytest.mark.parametrize("text", ["", " ", "\t ", "\u3000"])
def test_an_empty_or_whitespace_ground_truth_is_skipped_with_a_warning(tmp_path: Path, text: str) -> None:
    """Issue 20 C1, documents 003 (FR-008) and 004: a sample with an empty label is skipped with a warning and counted
    as skipped, as the evaluator does, instead of being scored CER 1.0 against an empty reference."""
    root = make(tmp_path, f"a.png\tA1\nb.png\t{text}\n", images=("a.png", "b.png"))
    with pytest.warns(DatasetWarning, match=r"labels.txt:2: line skipped: the ground truth after the tab is empty; "
                                            r"write the expected text after the tab or remove the line"):
        dataset = load_dataset(root / "labels.txt")
    assert [d.id for d in dataset] == ["a.png"]
    assert [s.source for s in dataset.skipped] == [f"{root / 'labels.txt'}:2"]


def test_the_evaluator_and_the_plugin_skip_the_same_lines(tmp_path: Path) -> None:
    from pytest_ocrmetrics.evaluator import _parse_line

    lines = ["a.png\tA1", "b.png\t", "c.png\t  ", "no tab", "\tX"]
    root = make(tmp_path, "\n".join(lines) + "\n", images=("a.png", "b.png", "c.png"))
    with pytest.warns(DatasetWarning):
        dataset = load_dataset(root / "labels.txt")
    evaluator_reasons = [_parse_line(n, line) for n, line in enumerate(lines, start=1)]
    assert [r for r in evaluator_reasons if isinstance(r, str)] == [s.reason for s in dataset.skipped]


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
def test_an_empty_ground_truth_is_skipped_in_a_run(pytester: pytest.Pytester, xdist: list[str]) -> None:
    if xdist:
        pytest.importorskip("xdist")
    plates = pytester.path / "plates"
    (plates / "images").mkdir(parents=True)
    for name in ("a.png", "b.png", "c.png"):
        (plates / "images" / name).write_bytes(PNG_1X1 + name.encode())
    (plates / "labels.txt").write_text("images/a.png\tAB12\nimages/b.png\t  \nimages/c.png\tCD34\n",
                                       encoding="utf-8")
    preds = pytester.path / "preds"
    preds.mkdir()
    for stem, text in (("a", "AB12"), ("b", "XY99"), ("c", "CD34")):
        (preds / f"{stem}.txt").write_text(text, encoding="utf-8")
    result = pytester.runpytest("--ocr-dataset=plates", "--ocr-engine=replay:preds", "--ocr-json=run.json",
                                "--ocr-max=cer:0.5", *xdist)
    result.assert_outcomes(passed=2)  # b.png is neither scored (CER 1.0, failed) nor a test
    result.stdout.fnmatch_lines(["*labels.txt:2*the ground truth after the tab is empty*",
                                 "*1 ground-truth entry was skipped while loading*"])
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert sorted(d["id"] for d in run["documents"]) == ["images/a.png", "images/c.png"]
    assert run["summary"][0]["skipped_entries"] == 1
    assert run["skipped_entries"][0]["source"].endswith("labels.txt:2")
    assert "ground truth after the tab is empty" in run["skipped_entries"][0]["reason"]


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
