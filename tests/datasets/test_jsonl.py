"""Format 4: JSONL manifests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ocrmetrics.datasets import DatasetError, load_dataset
from tests.dataset_errors import entry_error


def make(tmp_path: Path, lines: list[str], name: str = "manifest.jsonl") -> Path:
    root = tmp_path / "set"
    (root / "img").mkdir(parents=True, exist_ok=True)
    (root / "img" / "a.png").write_bytes(b"\x89PNG\r\n\x1a\nimg")
    (root / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def test_manifest_lines_become_documents(tmp_path: Path) -> None:
    root = make(tmp_path, [
        json.dumps({"image": "img/b.png", "full_text": "B\u2028x", "thresholds": {"wer": 0.5}}),
        "",
        json.dumps({"image": "img/a.png", "full_text": "A", "fields": {"k": 1}, "tags": ["t"]}, ensure_ascii=False),
    ])
    dataset = load_dataset(root)
    assert dataset.format == "jsonl" and dataset.name == "set"
    a, b = dataset.documents
    assert (a.id, a.reference_text, a.fields, a.tags, a.error) == ("img/a.png", "A", {"k": 1}, ("t",), None)
    assert a.source == f"{root / 'manifest.jsonl'}:3"
    assert b.reference_text == "B\u2028x" and b.thresholds == {"wer": 0.5}
    assert b.error is not None and "does not exist" in b.error


def test_a_jsonl_file_can_be_given_directly(tmp_path: Path) -> None:
    root = make(tmp_path, [json.dumps({"image": "img/a.png", "full_text": "A"})], name="eval.jsonl")
    dataset = load_dataset(root / "eval.jsonl")
    assert dataset.name == "eval" and dataset.root == root and len(dataset) == 1


@pytest.mark.parametrize(("line", "doc_id", "expected"), [
    ('{"image": "img/a.png", "full_text": "A"', "manifest.jsonl:2", "manifest.jsonl: invalid JSON at line 2, column"),
    ('["img/a.png", "A"]', "manifest.jsonl:2", "manifest.jsonl:2: each line must be a JSON object"),
    ('{"full_text": "A"}', "manifest.jsonl:2", "manifest.jsonl:2: 'image' is missing"),
    ('{"image": 7, "full_text": "A"}', "manifest.jsonl:2", "manifest.jsonl:2: 'image' must be a string"),
    ('{"image": "../x.png", "full_text": "A"}', "../x.png",
     "manifest.jsonl:2: image path '../x.png' leaves the dataset folder"),
    ('{"image": "img/c.png", "full_text": 5}', "img/c.png",
     "manifest.jsonl:2 (image 'img/c.png'): 'full_text' must be a string"),
])
def test_malformed_lines_name_file_and_line(tmp_path: Path, line: str, doc_id: str, expected: str) -> None:
    """A malformed line errors its own document (named by its image, else by the line); the other lines load."""
    root = make(tmp_path, [json.dumps({"image": "img/a.png", "full_text": "A"}), line])
    dataset = load_dataset(root)
    assert expected in entry_error(dataset, doc_id)
    assert [d.id for d in dataset.documents if d.error is None] == ["img/a.png"]


def test_a_document_listed_twice_is_refused(tmp_path: Path) -> None:
    root = make(tmp_path, [json.dumps({"image": "img/a.png", "full_text": "A"}),
                           '{"image": "img/a.png", "full_text": "again"}'])
    with pytest.raises(DatasetError, match="document 'img/a.png' appears twice"):
        load_dataset(root)
