"""A run that evaluated no document of an engine × dataset (every test skipped or filtered) never passes as if it had
checked something: with thresholds, gates or a baseline's tolerances it fails with one sentence saying why; without
them it says so as a warning. Before, a CI machine without the engine went green with "9 skipped"."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_ocrmetrics.gating import validate_run
from tests.helpers.plugin import DOCS, make_dataset

GONE_ENGINE = """
from pytest_ocrmetrics.engines.base import EngineSpec, EngineUnavailable


def _create(arg, options):
    raise EngineUnavailable("the gone binary was not found: install gone")


def pytest_ocrmetrics_register_engines(registry):
    registry.register(EngineSpec("gone", _create, description="never installed"))
"""


def _low_confidence(root: Path) -> None:
    """Every replayed output says it is unsure (confidence 0.5): --ocr-min-confidence=0.9 filters them all."""
    for stem in ("doc_001", "doc_002", "doc_003"):
        (root / "preds" / f"{stem}.json").write_text(json.dumps({"fields": {}, "confidence": 0.5}), encoding="utf-8")


@pytest.mark.xdist_transport
def test_thresholds_with_every_document_filtered_fail_the_run(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    make_dataset(pytester.path)
    _low_confidence(pytester.path)
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-min-confidence=0.9",
                                "--ocr-max=cer:0.1", "--ocr-json=run.json", "--junitxml=out.xml",
                                "--ocr-markdown=summary.md", *plugin_args)
    result.assert_outcomes(skipped=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert ("ERROR: replay / invoices: none of its 3 documents was evaluated (3 filtered: engine confidence 0.500 is "
            "below --ocr-min-confidence=0.9), so nothing was checked there") in result.outlines
    assert not any(line.startswith("no threshold was checked") for line in result.outlines)  # it was given
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))  # every report is still written
    validate_run(run, "run.json")
    assert run["summary"][0]["evaluated"] == 0 and run["summary"][0]["filtered"] == 3
    assert [d.get("declared_checks") for d in run["documents"]] == [True, True, True]  # --ocr-max, in the run file
    suite = {p.get("name"): p.get("value") for p in ET.parse(pytester.path / "out.xml").getroot().iter("property")}
    assert suite["ocr.unevaluated.error"] == ("replay / invoices: none of its 3 documents was evaluated (3 filtered: "
                                              "engine confidence 0.500 is below --ocr-min-confidence=0.9), so nothing "
                                              "was checked there")
    # the reports' verdict agrees with pytest's (it used to say "passed: 3 documents, none failed")
    assert (pytester.path / "summary.md").read_text(encoding="utf-8").splitlines()[:3] == [
        "## ❌ OCR metrics: failed", "", "**FAILED**: no document was evaluated for replay / invoices"]


def test_without_thresholds_a_run_that_evaluated_nothing_is_a_warning(pytester: pytest.Pytester,
                                                                      plugin_args: list[str]) -> None:
    """Dataset items only, no threshold anywhere (the documents' own removed): nothing was asked, so a warning."""
    make_dataset(pytester.path, {name: {k: v for k, v in doc.items() if k != "thresholds"} for name, doc in DOCS.items()})
    _low_confidence(pytester.path)
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-min-confidence=0.9",
                                "--ocr-markdown=summary.md", *plugin_args)
    result.assert_outcomes(skipped=3)
    assert result.ret == pytest.ExitCode.OK
    assert ("WARNING: replay / invoices: none of its 3 documents was evaluated (3 filtered: engine confidence 0.500 "
            "is below --ocr-min-confidence=0.9)") in result.outlines
    result.stdout.fnmatch_lines(["no threshold was checked: pass --ocr-max/--ocr-min*"])
    assert (pytester.path / "summary.md").read_text(encoding="utf-8").splitlines()[:3] == [
        "## ✅ OCR metrics: passed", "", "**passed**: no document was evaluated for replay / invoices"]


