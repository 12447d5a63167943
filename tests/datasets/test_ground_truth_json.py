"""Format 1: ground_truth.json + images/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ocrmetrics.datasets import DatasetError, load_dataset
from tests.dataset_errors import entry_error


def make(tmp_path: Path, data: object, images: tuple[str, ...] = ("a.png",), raw: str | None = None) -> Path:
    root = tmp_path / "ds"
    (root / "images").mkdir(parents=True)
    for name in images:
        (root / "images" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "images" / name).write_bytes(b"\x89PNG\r\n\x1a\nimg")
    (root / "ground_truth.json").write_text(raw if raw is not None else json.dumps(data), encoding="utf-8")
    return root


def test_shared_sroie_receipts_load_sorted_with_fields(shared_data: Path) -> None:
    dataset = load_dataset(shared_data / "sroie_receipts")
    assert dataset.format == "ground_truth_json"
    assert dataset.name == "sroie_receipts"
    assert len(dataset) == 25
    ids = [d.id for d in dataset]
    assert ids == sorted(ids) and ids[0] == "001.jpg"
    first = dataset.documents[0]
    assert first.fields is not None and first.fields["total"] == "60.30"
    assert first.reference_text is not None and first.reference_text.startswith("TAN WOON YANN\n")
    assert first.image_path == shared_data / "sroie_receipts" / "images" / "001.jpg"
    assert all(d.error is None for d in dataset)
    assert first.dataset == "sroie_receipts"
    assert first.source.endswith("ground_truth.json: 001.jpg")


def test_shared_pages_and_lines_keep_unicode(shared_data: Path) -> None:
    dataset = load_dataset(shared_data / "ocr_pages_lines", name="pages")
    assert dataset.name == "pages" and all(d.dataset == "pages" for d in dataset)
    assert len(dataset) == 10
    kant = next(d for d in dataset if d.id.startswith("page-ocrd-kant"))
    assert "ſ" in (kant.reference_text or "")


def test_optional_keys_and_sub_folders(tmp_path: Path) -> None:
    root = make(tmp_path, {
        "sub/b.png": {"full_text": "B", "thresholds": {"cer": 0.1, "field_f1": 1}, "tags": ["blur", "x"],
                      "schema": {"type": "object", "required": ["total"]}, "fields": {"total": "1.00"}},
        "./a.png": {"full_text": "A", "notes": "free metadata is ignored"},
    }, images=("a.png", "sub/b.png"))
    dataset = load_dataset(root)
    assert [d.id for d in dataset] == ["a.png", "sub/b.png"]
    b = dataset.documents[1]
    assert b.thresholds == {"cer": 0.1, "field_f1": 1.0}
    assert b.tags == ("blur", "x")
    assert b.schema == {"type": "object", "required": ["total"]}
    assert b.fields == {"total": "1.00"}
    assert dataset.documents[0].fields is None and dataset.documents[0].thresholds == {}


def test_fields_only_entry_has_no_reference_text(tmp_path: Path) -> None:
    dataset = load_dataset(make(tmp_path, {"a.png": {"fields": {"k": "v"}}}))
    assert dataset.documents[0].reference_text is None


def test_missing_image_marks_the_document_not_the_dataset(tmp_path: Path) -> None:
    dataset = load_dataset(make(tmp_path, {"a.png": {"full_text": "A"}, "gone.png": {"full_text": "G"}}))
    gone = dataset.documents[1]
    assert gone.id == "gone.png"
    assert gone.error is not None and "gone.png" in gone.error and gone.error.endswith("does not exist")
    assert dataset.documents[0].error is None


@pytest.mark.parametrize("key", ["../x.png", "sub/../../x.png", "/etc/passwd"])
def test_path_escaping_the_folder_is_refused(tmp_path: Path, key: str) -> None:
    """That entry's document errors (its test says why); the other entries still load."""
    dataset = load_dataset(make(tmp_path, {key: {"full_text": "x"}, "a.png": {"full_text": "A"}}))
    message = entry_error(dataset, key)
    assert "outside the dataset folder" in message or "leaves the dataset folder" in message
    assert key in message and "ground_truth.json" in message


