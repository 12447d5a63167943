"""Schemas and outputs that used to hang the run or lose every report (issue 20, A9 and A12): a ``$ref`` loop and a
backtracking ``pattern`` in the ground truth error their own document with one sentence; an output nested 1,500
deep is not valid JSON (a verdict on it, with the reason). The other documents are scored, every report written."""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET

import pytest

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import OcrOutput
from pytest_ocrmetrics.metrics.structured import MAX_JSON_DEPTH
from pytest_ocrmetrics.scoring.document import ScoringError, score_document
from tests.helpers.plugin import make_dataset

pytest_plugins = ["pytester"]

DOCS = {
    "ok.png": {"full_text": "ok", "schema": {"type": "object", "required": ["a"]}},
    "deep.png": {"full_text": "deep", "schema": {"type": "array"}},
    "loop.png": {"full_text": "loop", "schema": {"$ref": "#"}},
    "slow.png": {"full_text": "slow",
                 "schema": {"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a|aa)+$"}}}},
    # the pattern: Python's re never ended on it; the regex package answers at once (no match)
    "nomatch.png": {"full_text": "nomatch",
                    "schema": {"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a+)+$"}}}},
}
PREDICTIONS = {
    "ok": '{"a": 1}',
    "deep": "```json\n" + "[" * 1500 + "]" * 1500 + "\n```",
    "loop": '{"a": 1}',
    "slow": json.dumps({"a": "a" * 40 + "!"}),
    "nomatch": json.dumps({"a": "a" * 34 + "!"}),
}
LOOP_SENTENCE = ("document 'loop.png' (replay): checking the output against the schema went deeper than Python's "
                 "recursion limit")
SLOW_SENTENCE = ("document 'slow.png' (replay): the schema's pattern '^(a|aa)+$' took more than 1 s on a 41-character "
                 "string of the output (catastrophic backtracking); simplify the pattern")


@pytest.mark.xdist_transport
def test_each_hazard_errors_or_fails_its_own_document_and_every_report_is_written(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    make_dataset(pytester.path, DOCS, PREDICTIONS)
    result = pytester.runpytest(
        "--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-min=json_valid:1", "--ocr-json=run.json",
        "--ocr-html=report.html", "--ocr-csv=rows.csv", "--junitxml=junit.xml", "-v", *plugin_args)
    out = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in out and "RecursionError" not in out and "Traceback" not in out, out
    assert "ScoringError" not in out and "SchemaCheckError" not in out, out  # the sentences alone, no traceback
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    result.assert_outcomes(passed=1, failed=2, errors=2)
    assert LOOP_SENTENCE in out and '(as {"$ref": "#"} does); fix the schema' in out
    assert SLOW_SENTENCE in out

    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    documents = {d["id"]: d for d in run["documents"]}
    assert sorted(documents) == sorted(DOCS)
    assert (documents["ok.png"]["outcome"], documents["ok.png"]["metrics"]["json_valid"]) == ("passed", 1.0)
    deep = documents["deep.png"]
    assert (deep["outcome"], deep["metrics"]["json_valid"], deep["metrics"]["parse_success"]) == ("failed", 0.0, 0.0)
    assert f"nested deeper than {MAX_JSON_DEPTH} levels" in deep["details"]["json"]["parse_error"]
    assert (documents["nomatch.png"]["outcome"], documents["nomatch.png"]["metrics"]["json_valid"]) == ("failed", 0.0)
    for doc, sentence in (("loop.png", LOOP_SENTENCE), ("slow.png", SLOW_SENTENCE)):
        assert documents[doc]["outcome"] == "error" and documents[doc]["metrics"] == {}
        assert documents[doc]["message"].startswith(sentence)
        assert "\n" not in documents[doc]["message"]

    html = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert all(doc in html for doc in DOCS)
    with (pytester.path / "rows.csv").open(encoding="utf-8") as handle:
        assert sorted(row["id"] for row in csv.DictReader(handle)) == sorted(DOCS)
    cases = ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    assert len(list(cases)) == len(DOCS)


def test_score_document_names_the_document_whose_schema_cannot_be_applied() -> None:
    document = Document(id="d1", dataset="set", image_path=None, reference_text="x", schema={"$ref": "#"},
                        source="set/ground_truth.json")
    with pytest.raises(ScoringError) as info:
        score_document(document, OcrOutput(text='{"a": 1}'), engine="replay")
    assert str(info.value).startswith("document 'd1' (replay): checking the output against the schema went deeper")
    assert str(info.value).endswith("fix the schema [ground truth: set/ground_truth.json]")


def test_a_test_function_errors_or_fails_with_the_sentence_on_a_schema_that_cannot_be_applied(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    make_dataset(pytester.path, {k: DOCS[k] for k in ("ok.png", "loop.png")}, PREDICTIONS)
    pytester.makepyfile(
        test_docs="""
        import pytest

        pytestmark = pytest.mark.ocr_dataset("invoices")

        def test_score(ocr_score):
            assert ocr_score.metrics["json_valid"] == 1.0

        def test_output_only(ocr_output):
            assert ocr_output.text
        """
    )
    result = pytester.runpytest("--ocr-engine=replay:preds", "--ocr-json=run.json", "-v", *plugin_args)
    out = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in out and "Traceback" not in out and "RecursionError" not in out, out
    assert "ScoringError" not in out and "def test_output_only" not in out, out  # the sentence, no traceback
    # the fixture errors its test (setup); a test that only read the output fails after it with the same sentence
    result.assert_outcomes(passed=2, failed=1, errors=1)
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    documents = {d["id"]: d for d in run["documents"]}  # one record per document and engine, its tests together
    assert sorted(documents) == ["loop.png", "ok.png"] and len(run["documents"]) == 2
    assert documents["loop.png"]["outcome"] == "error" and documents["loop.png"]["message"].startswith(LOOP_SENTENCE)
    assert (documents["ok.png"]["outcome"], documents["ok.png"]["metrics"]["json_valid"]) == ("passed", 1.0)
