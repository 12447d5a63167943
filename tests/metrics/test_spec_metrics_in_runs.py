"""The specification's field F1 comparison and the Biblicus set/order metrics as the plugin uses them.

Field F1 compares ``str(v).strip().lower()`` by default (``normalized`` and ``fuzzy`` are options); the Biblicus
metrics are registry metrics computed only when asked for (``--ocr-metric``), so the default per-document cost is
unchanged, and they flow into thresholds, gates, JUnit properties and the run file like any other metric.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import OcrOutput
from pytest_ocrmetrics.metrics import layout
from pytest_ocrmetrics.metrics.fields import COMPARE_MODES, field_f1
from pytest_ocrmetrics.metrics.registry import METRICS
from pytest_ocrmetrics.runfile.record import scored_record
from pytest_ocrmetrics.scoring.document import DEFAULT_TEXT_METRICS, ScoringOptions, score_document

BIBLICUS = ("set_precision", "set_recall", "set_f1", "sequence_accuracy", "lcs_ratio", "bigram_overlap",
            "trigram_overlap", "character_accuracy")


# ---------------------------------------------------------------------------------------------------- field F1 (spec)

SPEC_GROUND_TRUTH = {"invoice_number": "INV-2024-001", "date": "2024-03-15", "total": "$150.00", "vendor": "Acme Corp"}
SPEC_EXTRACTED = {"invoice_number": "INV-2024-001", "date": "2024-03-15", "total": "$15O.OO", "customer": "John Doe"}


def _spec_field_f1(extracted_fields: dict[str, Any], ground_truth_fields: dict[str, Any]) -> dict[str, Any]:
    """The specification's ``calculate_field_extraction_f1``, transcribed: the oracle."""
    gt_keys, ext_keys = set(ground_truth_fields), set(extracted_fields)
    correct = [k for k in gt_keys & ext_keys
               if str(extracted_fields[k]).strip().lower() == str(ground_truth_fields[k]).strip().lower()]
    precision = len(correct) / len(ext_keys) if ext_keys else 0
    recall = len(correct) / len(gt_keys) if gt_keys else 0
    f1 = 2 * (precision * recall) / (precision + recall) if (precision + recall) > 0 else 0
    return {"field_precision": precision, "field_recall": recall, "field_f1": f1, "correct_fields": sorted(correct),
            "missing_fields": sorted(gt_keys - ext_keys), "extra_fields": sorted(ext_keys - gt_keys),
            "incorrect_fields": sorted(k for k in gt_keys & ext_keys if k not in correct)}


def test_field_f1_default_is_the_specification_example_with_its_output_keys() -> None:
    result = field_f1(SPEC_GROUND_TRUTH, SPEC_EXTRACTED)  # no compare=: the default
    assert result.compare == "lowercase" == COMPARE_MODES[0]
    spec = {key: sorted(v) if isinstance(v, list) else v for key, v in result.to_dict().items() if key in
            ("field_precision", "field_recall", "field_f1", "correct_fields", "missing_fields", "incorrect_fields",
             "extra_fields")}
    assert spec == _spec_field_f1(SPEC_EXTRACTED, SPEC_GROUND_TRUTH)
    assert spec == {"field_precision": 0.5, "field_recall": 0.5, "field_f1": 0.5,
                    "correct_fields": ["date", "invoice_number"], "missing_fields": ["vendor"],
                    "incorrect_fields": ["total"], "extra_fields": ["customer"]}


@pytest.mark.parametrize(
    ("reference", "extracted", "lowercase", "normalized", "exact"),
    [
        ("$150.00", "150.00", False, True, False),  # amounts: the old default read both as 150
        ("19/10/2018", "2018-10-19", False, True, False),  # dates
        ("Acme Corp.", "ACME CORP", False, True, False),  # punctuation
        ("Acme  Corp", "acme corp", False, True, False),  # inner whitespace is not folded by strip()
        (" Acme Corp ", "acme corp", True, True, False),  # outer whitespace and case are
        ("İstanbul", "i̇stanbul", True, True, False),  # lower(), as the specification's Python
    ],
)
def test_lowercase_differs_from_the_old_normalized_default(reference: str, extracted: str, lowercase: bool,
                                                           normalized: bool, exact: bool) -> None:
    for mode, expected in (("lowercase", lowercase), ("normalized", normalized), ("exact", exact)):
        result = field_f1({"f": reference}, {"f": extracted}, compare=mode)  # type: ignore[arg-type]
        assert result.f1 == float(expected), mode


