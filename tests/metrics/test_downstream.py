from __future__ import annotations

import doctest
import json

import pytest

from pytest_ocrmetrics.metrics import downstream
from pytest_ocrmetrics.metrics.downstream import downstream_task, success_rate

REFERENCE = {"company": "INDAH GIFT & HOME DECO", "date": "19/10/2018", "address": "27, JALAN DEDAP 13", "total": "60.30"}

SPEC_TASK_RESULT = {"invoice_number": "INV-2024-001", "date": "2024-03-15", "total": "$150.00"}
SPEC_GROUND_TRUTH = {**SPEC_TASK_RESULT, "vendor": "Acme Corp"}


def test_docstring_examples() -> None:
    assert doctest.testmod(downstream).failed == 0


def test_specification_example_is_a_failure() -> None:
    """Document 000, 2.4: its comment says "task_success": True; 3/4 = 0.75 < 0.8 is a failure, as its code says."""
    r = downstream_task("extraction", SPEC_TASK_RESULT, SPEC_GROUND_TRUTH)
    assert (r.task_success, r.quality_score, r.error_type) == (False, 0.75, "extraction_incomplete")
    assert (r.threshold, r.scoring) == (0.8, "exact")
    assert r.details == {"matched": ["invoice_number", "date", "total"], "missing": ["vendor"], "incorrect": []}
    d = json.loads(json.dumps(r.to_dict(), allow_nan=False))
    assert {k: d[k] for k in ("task_success", "quality_score", "error_type")} == {
        "task_success": False, "quality_score": 0.75, "error_type": "extraction_incomplete"}
    assert r.counts() == {"successes": 0, "tasks": 1}


def test_extraction_exact_versus_similarity() -> None:
    """Where the old definition (normalized field F1) and the specification's (strip/lower equality / reference
    fields) differ: re-printed dates and amounts, and extra fields."""
    extracted = {"company": "indah gift & home deco ", "date": "2018-10-19", "address": "27,JALAN DEDAP 13",
                 "total": "RM60.3", "cashier": "ANN"}
    r = downstream_task("extraction", extracted, REFERENCE)
    assert (r.quality, r.success, r.details["matched"]) == (0.25, False, ["company"])
    old = downstream_task("extraction", extracted, REFERENCE, scoring="similarity")
    assert old.details["compare"] == "normalized"
    assert old.quality == 2 * 4 / (5 + 4) and old.success  # F1: 4 correct of 5 extracted and 4 reference fields
    # extra fields never lower the specification's quality
    assert downstream_task("extraction", {**REFERENCE, "x": "1", "y": "2"}, REFERENCE).quality == 1.0


def test_extraction_threshold_is_inclusive() -> None:
    ref = {"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"}
    r = downstream_task("extraction", {**ref, "e": "6"}, ref)
    assert (r.quality, r.threshold, r.success, r.error_type) == (0.8, 0.8, True, None)
    assert downstream_task("extraction", SPEC_TASK_RESULT, SPEC_GROUND_TRUTH, threshold=0.75).success is True


def test_extraction_compares_str_of_values() -> None:
    assert downstream_task("extraction", {"n": 5, "ok": True}, {"n": "5", "ok": "TRUE "}).quality == 1.0
    assert downstream_task("extraction", {"a": "x"}, {}).quality == 0.0  # no reference field: the spec's 0


def test_extraction_accepts_model_json_text() -> None:
    text = 'Here are the fields:\n```json\n' + json.dumps(REFERENCE) + "\n```"
    assert downstream_task("extraction", text, REFERENCE).quality == 1.0
    r = downstream_task("extraction", "I could not read the receipt.", REFERENCE)
    assert (r.quality, r.success, r.error_type) == (0.0, False, "extraction_incomplete")
    assert "Expecting value" in r.details["parse_error"]
    r = downstream_task("extraction", "[1, 2]", REFERENCE, scoring="similarity")
    assert r.details["parse_error"] == "the JSON is a list, not an object" and r.quality == 0.0
    assert downstream_task("extraction", None, REFERENCE).quality == 0.0


def test_qa_exact_after_strip_and_lower() -> None:
    r = downstream_task("qa", {"answer": "  Acme CORP\n"}, {"answer": "acme corp"})
    assert (r.quality, r.success, r.threshold, r.error_type) == (1.0, True, 0.5, None)
    wrong = downstream_task("qa", {"answer": "Acme Corp."}, {"answer": "acme corp"})
    assert (wrong.quality, wrong.success, wrong.error_type) == (0.0, False, "answer_incorrect")
    assert downstream_task("qa", {}, {"answer": ""}).success  # both missing: "" == ""
    assert downstream_task("qa", "12/15/88", ["12/15/88", "Dec 15 1988"]).success  # plain answers work too


