"""Documents that carry downstream tasks (issue 9, A5): ``success_rate`` as a run aggregate.

A ground-truth entry's ``tasks`` list holds the specification's tasks, ``{"type": "extraction" | "qa" |
"classification", "reference": {...}}``. With ``--ocr-metric=task_success`` each task is scored on the engine's
output (its structured ``fields``, or its text for extraction and qa) and the run's ``task_success`` micro value is
successes / tasks over all documents.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.datasets.base import document_from_entry
from pytest_ocrmetrics.engines.base import OcrOutput
from pytest_ocrmetrics.scoring.document import ScoringOptions, score_document, task_prediction
from tests.helpers.plugin import PNG_1X1

pytest_plugins = ["pytester"]

WANT_TASKS = ScoringOptions(extra_metrics=("task_success",))
SPEC_FIELDS = {"invoice_number": "INV-2024-001", "date": "2024-03-15", "total": "$150.00", "vendor": "Acme Corp"}
SPEC_RESULT = {"invoice_number": "INV-2024-001", "date": "2024-03-15", "total": "$150.00"}  # vendor missing


def _doc(tasks: list[dict[str, Any]], **kwargs: Any) -> Document:
    return Document("t.png", "d", None, None, tasks=tuple(tasks), **kwargs)


# ------------------------------------------------------------------------------------------- scoring, without pytest

def test_the_specification_extraction_example_is_a_failure_as_a_document_task() -> None:
    doc = _doc([{"type": "extraction", "reference": SPEC_FIELDS}])
    score = score_document(doc, OcrOutput(text="", fields=SPEC_RESULT), engine="e", options=WANT_TASKS)
    assert score.metrics["task_success"] == 0.0  # 3/4 = 0.75 < 0.8: the spec's code, not its comment
    assert score.counts["task_success"] == {"successes": 0, "tasks": 1}
    assert score.details["tasks"] == [{"type": "extraction", "task_success": False, "quality_score": 0.75,
                                       "error_type": "extraction_incomplete", "source": "engine"}]


def test_tasks_are_only_scored_when_task_success_is_asked_for() -> None:
    doc = _doc([{"type": "qa", "reference": {"answer": "42"}}])
    assert "task_success" not in score_document(doc, OcrOutput(text="42"), engine="e").metrics


def test_a_document_with_several_tasks_counts_each_task() -> None:
    doc = _doc([{"type": "qa", "reference": {"answer": "Acme Corp"}},
                {"type": "classification", "reference": {"class": "invoice"}},
                {"type": "summary", "reference": {"text": "an invoice"}}])  # unknown type: allowed, fails
    output = OcrOutput(text="whatever", fields={"answer": " acme corp ", "class": "invoice"})
    score = score_document(doc, output, engine="e", options=WANT_TASKS)
    assert score.counts["task_success"] == {"successes": 2, "tasks": 3}
    assert score.metrics["task_success"] == 2 / 3
    assert [(t["type"], t["error_type"], t["source"]) for t in score.details["tasks"]] == [
        ("qa", None, "engine"), ("classification", None, "engine"), ("summary", "unknown_task_type", "none")]


def test_document_tasks_replace_the_implicit_fields_task() -> None:
    doc = _doc([{"type": "qa", "reference": {"answer": "INV-2024-001"}}], fields=SPEC_FIELDS)
    score = score_document(doc, OcrOutput(text="", fields=SPEC_RESULT), engine="e", options=WANT_TASKS)
    assert score.counts["task_success"] == {"successes": 0, "tasks": 1}  # no "answer" in the fields, none in text
    assert "task" not in score.details and score.metrics["field_recall"] == 0.75


@pytest.mark.parametrize(("text", "answers", "expected", "success"), [
    ("Vendor: ACME\nCORP, Leeds", "acme corp", "ACME CORP", True),  # located across a line break, any case
    ("Total: 150.00", "150.00", "150.00", True),
    ("Total: l50.00", "150.00", "50.00", False),  # the best-matching span, misread, is what the engine answered
    ("Paid by card", ["cash", "CARD"], "card", True),  # any accepted answer
    ("", "42", "", False),
    ("\ud800\x00 \u202e42", "42", "42", True),  # lone surrogate and control characters in the output
])
def test_a_text_only_engine_answers_qa_with_the_span_located_in_its_text(
        text: str, answers: Any, expected: str, success: bool) -> None:
    task = {"type": "qa", "reference": {"answer": answers}}
    assert task_prediction(task, OcrOutput(text=text)) == ({"answer": expected}, "located in text")
    score = score_document(_doc([task]), OcrOutput(text=text), engine="e", options=WANT_TASKS)
    assert score.metrics["task_success"] == float(success)


def test_a_text_only_engine_gives_no_class_so_classification_fails() -> None:
    task = {"type": "classification", "reference": {"class": "invoice"}}
    score = score_document(_doc([task]), OcrOutput(text="INVOICE invoice"), engine="e", options=WANT_TASKS)
    assert score.details["tasks"][0]["error_type"] == "classification_wrong"
    assert score.details["tasks"][0]["source"] == "none"


def test_extraction_tasks_of_a_text_only_engine_locate_the_fields_in_the_text() -> None:
    task = {"type": "extraction", "reference": {"total": "$150.00", "vendor": "Acme Corp"}}
    score = score_document(_doc([task]), OcrOutput(text="ACME CORP\nTOTAL $150.00" + "x" * 100_000),
                           engine="e", options=WANT_TASKS)
    assert score.details["tasks"][0]["source"] == "located in text"
    assert score.metrics["task_success"] == 1.0


# ------------------------------------------------------------------------------------------ loading the ground truth

def _load(entry: Any) -> Document:
    return document_from_entry(entry, doc_id="a.png", image_path=Path("a.png"), dataset="d",
                               source="gt.json: a.png", where="gt.json, entry 'a.png'")


def test_tasks_are_read_from_the_entry() -> None:
    tasks = [{"type": "qa", "reference": {"answer": ["42", "forty-two"]}},
             {"type": "classification", "reference": {"class": 3}},
             {"type": "summary", "reference": {"text": "x"}}, {"type": "translation"}]
    doc = _load({"full_text": "x", "tasks": tasks})
    assert doc.tasks == ({"type": "qa", "reference": {"answer": ["42", "forty-two"]}},
                         {"type": "classification", "reference": {"class": 3}},
                         {"type": "summary", "reference": {"text": "x"}}, {"type": "translation", "reference": None})
    assert _load({"full_text": "x"}).tasks == ()


@pytest.mark.parametrize(("tasks", "message"), [
    ({"type": "qa"}, "gt.json, entry 'a.png': 'tasks' must be a list of task objects like "
                     "{\"type\": \"qa\", \"reference\": {\"answer\": \"42\"}}, got an object."),
    (["qa"], "gt.json, entry 'a.png', task 1: a task must be an object with 'type' and 'reference', got a string."),
    ([{"type": "qa", "refrence": {"answer": "1"}}], "gt.json, entry 'a.png', task 1: unknown key 'refrence'; "
                                                   "did you mean 'reference'?"),
    ([{"type": "qa", "reference": {"answer": "1"}, "weight": 2}],
     "gt.json, entry 'a.png', task 1: unknown key 'weight'; a task has only 'type' and 'reference'."),
    ([{"reference": {"answer": "1"}}], "gt.json, entry 'a.png', task 1: 'type' must be a task name (extraction, qa "
                                       "or classification), got null."),
    ([{"type": "qa", "reference": {"answer": "1"}}, {"type": "qa", "reference": {"question": "Total?"}}],
     "gt.json, entry 'a.png', task 2: the 'qa' task's 'reference' must be {\"answer\": ...} with a string, or a list "
     "of accepted strings, got an object without 'answer'."),
    ([{"type": "qa", "reference": {"answer": 42}}],
     "task 1: the 'qa' task's 'reference' must be {\"answer\": ...} with a string, or a list of accepted strings, "
     "got 'answer' a number."),
    ([{"type": "classification", "reference": "invoice"}],
     "task 1: the 'classification' task's 'reference' must be {\"class\": ...} with a string or number, got a string."),
    ([{"type": "classification", "reference": {"class": None}}], "got 'class' null."),
    ([{"type": "extraction", "reference": {}}], "task 1: the 'extraction' task's 'reference' must be an object of "
                                                "field name to value with at least one field, got an empty object."),
    ([{"type": "extraction"}], "must be an object of field name to value with at least one field, got nothing."),
])
def test_a_bad_task_is_one_sentence_naming_the_entry_and_the_task(tasks: Any, message: str) -> None:
    """The entry's document errors with the sentence (its test says it); the rest of the dataset loads."""
    error = _load({"full_text": "x", "tasks": tasks}).error
    assert error is not None and error.endswith(message)
    assert error.startswith("gt.json, entry 'a.png'")