def test_absolute_path_inside_the_folder_is_accepted(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    absolute = str((root / "images" / "a.png").absolute())
    dataset = load_dataset(make(tmp_path, {absolute: {"full_text": "A"}}))
    assert dataset.documents[0].id == "a.png" and dataset.documents[0].error is None


def test_json_syntax_error_names_file_line_and_column(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as info:
        load_dataset(make(tmp_path, None, raw='{\n "a.png": {"full_text": "x",}\n}'))
    message = str(info.value)
    assert "ground_truth.json" in message and "line 2, column" in message


@pytest.mark.parametrize(("entry", "expected"), [
    ({"full_text": 3}, "'full_text' must be a string, got a number"),
    ({"full_text": ["a"]}, "'full_text' must be a string, got a list"),
    ({"full_text": "x", "fields": ["a"]}, "'fields' must be an object"),
    ({"full_text": "x", "thresholds": {"cer": "0.1"}},
     "threshold 'cer' must be a number such as 0.1 or a percentage such as \"10%\", got \"0.1\""),
    ({"full_text": "x", "thresholds": {"cer": 5}},
     "entry 'a.png': thresholds: \"cer\": 5 reads as 500 %; write \"cer\": 0.05 for 5 % "
     "(or \"cer\": \"500%\" if you mean it)."),
    ({"full_text": "x", "thresholds": {"field_f1": "150%"}},
     "entry 'a.png': thresholds: field_f1 is at most 100 %, so a limit of 150% fails every document."),
    ({"full_text": "x", "thresholds": {"cer": "x%"}}, "the limit on cer must be a number such as 0.05 or a percentage"),
    ({"full_text": "x", "thresholds": {"cer": True}}, "threshold 'cer' must be a finite number"),
    ({"full_text": "x", "thresholds": [0.1]}, "'thresholds' must be an object"),
    ({"full_text": "x", "thresholds": {"cers": 0.1}}, "unknown threshold metric 'cers' (did you mean 'cer'?)"),
    ({"full_text": "x", "tags": "blur"}, "'tags' must be a list of strings"),
    ({"full_text": "x", "schema": {"type": 12}}, "'schema' is not a valid JSON Schema"),
    ({"full_text": "x", "schema": "object"}, "'schema' must be a JSON Schema object"),
    ({"full_text": "x", "threshold": {"cer": 0.1}}, "unknown key 'threshold'; did you mean 'thresholds'?"),
    ("just text", "an entry must be an object"),
])
def test_malformed_entry_names_file_and_entry(tmp_path: Path, entry: object, expected: str) -> None:
    """A malformed entry errors its own document with one sentence; the other entries load (nothing else is lost)."""
    dataset = load_dataset(make(tmp_path, {"a.png": entry, "b.png": {"full_text": "B"}}, images=("a.png", "b.png")))
    message = entry_error(dataset, "a.png")
    assert expected in message
    assert "ground_truth.json, entry 'a.png'" in message
    assert dataset.documents[1].reference_text == "B"


def test_percent_thresholds_read_as_fractions(tmp_path: Path) -> None:
    """``"5%"`` is 0.05; ``"500%"`` is a CER limit of 5 said on purpose (CER can exceed 1)."""
    dataset = load_dataset(make(tmp_path, {"a.png": {"full_text": "x", "thresholds": {"cer": "5%", "field_f1": "90%"}},
                                           "b.png": {"full_text": "y", "thresholds": {"cer": "500%"}}},
                                images=("a.png", "b.png")))
    a, b = dataset.documents
    assert a.error is None and a.thresholds == {"cer": pytest.approx(0.05), "field_f1": pytest.approx(0.9)}
    assert b.error is None and b.thresholds == {"cer": 5.0}


def test_unknown_metric_error_lists_valid_metrics(tmp_path: Path) -> None:
    dataset = load_dataset(make(tmp_path, {"a.png": {"full_text": "x", "thresholds": {"speed": 1}}}))
    assert "valid metrics: cer, wer" in entry_error(dataset, "a.png")


def test_top_level_must_be_an_object(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="top level must be an object"):
        load_dataset(make(tmp_path, [{"full_text": "x"}]))


def test_duplicate_keys_and_duplicate_ids_are_errors(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="key 'a.png' appears twice"):
        load_dataset(make(tmp_path, None, raw='{"a.png": {"full_text": "1"}, "a.png": {"full_text": "2"}}'))
    with pytest.raises(DatasetError, match="document 'a.png' appears twice"):
        load_dataset(make(tmp_path / "2", {"a.png": {"full_text": "1"}, "./a.png": {"full_text": "2"}}))


def test_byte_order_mark_and_non_ascii_text(tmp_path: Path) -> None:
    root = make(tmp_path, None, raw='\ufeff{"a.png": {"full_text": "Straße 京A12345"}}')
    assert load_dataset(root).documents[0].reference_text == "Straße 京A12345"


def test_ground_truth_file_itself_can_be_given(tmp_path: Path) -> None:
    root = make(tmp_path, {"a.png": {"full_text": "A"}})
    dataset = load_dataset(root / "ground_truth.json")
    assert dataset.root == root and dataset.format == "ground_truth_json" and len(dataset) == 1