def test_qa_exact_versus_anls() -> None:
    """Where the old definition (ANLS) and the specification's (exact) differ: one wrong digit."""
    assert downstream_task("qa", {"answer": "12/15/89"}, {"answer": "12/15/88"}).quality == 0.0
    r = downstream_task("qa", {"answer": "12/15/89"}, {"answer": "12/15/88"}, scoring="similarity")
    assert r.quality == 0.875 and r.success
    assert downstream_task("qa", "12/15/89", "12/15/88", scoring="similarity", threshold=0.9).success is False
    assert downstream_task("qa", "nothing like it", ["Dr. Lobo"], scoring="similarity").quality == 0.0


def test_classification_exact_versus_casefolded() -> None:
    r = downstream_task("classification", {"class": "invoice"}, {"class": "invoice"})
    assert (r.quality, r.success, r.error_type) == (1.0, True, None)
    wrong = downstream_task("classification", {"class": "invoice"}, {"class": "Invoice"})
    assert (wrong.quality, wrong.success, wrong.error_type) == (0.0, False, "classification_wrong")
    assert downstream_task("classification", {"class": "invoice"}, {"class": "Invoice"}, scoring="similarity").success
    assert downstream_task("classification", "  RECEIPT\n", "receipt", scoring="similarity").success
    assert downstream_task("classification", "invoices", "invoice", scoring="similarity").quality == 0.0


@pytest.mark.parametrize("task", ["summary", "Extraction", "", None, 3])
def test_unknown_task_is_a_failed_result_not_an_exception(task: object) -> None:
    r = downstream_task(task, "x", "x")  # type: ignore[arg-type]
    assert (r.success, r.quality, r.error_type) == (False, 0.0, "unknown_task_type")
    assert "valid: extraction, qa, classification" in r.details["error"]
    json.dumps(r.to_dict(), allow_nan=False)
    assert downstream_task(task, "x", "x", threshold=0.0).success is False  # type: ignore[arg-type]


def test_unknown_task_message_suggests_the_name() -> None:
    r = downstream_task("extration", {}, {})
    assert r.details["error"] == "unknown downstream task 'extration' (did you mean 'extraction'?); valid: extraction, qa, classification"


def test_success_rate_over_a_batch() -> None:
    batch = [
        downstream_task("extraction", SPEC_TASK_RESULT, SPEC_GROUND_TRUTH),  # 0.75: failure
        downstream_task("extraction", SPEC_GROUND_TRUTH, SPEC_GROUND_TRUTH),
        downstream_task("qa", {"answer": "42"}, {"answer": "42"}),
        downstream_task("classification", {"class": "a"}, {"class": "b"}),
        downstream_task("summary", "", ""),
    ]
    assert success_rate(batch) == 2 / 5
    assert success_rate(r.to_dict() for r in batch) == 2 / 5
    assert success_rate([]) == 0.0
    with pytest.raises(TypeError, match=r"results\[0\] must be a DownstreamResult or a dict with 'task_success', not int"):
        success_rate([1])  # type: ignore[list-item]


def test_hostile_values() -> None:
    weird = {"a": "\ud800", "b": "\x1b[31m", "c": "x" * 100_000}
    assert downstream_task("extraction", dict(weird), weird).quality == 1.0
    json.dumps(downstream_task("qa", {"answer": "\x00"}, {"answer": "\x00 "}).to_dict())


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="unknown downstream scoring 'similar' \\(did you mean 'similarity'\\?\\); valid: exact, similarity"):
        downstream_task("qa", "x", "x", scoring="similar")
    with pytest.raises(ValueError, match="between 0 and 1"):
        downstream_task("qa", "x", "x", threshold=80)
    with pytest.raises(TypeError, match="extraction ground_truth must be a mapping"):
        downstream_task("extraction", {}, "x")
    with pytest.raises(TypeError, match="extraction result must be a mapping"):
        downstream_task("extraction", 42, REFERENCE)
    with pytest.raises(TypeError, match="qa result is None"):
        downstream_task("qa", None, "x", scoring="similarity")
    with pytest.raises(TypeError, match="qa ground_truth must be"):
        downstream_task("qa", "x", 5)
    with pytest.raises(TypeError, match="classification result must be a str"):
        downstream_task("classification", 3, "x", scoring="similarity")