def test_a_jsonl_manifest_carries_tasks_and_names_the_line_of_a_bad_one(tmp_path: Path) -> None:
    from pytest_ocrmetrics.datasets.jsonl import JsonlManifestLoader

    (tmp_path / "a.png").write_bytes(PNG_1X1)
    manifest = tmp_path / "manifest.jsonl"
    task = {"type": "classification", "reference": {"class": "invoice"}}
    manifest.write_text(json.dumps({"image": "a.png", "full_text": "x", "tasks": [task]}) + "\n", encoding="utf-8")
    (doc,) = JsonlManifestLoader().load(manifest, name="m").documents
    assert doc.tasks == (task,)
    bad = {"image": "a.png", "tasks": [{"type": "classification", "reference": {"klass": 1}}]}
    manifest.write_text(json.dumps(bad), encoding="utf-8")
    (doc,) = JsonlManifestLoader().load(manifest, name="m").documents
    assert doc.error == (f"{manifest}:1 (image 'a.png'), task 1: the 'classification' task's 'reference' must be "
                         "{\"class\": ...} with a string or number, got 'klass' instead of 'class'.")


def test_a_misspelt_tasks_key_is_caught() -> None:
    error = _load({"full_text": "x", "task": []}).error
    assert error is not None and error.endswith("unknown key 'task'; did you mean 'tasks'?")