_values = ["INV-1", "inv-1", " INV-1 ", "Acme", "ACME", "$5.00", "5", "x", "\x00", "\ud800", "É", "é", "ß", "SS"]


@pytest.mark.parametrize("seed", range(30))
def test_lowercase_mode_equals_the_specification_code_on_flat_records(seed: int) -> None:
    import random

    rng = random.Random(seed)
    keys = ["a", "b", "c", "d", "e"]
    ground_truth = {k: rng.choice(_values) for k in rng.sample(keys, rng.randint(1, 5))}
    extracted = {k: rng.choice(_values) for k in rng.sample(keys, rng.randint(1, 5))}
    ours, spec = field_f1(ground_truth, extracted), _spec_field_f1(extracted, ground_truth)
    assert (ours.precision, ours.recall) == (spec["field_precision"], spec["field_recall"])
    assert ours.f1 == pytest.approx(spec["field_f1"])
    assert sorted(ours.incorrect) == spec["incorrect_fields"] and sorted(ours.missing) == spec["missing_fields"]


def test_scoring_defaults_to_the_specification_comparison_and_locates_values_case_insensitively() -> None:
    assert ScoringOptions().field_compare == "lowercase"
    document = Document("r.jpg", "receipts", None, None, fields={"company": "INDAH GIFT", "total": "$150.00"})
    text_engine = OcrOutput(text="Indah Gift\nTotal 150.00")
    default = score_document(document, text_engine, engine="e")
    assert default.details["fields"]["incorrect"] == ["total"]  # "indah gift" found; "$150.00" is not "150.00"
    assert default.metrics["field_f1"] == 0.5
    normalized = score_document(document, text_engine, engine="e", options=ScoringOptions(field_compare="normalized"))
    assert normalized.metrics["field_f1"] == 1.0
    exact = score_document(document, text_engine, engine="e", options=ScoringOptions(field_compare="exact"))
    assert exact.metrics["field_f1"] == 0.0  # located case-sensitively: "INDAH GIFT" is not in the text


# ---------------------------------------------------------------------------------------------------- Biblicus metrics


def test_biblicus_metrics_are_registered_higher_is_better_with_counts() -> None:
    for name in (*BIBLICUS, "char_lcs_ratio"):
        assert METRICS[name].better == "higher" and METRICS[name].requires == "text"
    assert "lcs_ratio" in METRICS and "over characters" in METRICS["char_lcs_ratio"].description
    assert "word" in METRICS["lcs_ratio"].description


