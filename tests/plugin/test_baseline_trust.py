"""A baseline that compares nothing, compares other settings or holds NaN is never a silent pass (issue 13, item 2)."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pytest_ocrmetrics.gating import validate_run
from pytest_ocrmetrics.metrics.registry import METRIC_DEFINITIONS

BASE = ["--ocr-dataset=invoices", "--ocr-engine=replay:preds"]


def _baseline(pytester: pytest.Pytester) -> Path:
    assert pytester.runpytest(*BASE, "--ocr-json=base.json").ret == pytest.ExitCode.OK
    return pytester.path / "base.json"


def _suite_properties(path: Path) -> dict[str, str]:
    root = ET.parse(path).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    return {p.get("name"): p.get("value") for p in suite.findall("properties/property")}  # type: ignore[misc]


def _run_file(path: Path) -> dict[str, Any]:
    return validate_run(json.loads(path.read_text(encoding="utf-8")), str(path))


def test_renamed_dataset_folder_fails_the_session(pytester: pytest.Pytester, dataset: Path,
                                                  plugin_args: list[str]) -> None:
    base = _baseline(pytester)
    shutil.copytree(dataset, pytester.path / "invoices_2025")
    result = pytester.runpytest("--ocr-dataset=invoices_2025", "--ocr-engine=replay:preds", f"--ocr-baseline={base}",
                                "--ocr-max-regression=cer:0.01", "--junitxml=out.xml", "--ocr-json=new.json",
                                *plugin_args)
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # like a failed gate: checked nothing is not passed
    error = (f"baseline {str(base)!r} matched none of the 3 document(s) of this run, so nothing was compared: the "
             f"baseline has replay / invoices, this run has replay / invoices_2025 (engine / dataset): the same "
             f"documents are dataset 'invoices' in the baseline and 'invoices_2025' here (a dataset is named by its "
             f"path relative to pytest's rootdir); give it the baseline's name, --ocr-dataset=invoices=PATH (or name= "
             f"of the ocr_dataset marker), or make a new baseline from this setup with pytest --ocr-json=PATH")
    assert f"ERROR: {error}" in result.stdout.lines
    assert "gated aggregates" not in result.stdout.str()
    props = _suite_properties(pytester.path / "out.xml")
    assert props["ocr.baseline.compared"] == "0" and props["ocr.baseline.error"] == error
    entry = _run_file(pytester.path / "new.json")["baseline"]
    assert entry["compared"] == 0 and entry["new"] == 3 and entry["missing"] == 3 and entry["error"] == error
    assert entry["path"] == str(base)


def test_baseline_of_another_engine_fails_the_session(pytester: pytest.Pytester, dataset: Path) -> None:
    base = _baseline(pytester)
    base.write_text(base.read_text(encoding="utf-8").replace('"engine": "replay"', '"engine": "tesseract"'),
                    encoding="utf-8")
    result = pytester.runpytest(*BASE, "--ocr-baseline=base.json")
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["ERROR: baseline '*base.json' matched none of the 3 document(s) of this run*: "
                                 "the baseline has tesseract / invoices, this run has replay / invoices "
                                 "(engine / dataset)*"])
    # no "differences are reported, not enforced" note: the error is the verdict
    assert "not enforced" not in result.stdout.str()


@pytest.mark.xdist_transport
def test_partial_match_is_counted_everywhere(pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]) -> None:
    base = _baseline(pytester)
    run = json.loads(base.read_text(encoding="utf-8"))
    gone = dict(run["documents"][0], id="doc_404.png")  # in the baseline only: missing
    run["documents"] = [doc for doc in run["documents"] if doc["id"] != "doc_003.png"] + [gone]  # doc_003: new
    base.write_text(json.dumps(run), encoding="utf-8")
    result = pytester.runpytest(*BASE, "--ocr-baseline=base.json", "--ocr-max-regression=cer:0.01",
                                "--junitxml=out.xml", "--ocr-json=new.json", *plugin_args)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["compared with baseline '*base.json': 2 documents, 1 new, 1 missing",
                                 "*no regression beyond tolerance against the baseline*"])
    props = _suite_properties(pytester.path / "out.xml")
    assert (props["ocr.baseline.compared"], props["ocr.baseline.new"], props["ocr.baseline.missing"]) == ("2", "1", "1")
    assert "ocr.baseline.error" not in props and "ocr.baseline.warning" not in props
    entry = _run_file(pytester.path / "new.json")["baseline"]
    assert entry == {"path": str(base), "compared": 2, "new": 1, "missing": 1,
                     "normalization": {"name": "nfc", "unit": "grapheme", "tokenizer": "whitespace",
                                       "field_compare": "lowercase", "definitions": METRIC_DEFINITIONS,
                                       "word_match": {"distance": 1, "case_sensitive": False,
                                                      "ignore_punctuation": True}},
                     "normalization_mismatch": False, "warning": None, "error": None,
                     "document_regressions": {"policy": "warn", "count": 0, "failed": False, "documents": [],
                                              "fact_regressions": 0}}


@pytest.mark.parametrize(("option", "now"), [
    ("--ocr-normalize=nfkc", "normalization 'nfkc', unit 'grapheme', tokenizer 'whitespace'"),
    ("--ocr-unit=codepoint", "normalization 'nfc', unit 'codepoint', tokenizer 'whitespace'"),
    ("--ocr-tokenizer=unicode", "normalization 'nfc', unit 'grapheme', tokenizer 'unicode'"),
])
def test_baseline_with_other_normalization_is_refused_at_startup(pytester: pytest.Pytester, dataset: Path,
                                                                 option: str, now: str) -> None:
    base = _baseline(pytester)
    result = pytester.runpytest(*BASE, "--ocr-baseline=base.json", option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        f"ERROR: --ocr-baseline {str(base)!r} was made with normalization 'nfc', unit 'grapheme', tokenizer "
        f"'whitespace', this run uses {now}; make the baseline again with the same settings or pass "
        f"--ocr-baseline-allow-mismatch to compare anyway",
    ])
    assert "Traceback" not in result.stderr.str()


def test_baseline_with_another_field_comparison_is_refused(pytester: pytest.Pytester, dataset: Path) -> None:
    _baseline(pytester)
    result = pytester.runpytest(*BASE, "--ocr-baseline=base.json", "--ocr-field-compare=normalized")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --ocr-baseline * was made with normalization 'nfc', unit 'grapheme', "
                                 "tokenizer 'whitespace', field comparison 'lowercase', this run uses *"
                                 "field comparison 'normalized'; make the baseline again*"])


def test_baseline_of_older_metric_definitions_is_refused(pytester: pytest.Pytester, dataset: Path) -> None:
    """A 0.1.0 run file (no definitions version): its ser, token_accuracy, field_f1 meant other things."""
    base = _baseline(pytester)
    run = json.loads(base.read_text(encoding="utf-8"))
    run["normalization"] = {"name": "nfc", "unit": "grapheme", "tokenizer": "whitespace"}
    base.write_text(json.dumps(run), encoding="utf-8")
    result = pytester.runpytest(*BASE, "--ocr-baseline=base.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --ocr-baseline * field comparison 'normalized', metric definitions '1', "
                                 f"this run uses * field comparison 'lowercase', metric definitions "
                                 f"'{METRIC_DEFINITIONS}'; make the baseline again*"])


def test_allowed_normalization_mismatch_is_compared_with_a_loud_warning(
    pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]
) -> None:
    base = _baseline(pytester)
    result = pytester.runpytest(*BASE, "--ocr-baseline=base.json", "--ocr-normalize=nfc+casefold",
                                "--ocr-baseline-allow-mismatch", "--junitxml=out.xml", "--ocr-json=new.json",
                                *plugin_args)
    assert result.ret == pytest.ExitCode.OK
    warning = (f"baseline {str(base)!r} was made with normalization 'nfc', unit 'grapheme', tokenizer 'whitespace', "
               f"this run uses normalization 'nfc+casefold', unit 'grapheme', tokenizer 'whitespace': compared "
               f"anyway, so differences may come from these settings rather than from the OCR")
    assert f"WARNING: {warning}" in result.stdout.lines
    assert _suite_properties(pytester.path / "out.xml")["ocr.baseline.warning"] == warning
    entry = _run_file(pytester.path / "new.json")["baseline"]
    assert entry["normalization_mismatch"] is True and entry["warning"] == warning and entry["compared"] == 3
    assert entry["normalization"]["name"] == "nfc"


def test_allow_mismatch_has_an_ini_twin(pytester: pytest.Pytester, dataset: Path) -> None:
    _baseline(pytester)
    pytester.makeini("[pytest]\nocr_baseline_allow_mismatch = true\n")
    result = pytester.runpytest(*BASE, "--ocr-baseline=base.json", "--ocr-unit=codepoint")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["WARNING: baseline '*base.json' was made with *unit 'grapheme'*this run uses*"
                                 "unit 'codepoint'*compared anyway*"])


@pytest.mark.parametrize("token", ["NaN", "Infinity"])
def test_baseline_holding_nan_is_refused_at_startup(pytester: pytest.Pytester, dataset: Path, token: str) -> None:
    base = _baseline(pytester)
    run = json.loads(base.read_text(encoding="utf-8"))
    run["documents"][1]["metrics"]["cer"] = 0.123456789
    base.write_text(json.dumps(run).replace("0.123456789", token), encoding="utf-8")
    result = pytester.runpytest(*BASE, "--ocr-baseline=base.json", "--ocr-max-regression=cer:0.01")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --ocr-baseline: baseline run file {str(base)!r} holds {token} at "
                                 f"documents/1/metrics/cer, in document 'doc_002.png' (replay / invoices); *"])


def test_a_tolerance_on_a_metric_the_baseline_lacks_fails_the_session(pytester: pytest.Pytester, dataset: Path,
                                                                      plugin_args: list[str]) -> None:
    """The tolerance makes this run compute crr, but the baseline was made without it: nothing of crr was compared,
    which is an error (exit 1, an ERROR line, the JUnit and run-file error), not a green run."""
    base = _baseline(pytester)
    result = pytester.runpytest(*BASE, f"--ocr-baseline={base}", "--ocr-max-regression=crr:0.01",
                                "--junitxml=out.xml", "--ocr-json=new.json", *plugin_args)
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    error = ("the tolerance crr:0.01 compared nothing: the baseline has no values of it (make the baseline again "
             "with the metric computed)")
    assert f"ERROR: {error}" in result.stdout.lines
    assert _suite_properties(pytester.path / "out.xml")["ocr.baseline.error"] == error
    assert _run_file(pytester.path / "new.json")["baseline"]["error"] == error
    assert "crr" in _run_file(pytester.path / "new.json")["documents"][0]["metrics"]
