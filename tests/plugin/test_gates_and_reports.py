"""Suite gates, baseline regressions, JUnit suite properties and report files through whole pytest runs."""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

BASE = ["--ocr-dataset=invoices", "--ocr-engine=replay:preds"]


@pytest.mark.xdist_transport
def test_failing_gate_sets_exit_status_without_failing_a_test(pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]) -> None:
    result = pytester.runpytest(*BASE, "--ocr-gate=cer<=0.01", "--ocr-gate=mean:cer<=0.5", *plugin_args)
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*gates:*", "*FAIL gate*cer*replay / invoices*0.0556*", "*PASS gate*mean*cer*"])


def test_passing_gates_exit_zero(pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]) -> None:
    pytester.makeini("[pytest]\nocr_gates =\n    cer<=0.1\n    field_f1>=0.9\n")
    result = pytester.runpytest(*BASE, *plugin_args)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*PASS gate*cer*", "*PASS gate*field_f1*"])


def test_gate_typo_fails_at_startup(pytester: pytest.Pytester, dataset: Path) -> None:
    result = pytester.runpytest(*BASE, "--ocr-gate=cre<=0.1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ocr-gate*cre*cer*"])


def test_wrong_way_gate_is_refused(pytester: pytest.Pytester, dataset: Path) -> None:
    result = pytester.runpytest(*BASE, "--ocr-gate=cer>=0.1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR


@pytest.mark.xdist_transport
def test_baseline_regression_fails_exactly_the_regressed_document_and_the_session(
    pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]
) -> None:
    assert pytester.runpytest(*BASE, "--ocr-json=base.json").ret == 0
    (pytester.path / "preds" / "doc_002.txt").write_text("Hallo wrld", encoding="utf-8")  # injected regression
    result = pytester.runpytest(*BASE, "--ocr-baseline=base.json", "--ocr-max-regression=cer:0.01",
                                "--ocr-document-regressions=fail", "--junitxml=out.xml", *plugin_args)
    result.assert_outcomes(passed=2, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "*cer regressed on document 'doc_002.png'*baseline 0*now 0.1818*",
        "REGRESSION cer regressed for replay / invoices: 0.0556 -> 0.0926, delta +0.0370, 95% CI*n=3 paired documents*",
    ])
    root = ET.parse(pytester.path / "out.xml").getroot()
    failed = [case.get("name") for case in root.iter("testcase") if case.find("failure") is not None]
    assert failed == ["replay-doc_002.png"]


def test_baseline_without_tolerance_reports_but_does_not_fail(pytester: pytest.Pytester, dataset: Path) -> None:
    pytester.runpytest(*BASE, "--ocr-json=base.json")
    (pytester.path / "preds" / "doc_002.txt").write_text("Hallo wrld", encoding="utf-8")
    result = pytester.runpytest(*BASE, "--ocr-baseline=base.json")
    assert result.ret == pytest.ExitCode.OK
    # said once, with pytest's option, and each aggregate that moved is shown with its numbers
    result.stdout.fnmatch_lines(["no tolerance given (--ocr-max-regression=METRIC:AMOUNT): nothing fails; "
                                 "8 aggregates changed:",
                                 "  cer changed for replay / invoices: 0.0556 -> 0.0926, delta +0.0370, 95% CI *"])
    out = result.stdout.str()
    assert out.count("no tolerance given") == 1 and "--max-regression " not in out and "gated aggregate" not in out
    # nothing moved: said so
    pytester.runpytest(*BASE, "--ocr-json=same.json")
    result = pytester.runpytest(*BASE, "--ocr-baseline=same.json")
    result.stdout.fnmatch_lines(["no tolerance given (--ocr-max-regression=METRIC:AMOUNT): nothing fails; "
                                 "no aggregate changed"])


def test_bad_baseline_file_is_a_usage_error_naming_it(pytester: pytest.Pytester, dataset: Path) -> None:
    (pytester.path / "base.json").write_text("{not json", encoding="utf-8")
    result = pytester.runpytest(*BASE, "--ocr-baseline=base.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ocr-baseline*base.json*"])


@pytest.mark.xdist_transport
def test_junit_suite_properties_work_under_xdist(pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]) -> None:
    pytester.runpytest(*BASE, "--junitxml=out.xml", "--ocr-gate=cer<=0.1", *plugin_args)
    root = ET.parse(pytester.path / "out.xml").getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert float(props["ocr.replay.invoices.cer"]) == pytest.approx(3 / 54, abs=1e-6)
    assert props["ocr.replay.invoices.documents"] == "3"
    assert props["ocr.gate.cer<=0.1"] == "passed"