def test_an_engine_that_is_not_installed_fails_a_run_with_thresholds(pytester: pytest.Pytester,
                                                                     plugin_args: list[str]) -> None:
    """The reported case: CI lacks the engine, so every document's test skips; the thresholds compared nothing.
    The other engine's documents are checked as usual; the missing engine's pair is named with the reason."""
    make_dataset(pytester.path)
    pytester.makeconftest(GONE_ENGINE)
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-engine=gone",
                                "--ocr-max=cer:0.5", *plugin_args)
    result.assert_outcomes(passed=3, skipped=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    errors = [line for line in result.outlines if line.startswith("ERROR: ")]
    assert errors == ["ERROR: gone / invoices: none of its 3 documents was evaluated (3 skipped: engine 'gone' is not "
                      "available: the gone binary was not found: install gone), so nothing was checked there"]


def test_a_gate_alone_makes_it_an_error_too(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path)
    pytester.makeconftest(GONE_ENGINE)
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=gone", "--ocr-gate=cer<=0.5")
    result.assert_outcomes(skipped=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["  FAIL gate cer<=0.5 matched no engine x dataset*",
                                 "ERROR: gone / invoices: none of its 3 documents was evaluated (3 skipped: *"])


@pytest.mark.parametrize(("value", "message"), [
    ("80", "--ocr-min-confidence=80 is out of range: engine confidences are fractions from 0 to 1; write "
           "--ocr-min-confidence=0.8 for 80 %"),
    ("-0.1", "--ocr-min-confidence=-0.1 is out of range: engine confidences are fractions from 0 to 1"),
    ("nan", "--ocr-min-confidence=nan is out of range: engine confidences are fractions from 0 to 1"),
])
def test_a_confidence_that_is_no_fraction_is_refused(pytester: pytest.Pytester, value: str, message: str) -> None:
    """``--ocr-min-confidence=80`` filtered every document (confidences are 0..1) and the run passed with skips."""
    make_dataset(pytester.path)
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", f"--ocr-min-confidence={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"ERROR: {message}" in result.stderr.lines


@pytest.mark.parametrize("value", ["0", "-3"])
def test_a_limit_below_one_is_refused(pytester: pytest.Pytester, value: str) -> None:
    make_dataset(pytester.path)
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", f"--ocr-limit={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (f"ERROR: --ocr-limit={value} is out of range; give a whole number from 1 to 1000000000"
            in result.stderr.lines)


@pytest.mark.xdist_transport
def test_a_test_function_whose_every_document_skipped_fails_the_run(pytester: pytest.Pytester,
                                                                     plugin_args: list[str]) -> None:
    """No threshold on the command line: the test function itself is the check (it exists to assert on the output),
    so a suite like the example suites fails on a machine without its engine, with and without xdist (the record
    of each skipped test says it declared a check)."""
    make_dataset(pytester.path)
    pytester.makeconftest(GONE_ENGINE)
    pytester.makepyfile(test_gone_text="""
        import pytest
        from pytest_ocrmetrics import assert_cer_below

        pytestmark = pytest.mark.ocr_dataset("invoices")

        def test_text(ocr_score):
            assert_cer_below(ocr_score, 0.5)
        """)
    result = pytester.runpytest("test_gone_text.py", "--ocr-engine=gone", "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(skipped=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["ERROR: gone / invoices: none of its 3 documents was evaluated (3 skipped: *), so "
                                 "nothing was checked there"])
    documents = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))["documents"]
    assert [d.get("declared_checks") for d in documents] == [True, True, True]


def test_document_thresholds_alone_make_it_an_error(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    """Only the ground truth has thresholds (doc_003's cer 0.5): a dataset item of that document declares a check."""
    make_dataset(pytester.path)
    pytester.makeconftest(GONE_ENGINE)
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=gone", "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(skipped=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    documents = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))["documents"]
    assert {d["id"]: d.get("declared_checks") for d in documents} == {
        "doc_001.png": None, "doc_002.png": None, "doc_003.png": True}


def test_page_facts_alone_make_it_an_error(pytester: pytest.Pytester) -> None:
    """A page's facts are checks of their own (olmOCR-bench style): with the engine missing, none was checked."""
    make_dataset(pytester.path, {"p1.png": {"full_text": "Total 5.00", "facts": [
        {"id": "p1-total", "type": "present", "text": "Total 5.00"}]}}, {"p1": "Total 5.00"})
    pytester.makeconftest(GONE_ENGINE)
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=gone")
    result.assert_outcomes(skipped=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["ERROR: gone / invoices: its 1 document was not evaluated (1 skipped: *), so "
                                 "nothing was checked there"])