def test_default_scoring_does_not_compute_them(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("layout_scores called without --ocr-metric")

    monkeypatch.setattr(layout, "layout_scores", fail)
    document = Document("a.png", "d", None, "hello world from biblicus")
    score = score_document(document, OcrOutput(text="hello form world biblicus"), engine="e")
    assert set(score.metrics) == set(DEFAULT_TEXT_METRICS)


def test_extra_metrics_give_the_specification_values_and_micro_counts() -> None:
    document = Document("a.png", "d", None, "hello world from biblicus")
    options = ScoringOptions(extra_metrics=(*BIBLICUS, "char_lcs_ratio"))
    score = score_document(document, OcrOutput(text="hello form world biblicus"), engine="e", options=options)
    m = score.metrics
    assert m["sequence_accuracy"] == 0.5  # positions 0 and 3 (the document says 1/4; its formula gives 2/4)
    assert m["lcs_ratio"] == 0.75  # hello world biblicus
    assert (m["set_precision"], m["set_recall"], m["set_f1"]) == (0.75, 0.75, 0.75)
    assert m["bigram_overlap"] == 0.0 and m["trigram_overlap"] == 0.0
    assert m["character_accuracy"] == pytest.approx(1 - m["cer"])
    assert m["char_lcs_ratio"] == layout.char_lcs_ratio(document.reference_text, "hello form world biblicus").value
    for name in BIBLICUS:
        spec = METRICS[name]
        c = score.counts[name]
        assert c[spec.numerator] / c[spec.denominator] == pytest.approx(m[name]), name


def test_hostile_text_does_not_break_them() -> None:
    reference = "a \ud800 b\x00 \x1b[31mc " + "word " * 20_000
    hypothesis = "\ud800 a b\x00 \u202e" + "word " * 19_000
    document = Document("a.png", "d", None, reference)
    options = ScoringOptions(extra_metrics=(*BIBLICUS, "char_lcs_ratio"))
    score = score_document(document, OcrOutput(text=hypothesis), engine="e", options=options)
    assert all(0.0 <= score.metrics[name] <= 1.0 for name in (*BIBLICUS, "char_lcs_ratio"))
    json.dumps(scored_record(score), allow_nan=False)


# ---------------------------------------------------------------------------------------------------- in a run

PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


def _dataset(root: Path) -> None:
    docs = {"a.png": {"full_text": "hello world from biblicus", "fields": {"total": "$150.00", "vendor": "ACME"}},
            "b.png": {"full_text": "the quick brown fox jumps"}}
    (root / "data" / "images").mkdir(parents=True)
    (root / "data" / "ground_truth.json").write_text(json.dumps(docs), encoding="utf-8")
    for name in docs:
        (root / "data" / "images" / name).write_bytes(PNG_1X1 + name.encode())
    (root / "preds").mkdir()
    (root / "preds" / "a.txt").write_text("hello form world biblicus", encoding="utf-8")
    fields = {"fields": {"total": "150.00", "vendor": "acme"}}  # engine fields: compared as they are
    (root / "preds" / "a.json").write_text(json.dumps(fields), encoding="utf-8")
    (root / "preds" / "b.txt").write_text("the brown quick fox", encoding="utf-8")


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
def test_a_run_reports_them_as_registry_metrics(pytester: pytest.Pytester, xdist: list[str]) -> None:
    if xdist:
        pytest.importorskip("xdist")
    _dataset(pytester.path)
    result = pytester.runpytest(
        "--ocr-dataset=data", "--ocr-engine=replay:preds", "--ocr-json=run.json", "--junitxml=out.xml",
        "--ocr-metric=sequence_accuracy", "--ocr-metric=lcs_ratio", "--ocr-metric=bigram_overlap",
        "--ocr-gate=lcs_ratio>=0.6", "--ocr-gate=sequence_accuracy>=0.9", *xdist)
    result.stdout.fnmatch_lines(["*PASS*gate*lcs_ratio*", "*FAIL*gate*sequence_accuracy*"])
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    documents = {d["id"]: d for d in run["documents"]}
    assert documents["a.png"]["metrics"]["sequence_accuracy"] == 0.5
    assert documents["b.png"]["metrics"]["lcs_ratio"] == 0.6
    assert documents["a.png"]["metrics"]["field_f1"] == 0.5  # the default comparison: "$150.00" != "150.00"
    assert "set_f1" not in documents["a.png"]["metrics"]  # not asked for
    summary = run["summary"][0]["metrics"]
    assert summary["lcs_ratio"]["micro"] == pytest.approx((3 + 3) / (4 + 5))  # Σ lcs_words / Σ reference_words
    assert summary["sequence_accuracy"]["micro"] == pytest.approx((2 + 2) / (4 + 5))  # b: "the" and "fox" in place
    properties = {p.get("name") for p in ET.parse(pytester.path / "out.xml").iter("property")}
    assert {"ocr.sequence_accuracy", "ocr.lcs_ratio", "ocr.bigram_overlap"} <= properties


def test_the_plugin_option_selects_the_old_comparison(pytester: pytest.Pytester) -> None:
    _dataset(pytester.path)
    pytester.runpytest("--ocr-dataset=data", "--ocr-engine=replay:preds", "--ocr-json=run.json",
                       "--ocr-field-compare=normalized")
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert {d["id"]: d["metrics"].get("field_f1") for d in run["documents"]}["a.png"] == 1.0