# ---------------------------------------------------------------- through a whole pytest run, with and without xdist

RUN_DOCS: dict[str, dict[str, Any]] = {
    # the specification's extraction example: 3 of 4 fields, a failure
    "a.png": {"full_text": "INVOICE", "tasks": [{"type": "extraction", "reference": SPEC_FIELDS}]},
    # a qa task answered by the engine's fields, and a classification the engine gets wrong
    "b.png": {"full_text": "RECEIPT", "tasks": [{"type": "qa", "reference": {"answer": "Denver Broncos"}},
                                                {"type": "classification", "reference": {"class": "receipt"}}]},
    # a qa task answered in the text of an engine without structured output, and a classification it gets right
    "c.png": {"full_text": "Total due: 42 EUR", "tasks": [{"type": "qa", "reference": {"answer": "42 eur"}},
                                                          {"type": "classification", "reference": {"class": "bill"}}]},
    "d.png": {"full_text": "no tasks"},
}
RUN_TEXTS = {"a": "INVOICE", "b": "RECEIPT", "c": "Total due: 42 EUR", "d": "no tasks"}
RUN_FIELDS = {"a": {"fields": SPEC_RESULT},
              "b": {"fields": {"answer": " denver broncos", "class": "invoice"}},
              "c": {"fields": {"class": "bill"}}}


def _write_run(root: Path, docs: dict[str, Any]) -> None:
    data = root / "docs"
    (data / "images").mkdir(parents=True)
    (data / "ground_truth.json").write_text(json.dumps(docs), encoding="utf-8")
    for name in docs:
        (data / "images" / name).write_bytes(PNG_1X1 + name.encode())
    preds = root / "preds"
    preds.mkdir()
    for stem, text in RUN_TEXTS.items():
        (preds / f"{stem}.txt").write_text(text, encoding="utf-8")
    for stem, structured in RUN_FIELDS.items():
        (preds / f"{stem}.json").write_text(json.dumps(structured), encoding="utf-8")


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
def test_task_success_of_a_run_is_successes_over_tasks(pytester: pytest.Pytester, xdist: list[str]) -> None:
    if xdist:
        pytest.importorskip("xdist")
    _write_run(pytester.path, RUN_DOCS)
    result = pytester.runpytest("--ocr-dataset=docs", "--ocr-engine=replay:preds", "--ocr-json=run.json",
                                "--ocr-metric=task_success", *xdist)
    assert result.ret == 0, result.stdout.str()
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    (row,) = run["summary"]
    # a: 0 of 1 (0.75 < 0.8); b: qa yes, class no; c: qa located in the text, class yes; d: no tasks
    assert row["metrics"]["task_success"]["micro"] == 3 / 5  # not the mean of per-document rates (0 + 1/2 + 1) / 3
    by_id = {d["id"]: d for d in run["documents"]}
    assert "task_success" not in by_id["d.png"]["metrics"]
    assert by_id["a.png"]["counts"]["task_success"] == {"successes": 0, "tasks": 1}
    assert by_id["a.png"]["details"]["tasks"][0]["quality_score"] == 0.75
    assert [t["error_type"] for t in by_id["b.png"]["details"]["tasks"]] == [None, "classification_wrong"]
    assert [t["source"] for t in by_id["c.png"]["details"]["tasks"]] == ["located in text", "engine"]


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
def test_a_bad_task_entry_names_the_file_and_the_entry(pytester: pytest.Pytester, xdist: list[str]) -> None:
    if xdist:
        pytest.importorskip("xdist")
    docs = {**RUN_DOCS, "b.png": {"full_text": "x", "tasks": [{"type": "qa", "reference": {"answr": "x"}}]}}
    _write_run(pytester.path, docs)
    result = pytester.runpytest("--ocr-dataset=docs", "--ocr-engine=replay:preds", "--ocr-metric=task_success", *xdist)
    assert result.ret != 0
    output = result.stdout.str() + result.stderr.str()
    assert ("ground_truth.json, entry 'b.png', task 1: the 'qa' task's 'reference' must be {\"answer\": ...} with a "
            "string, or a list of accepted strings, got 'answr' instead of 'answer'.") in output