def test_an_empty_dataset_is_a_collection_error_not_a_green_run(pytester: pytest.Pytester,
                                                                plugin_args: list[str]) -> None:
    """``{}`` as ground truth used to end in "no tests ran" (exit 5, no reason); a test function over it skipped
    ("the OCR datasets have no documents") and the run was green."""
    make_dataset(pytester.path, {}, {})
    pytester.makepyfile(test_empty_text="""
        import pytest

        @pytest.mark.ocr_dataset("invoices")
        def test_text(ocr_score):
            assert ocr_score["cer"] < 0.5
        """)
    message = f"{pytester.path / 'invoices'}: the dataset has no documents (its ground truth lists none)"
    for args in (["--ocr-dataset=invoices"], ["test_empty_text.py"]):
        result = pytester.runpytest(*args, "--ocr-engine=replay:preds", "--ocr-json=run.json", *plugin_args)
        assert result.ret == pytest.ExitCode.TESTS_FAILED, args
        assert any(message in line for line in result.outlines), args
        run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
        assert run["collection_errors"] == [{"dataset": str(pytester.path / "invoices"), "message": message}], args


def test_a_label_file_whose_every_line_is_skipped_says_the_first_reason(pytester: pytest.Pytester) -> None:
    plates = pytester.path / "plates"
    (plates / "images").mkdir(parents=True)
    (plates / "labels.txt").write_text("\tAB12\nno tab here\n", encoding="utf-8")  # an empty path, no tab
    (pytester.path / "preds").mkdir()
    result = pytester.runpytest("--ocr-dataset=plates", "--ocr-engine=replay:preds")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"*{pytester.path / 'plates'}: the dataset has no documents: all 2 entries were "
                                 "skipped, the first at *labels.txt:1: *"])


def test_verdict_lines_show_control_characters_as_marks(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    """A dataset folder named with an escape sequence and an engine whose reason holds ESC and BEL: the gate's FAIL
    line and the unevaluated ERROR line print marks, never the raw characters (they recoloured the terminal)."""
    make_dataset(pytester.path)
    hostile = pytester.path / "inv\x1b[31moices"
    (pytester.path / "invoices").rename(hostile)
    pytester.makeconftest(GONE_ENGINE.replace("the gone binary was not found", "bad \\x1b[31mred\\x07"))
    result = pytester.runpytest(f"--ocr-dataset={hostile.name}", "--ocr-engine=replay:preds", "--ocr-engine=gone",
                                "--ocr-gate=cer<=0.001", *plugin_args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    text = "\n".join(result.outlines)
    assert "\x1b" not in text and "\x07" not in text
    result.stdout.fnmatch_lines(["  FAIL gate cer<=0.001 FAILED for replay / inv␛[31moices: *",
                                 "ERROR: gone / inv␛[31moices: none of its 3 documents was evaluated (3 skipped: engine "
                                 "'gone' is not available: bad ␛[31mred␇: install gone), so nothing was checked there"])


def test_a_confidence_filter_that_could_not_judge_an_output_says_so(pytester: pytest.Pytester,
                                                                    plugin_args: list[str]) -> None:
    """Replayed outputs without a confidence pass --ocr-min-confidence unjudged: the filter must not look applied."""
    make_dataset(pytester.path)
    (pytester.path / "preds" / "doc_001.json").write_text(json.dumps({"fields": {}, "confidence": 0.95}),
                                                          encoding="utf-8")
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-min-confidence=0.9",
                                *plugin_args)
    result.assert_outcomes(passed=3)
    assert ("--ocr-min-confidence=0.9 could not judge 2 documents of replay: their output carries no confidence, so "
            "they were scored unfiltered") in result.outlines
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", *plugin_args)
    assert not any("could not judge" in line for line in result.outlines)  # no filter asked, nothing to say


@pytest.mark.xdist_transport
def test_the_confidence_note_counts_documents_not_test_functions(pytester: pytest.Pytester,
                                                                 plugin_args: list[str]) -> None:
    """Two test functions scoring the same 3 documents: 3 documents could not be judged, not 6 (issue 20 C7)."""
    make_dataset(pytester.path)
    pytester.makepyfile(test_suite="""
        import pytest

        @pytest.mark.ocr_dataset("invoices")
        def test_cer(ocr_score):
            assert ocr_score.metrics["cer"] < 0.5

        @pytest.mark.ocr_dataset("invoices")
        def test_wer(ocr_score):
            assert ocr_score.metrics["wer"] <= 1.0
    """)
    result = pytester.runpytest("--ocr-engine=replay:preds", "--ocr-min-confidence=0.9", *plugin_args)
    result.assert_outcomes(passed=6)
    assert ("--ocr-min-confidence=0.9 could not judge 3 documents of replay: their output carries no confidence, so "
            "they were scored unfiltered") in result.outlines