@pytest.mark.xdist_transport
def test_report_files_are_written(pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]) -> None:
    result = pytester.runpytest(*BASE, "--ocr-html=r/report.html", "--ocr-csv=r/docs.csv", "--ocr-markdown=r/summary.md",
                                *plugin_args)
    result.stdout.fnmatch_lines(["*wrote*report.html*"])
    html = (pytester.path / "r" / "report.html").read_text(encoding="utf-8")
    assert "doc_003.png" in html and "<script src=" not in html
    rows = list(csv.DictReader((pytester.path / "r" / "docs.csv").open(encoding="utf-8")))
    assert len(rows) == 3
    assert "replay" in (pytester.path / "r" / "summary.md").read_text(encoding="utf-8")


def test_cli_compare_agrees_with_the_plugin(pytester: pytest.Pytester, dataset: Path) -> None:
    pytester.runpytest(*BASE, "--ocr-json=base.json")
    (pytester.path / "preds" / "doc_002.txt").write_text("Hallo wrld", encoding="utf-8")
    pytester.runpytest(*BASE, "--ocr-json=new.json")
    from pytest_ocrmetrics.cli import main

    assert main(["compare", str(pytester.path / "base.json"), str(pytester.path / "new.json"), "--max-regression=cer:0.01"]) == 1
    assert main(["compare", str(pytester.path / "base.json"), str(pytester.path / "base.json"), "--max-regression=cer:0.01"]) == 0
    assert json.loads((pytester.path / "new.json").read_text())["schema"] == "pytest-ocrmetrics/1"


def test_bad_significance_fails_at_startup(pytester: pytest.Pytester, dataset: Path) -> None:
    pytester.runpytest(*BASE, "--ocr-json=base.json")
    result = pytester.runpytest(*BASE, "--ocr-baseline=base.json", "--ocr-significance=5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ocr-significance: significance must be between 0 and 1*"])


def test_improvement_is_reported_once(pytester: pytest.Pytester, dataset: Path) -> None:
    pytester.runpytest(*BASE, "--ocr-json=base.json")
    (pytester.path / "preds" / "doc_003.txt").write_text("Quick brown fox", encoding="utf-8")  # now exact
    result = pytester.runpytest(*BASE, "--ocr-baseline=base.json", "--ocr-max-regression=cer:0.01",
                                "--ocr-summary=full")
    assert result.ret == pytest.ExitCode.OK
    improved = [line for line in result.stdout.lines if "improved on document 'doc_003.png'" in line and "cer" in line]
    assert len(improved) == 1, result.stdout.str()
    # the short summary counts the improved documents in one line (a better model improves most of them)
    result = pytester.runpytest(*BASE, "--ocr-baseline=base.json", "--ocr-max-regression=cer:0.01")
    assert "improved on document" not in result.stdout.str()
    result.stdout.fnmatch_lines(["1 document metric(s) improved beyond tolerance on 1 document; the baseline can be "
                                 "updated (each is listed in the reports and with --ocr-summary=full)"])


def test_the_summary_intervals_are_bootstrapped_only_when_a_report_or_a_gate_reads_them(
    pytester: pytest.Pytester, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The terminal, JUnit, CSV and Markdown show no summary interval: a run writing only those skips the bootstrap
    (and numpy's import); the run file, the HTML report and a gate on ``ci_low``/``ci_high`` get them."""
    import importlib

    # the module in sys.modules, which the plugin's run imports: after an earlier in-process pytester run, the
    # package's ``results`` attribute may still name a module object that run's clean-up took out of sys.modules
    results = importlib.import_module("pytest_ocrmetrics.runfile.results")
    calls: list[int] = []
    bootstrap = results.bootstrap_mean_intervals
    monkeypatch.setattr(results, "bootstrap_mean_intervals",
                        lambda *args, **kwargs: calls.append(1) or bootstrap(*args, **kwargs))
    result = pytester.runpytest(*BASE, "--junitxml=out.xml", "--ocr-csv=d.csv", "--ocr-markdown=s.md")
    assert result.ret == pytest.ExitCode.OK and calls == []
    for args in (["--ocr-json=run.json"], ["--ocr-html=r.html"], ["--ocr-gate=ci_high:cer<=0.5"]):
        calls.clear()
        result = pytester.runpytest(*BASE, *args)
        assert result.ret == pytest.ExitCode.OK and calls, args
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert run["summary"][0]["metrics"]["cer"]["ci_low"] is not None
    assert "CI " in (pytester.path / "r.html").read_text(encoding="utf-8")
    result = pytester.runpytest(*BASE, "--ocr-gate=ci_high:cer<=0.01")  # judged on the computed bound
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*FAIL gate ci_high:cer<=0.01 FAILED for replay / invoices: ci_high cer = 0.1*"])
