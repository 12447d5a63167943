"""The replay engine: predictions made elsewhere, read from files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.datasets import load_dataset
from pytest_ocrmetrics.engines.base import EngineError, EngineOptionError
from pytest_ocrmetrics.engines.registry import default_registry
from pytest_ocrmetrics.engines.replay import ReplayEngine


def doc(doc_id: str) -> Document:
    return Document(doc_id, "d", Path("/nowhere") / doc_id, reference_text="x")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def test_replays_a_whole_shared_dataset(shared_data: Path, tmp_path: Path) -> None:
    dataset = load_dataset(shared_data / "sroie_receipts")
    for document in dataset:
        write(tmp_path / f"{document.id}.txt", (document.reference_text or "") + "\n")
    engine = default_registry(entry_points=False).create(f"replay:{tmp_path}", {})
    outputs = [engine.recognize(document) for document in dataset]
    assert [o.text for o in outputs] == [d.reference_text for d in dataset]
    assert all(o.engine == "replay" and o.fields is None and o.confidence is None for o in outputs)


def test_id_file_is_preferred_then_the_stem_in_the_same_sub_folder(tmp_path: Path) -> None:
    write(tmp_path / "a.png.txt", "by id")
    write(tmp_path / "a.txt", "by stem")
    write(tmp_path / "sub" / "b.txt", "stem in sub-folder")
    engine = ReplayEngine(tmp_path)
    assert engine.recognize(doc("a.png")).text == "by id"
    output = engine.recognize(doc("sub/b.png"))
    assert output.text == "stem in sub-folder"
    assert output.metadata["prediction"] == str(tmp_path / "sub" / "b.txt")


def test_missing_prediction_names_every_path_tried(tmp_path: Path) -> None:
    engine = ReplayEngine(tmp_path)
    with pytest.raises(EngineError) as info:
        engine.recognize(doc("sub/c.jpg"))
    message = str(info.value)
    assert "no prediction for document 'sub/c.jpg'" in message
    assert str(tmp_path / "sub" / "c.jpg.txt") in message and str(tmp_path / "sub" / "c.txt") in message


def test_text_is_utf8_with_one_trailing_newline_removed(tmp_path: Path) -> None:
    write(tmp_path / "a.txt", "京A12345\r\nline two\n\n")
    assert ReplayEngine(tmp_path).recognize(doc("a.png")).text == "京A12345\nline two\n"


def test_structured_json_with_fields_confidence_and_raw(tmp_path: Path) -> None:
    write(tmp_path / "a.png.txt", "Total 12.50")
    write(tmp_path / "a.png.json", json.dumps({"fields": {"total": "12.50"}, "confidence": 0.25, "raw": "{\"t\": 1}"}))
    output = ReplayEngine(tmp_path).recognize(doc("a.png"))
    assert output.fields == {"total": "12.50"} and output.confidence == 0.25 and output.raw == "{\"t\": 1}"


def test_bare_json_object_is_the_fields(tmp_path: Path) -> None:
    write(tmp_path / "a.txt", "Total 12.50")
    write(tmp_path / "a.json", json.dumps({"total": "12.50", "date": "2024-01-31"}))
    output = ReplayEngine(tmp_path).recognize(doc("a.png"))
    assert output.fields == {"total": "12.50", "date": "2024-01-31"} and output.confidence is None


@pytest.mark.parametrize(("content", "expected"), [
    ("{not json", "is not valid JSON"),
    ("[1]", "must be a JSON object"),
    ('{"fields": {}, "score": 1}', "unknown key 'score' next to 'fields'"),
    ('{"fields": [1]}', "'fields' must be an object"),
    ('{"fields": {}, "confidence": 1.5}', "'confidence' must be a number in 0..1"),
    ('{"fields": {}, "raw": 3}', "'raw' must be a string"),
])
def test_bad_json_prediction_errors_the_document(tmp_path: Path, content: str, expected: str) -> None:
    write(tmp_path / "a.txt", "x")
    write(tmp_path / "a.json", content)
    with pytest.raises(EngineError, match=expected):
        ReplayEngine(tmp_path).recognize(doc("a.png"))


def test_directory_from_arg_or_setting(tmp_path: Path) -> None:
    registry = default_registry(entry_points=False)
    by_option = registry.create("replay", {"dir": str(tmp_path)})
    assert by_option.identity()["dir"] == str(tmp_path.absolute())
    assert registry.create(f"replay:{tmp_path}", {"dir": str(tmp_path)}).identity()["dir"] == str(tmp_path.absolute())
    with pytest.raises(EngineOptionError, match="replay got two directories"):
        registry.create(f"replay:{tmp_path}", {"dir": str(tmp_path / "other")})
    with pytest.raises(EngineOptionError, match="replay needs a directory of predictions: pass --ocr-engine=replay:DIR or --ocr-engine-option=replay.dir=DIR"):
        registry.create("replay", {})
    with pytest.raises(EngineOptionError, match="does not exist; pass"):
        registry.create(f"replay:{tmp_path / 'missing'}", {})
    (tmp_path / "preds").mkdir()
    with pytest.raises(EngineOptionError) as info:  # a mistyped folder name: the folder that exists is named
        registry.create(f"replay:{tmp_path / 'pred'}", {})
    assert str(info.value) == (f"replay directory {str(tmp_path / 'pred')!r} does not exist (did you mean "
                               f"{str(tmp_path / 'preds')!r}?); pass --ocr-engine=replay:DIR with the folder of "
                               "predictions (<id>.txt files)")


def test_identity_changes_when_the_predictions_change(tmp_path: Path) -> None:
    write(tmp_path / "a.txt", "one")
    before = ReplayEngine(tmp_path).identity()
    assert json.loads(json.dumps(before)) == before
    assert ReplayEngine(tmp_path).identity() == before
    write(tmp_path / "a.txt", "two, longer")
    os.utime(tmp_path / "a.txt", ns=(1, 1))
    assert ReplayEngine(tmp_path).identity()["fingerprint"] != before["fingerprint"]


def test_ids_in_folders_fall_back_to_the_image_stem(tmp_path) -> None:
    from pytest_ocrmetrics.core.documents import Document
    from pytest_ocrmetrics.engines.replay import ReplayEngine

    (tmp_path / "plate_01.txt").write_text("AB12", encoding="utf-8")
    engine = ReplayEngine(tmp_path)
    document = Document("images/plate_01.png", "plates", None, "AB12")
    assert engine.recognize(document).text == "AB12"
    assert [p.name for p in engine.candidates(document)] == ["plate_01.png.txt", "plate_01.txt", "plate_01.txt"]


def test_a_prediction_json_nested_100000_deep_is_one_sentence(tmp_path: Path) -> None:
    write(tmp_path / "a.txt", "x")
    write(tmp_path / "a.json", '{"fields": {"x": ' + "[" * 100_000 + "]" * 100_000 + "}}")
    with pytest.raises(EngineError) as info:
        ReplayEngine(tmp_path).recognize(doc("a.png"))
    assert str(info.value).startswith(f"prediction {str(tmp_path / 'a.json')!r} is nested deeper than Python's JSON "
                                      "parser allows (more than about ")
    assert str(info.value).endswith(" levels of brackets); flatten it")


def test_a_broken_symlink_as_the_folder_names_its_target(tmp_path: Path) -> None:
    """Issue 20 C7: it read "does not exist (did you mean <the link itself>?)"."""
    (tmp_path / "preds").symlink_to(tmp_path / "gone")
    with pytest.raises(EngineOptionError) as info:
        default_registry(entry_points=False).create(f"replay:{tmp_path / 'preds'}", {})
    assert str(info.value) == (f"replay directory {str(tmp_path / 'preds')!r} is a broken symbolic link to "
                               f"{str(tmp_path / 'gone')!r}; pass --ocr-engine=replay:DIR with the folder of "
                               "predictions (<id>.txt files)")


def test_a_top_level_answer_and_class_are_the_tasks_prediction_not_fields(tmp_path: Path) -> None:
    """Issue 20 C7: a replayed qa answer / class could only be given inside "fields", where field F1 counted it as an
    extra field. Top-level "answer" / "class" feed the document's tasks; the fields stay the fields."""
    from pytest_ocrmetrics.scoring.document import ScoringOptions, score_document

    write(tmp_path / "a.txt", "Total 12.50")
    write(tmp_path / "a.json", json.dumps({"fields": {"total": "12.50"}, "answer": " 12.50 ", "class": "receipt"}))
    output = ReplayEngine(tmp_path).recognize(doc("a.png"))
    assert output.fields == {"total": "12.50"}
    assert output.metadata["task_prediction"] == {"answer": " 12.50 ", "class": "receipt"}
    document = Document("a.png", "d", None, "Total 12.50", fields={"total": "12.50"},
                        tasks=({"type": "qa", "reference": {"answer": "12.50"}},
                               {"type": "classification", "reference": {"class": "receipt"}}))
    score = score_document(document, output, engine="replay",
                           options=ScoringOptions(extra_metrics=("task_success",)))
    assert score.metrics["field_f1"] == 1.0 and score.metrics["field_precision"] == 1.0  # no extra field
    assert score.counts["task_success"] == {"successes": 2, "tasks": 2}
    assert [t["source"] for t in score.details["tasks"]] == ["engine", "engine"]
    write(tmp_path / "a.json", json.dumps({"fields": {}, "answer": 12.5}))
    with pytest.raises(EngineError, match="'answer' must be a string"):
        ReplayEngine(tmp_path).recognize(doc("a.png"))
