"""Percent typos refused everywhere a limit is written, and an explicit ``%`` accepted there (issue 19, item 2).

The reported case: ``--ocr-max=cer:5`` gave 25 passed at a real CER of 45.6 %, ``--ocr-gate="cer<=5"`` printed PASS.
A plain number above 1 on a fraction metric is now refused with one sentence (a usage error at startup for the
command line, the ini file and gates; a collection error for a marker; the document's own error for its ground
truth), and ``cer:500%`` says on purpose what ``cer:5`` said by mistake. Every run here scores one document whose
CER is 0.456, so a limit that is read wrongly shows as a wrong outcome.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.plugin import make_dataset, usage_error_line

pytest_plugins = ["pytester"]

BASE = ["--ocr-dataset=invoices", "--ocr-engine=replay:preds"]
REFERENCE = "0123456789" * 12 + "01234"  # 125 characters
PREDICTION = REFERENCE[:68]  # 57 deleted: CER 57 / 125 = 0.456, the reported 45.6 %


def _dataset(root: Path, thresholds: dict[str, object] | None = None) -> Path:
    """``doc.png`` at CER 0.456 (with ``thresholds`` in its ground truth) and ``ok.png`` read without an error."""
    doc: dict[str, object] = {"full_text": REFERENCE}
    if thresholds is not None:
        doc["thresholds"] = thresholds
    return make_dataset(root, {"doc.png": doc, "ok.png": {"full_text": "fine"}}, {"doc": PREDICTION, "ok": "fine"})


def _outcomes(pytester: pytest.Pytester) -> dict[str, str]:
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    return {doc["id"]: doc["outcome"] for doc in run["documents"]}


# -- the command line, the ini file and gates: a usage error at startup ----------------------------------------------
@pytest.mark.parametrize(("args", "ini", "expected"), [
    (["--ocr-max=cer:5"], "", "--ocr-max=cer:5 reads as 500 %; write cer:0.05 for 5 % (or cer:500% if you mean it)"),
    (["--ocr-max=wer:12.5"], "",
     "--ocr-max=wer:12.5 reads as 1250 %; write wer:0.125 for 12.5 % (or wer:1250% if you mean it)"),
    ([], "ocr_max = cer:5\n", "ocr_max = cer:5 reads as 500 %; write cer:0.05 for 5 % (or cer:500% if you mean it)"),
    (["--ocr-min=field_f1:150%"], "",
     "--ocr-min 'field_f1:150%': field_f1 is at most 100 %, so a limit of 150% fails every document"),
    ([], "ocr_min = field_f1:90\n",
     "ocr_min (ini) 'field_f1:90': field_f1 is a fraction between 0 and 1; write field_f1:0.9 for 90 %"),
    (["--ocr-gate=cer<=5"], "",
     "--ocr-gate: gate 'cer<=5' reads as 500 %; write cer<=0.05 for 5 % (or cer<=500% if you mean it)"),
    ([], "ocr_gates = p95:ned<=20\n",
     "--ocr-gate: gate 'p95:ned<=20' reads as 2000 %; write p95:ned<=0.2 for 20 % (or p95:ned<=2000% if you mean it)"),
    (["--ocr-gate=field_f1>=150%"], "",
     "--ocr-gate: gate 'field_f1>=150%': field_f1 is at most 100 %, so a limit of 150% fails every document"),
], ids=["cli-max", "cli-max-decimal", "ini-max", "cli-min-above-100-percent", "ini-min", "cli-gate", "ini-gate",
        "gate-above-100-percent"])
def test_a_percent_typo_is_one_usage_error(pytester: pytest.Pytester, args: list[str], ini: str,
                                           expected: str) -> None:
    _dataset(pytester.path)
    if ini:
        pytester.makeini("[pytest]\n" + ini)
    assert usage_error_line(pytester.runpytest(*BASE, *args)) == expected


def test_a_ratio_above_1_is_no_typo(pytester: pytest.Pytester) -> None:
    """``token_ratio`` is a ratio, not a fraction: a limit of 1.5 is what it says."""
    _dataset(pytester.path)
    result = pytester.runpytest(*BASE, "--ocr-max=token_ratio:1.5", "--ocr-gate=token_ratio<=1.5")
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stderr.str()


@pytest.mark.parametrize(("limit", "expected"), [("500%", "passed"), ("40%", "failed"), ("45.6%", "passed"),
                                                 ("0.5", "passed")])
def test_an_explicit_percent_limit_is_applied(pytester: pytest.Pytester, plugin_args: list[str], limit: str,
                                              expected: str) -> None:
    _dataset(pytester.path)
    result = pytester.runpytest(*BASE, f"--ocr-max=cer:{limit}", "--ocr-json=run.json", *plugin_args)
    assert _outcomes(pytester) == {"doc.png": expected, "ok.png": "passed"}
    if expected == "failed":
        result.stdout.fnmatch_lines(["*cer = 0.456, must be <= 0.4 (from the command line / ini)*"])


def test_an_explicit_percent_in_the_ini_file_is_applied(pytester: pytest.Pytester) -> None:
    _dataset(pytester.path)
    pytester.makeini("[pytest]\nocr_max = cer:40%\n")
    pytester.runpytest(*BASE, "--ocr-json=run.json")
    assert _outcomes(pytester) == {"doc.png": "failed", "ok.png": "passed"}


@pytest.mark.parametrize(("gate", "verdict", "shown"), [
    ("cer<=500%", "PASS", "cer<=500%"), ("cer<=3%", "FAIL", "cer<=0.03"), ("cer<=40%", "FAIL", "cer<=0.4"),
    ("mean:cer<=25%", "PASS", "mean:cer<=0.25")])
def test_a_percent_gate_is_applied(pytester: pytest.Pytester, plugin_args: list[str], gate: str, verdict: str,
                                   shown: str) -> None:
    """Gates took no ``%`` before (refused); now ``cer<=3%`` is ``cer<=0.03``. The micro CER is 57 / 129 = 0.442
    (both documents' characters), the mean 0.228. A limit above 1 is shown as the percentage it was written as."""
    _dataset(pytester.path)
    result = pytester.runpytest(*BASE, f"--ocr-gate={gate}", *plugin_args)
    result.assert_outcomes(passed=2)
    assert result.ret == (pytest.ExitCode.OK if verdict == "PASS" else pytest.ExitCode.TESTS_FAILED)
    result.stdout.fnmatch_lines([f"*{verdict} gate {shown} *"])


# -- the ocr_thresholds marker: a collection error -------------------------------------------------------------------
def test_a_percent_typo_in_a_marker_is_one_collection_error(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    _dataset(pytester.path)
    pytester.makepyfile(test_marker="""
        import pytest
        pytestmark = pytest.mark.ocr_dataset("invoices")

        @pytest.mark.ocr_thresholds(cer=5)
        def test_text(ocr_score):
            pass
        """)
    result = pytester.runpytest("--ocr-engine=replay:preds", *plugin_args)
    result.assert_outcomes(errors=1)
    expected = ('test_marker.py::test_text: ocr_thresholds(cer=5) reads as 500 %; write ocr_thresholds(cer=0.05) '
                'for 5 % (or ocr_thresholds(cer="500%") if you mean it)')
    assert sum(line.startswith(expected) for line in result.stdout.lines) == 1, result.stdout.str()


@pytest.mark.parametrize(("limit", "expected"), [('"5%"', "failed"), ('"50%"', "passed"), ('"500%"', "passed"),
                                                 ("0.05", "failed")])
def test_a_percent_in_a_marker_is_applied(pytester: pytest.Pytester, plugin_args: list[str], limit: str,
                                          expected: str) -> None:
    _dataset(pytester.path)
    pytester.makepyfile(test_marker=f"""
        import pytest
        pytestmark = pytest.mark.ocr_dataset("invoices")

        @pytest.mark.ocr_thresholds(cer={limit})
        def test_text(ocr_score):
            pass
        """)
    result = pytester.runpytest("--ocr-engine=replay:preds", "--ocr-json=run.json", *plugin_args)
    assert _outcomes(pytester) == {"doc.png": expected, "ok.png": "passed"}
    if expected == "failed":
        result.stdout.fnmatch_lines(["*cer = 0.456, must be <= 0.05 (from the test)*"])


# -- per-document thresholds in the ground truth: that document errors, the others run --------------------------------
def test_a_percent_typo_in_the_ground_truth_errors_its_document(pytester: pytest.Pytester,
                                                                plugin_args: list[str]) -> None:
    _dataset(pytester.path, {"cer": 5})
    result = pytester.runpytest(*BASE, "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(['*ground_truth.json*doc.png*: thresholds: "cer": 5 reads as 500 %; '
                                 'write "cer": 0.05 for 5 % (or "cer": "500%" if you mean it).*'])
    assert _outcomes(pytester) == {"doc.png": "error", "ok.png": "passed"}


@pytest.mark.parametrize(("limit", "expected"), [("5%", "failed"), ("50%", "passed"), ("500%", "passed")])
def test_a_percent_in_the_ground_truth_is_applied(pytester: pytest.Pytester, plugin_args: list[str], limit: str,
                                                  expected: str) -> None:
    """The document's own ``"cer": "5%"`` wins over the command line's ``cer:0.9`` (its precedence is unchanged)."""
    _dataset(pytester.path, {"cer": limit})
    result = pytester.runpytest(*BASE, "--ocr-max=cer:0.9", "--ocr-json=run.json", *plugin_args)
    assert _outcomes(pytester) == {"doc.png": expected, "ok.png": "passed"}
    if expected == "failed":
        result.stdout.fnmatch_lines(["*cer = 0.456, must be <= 0.05 (from the document ground truth)*"])
