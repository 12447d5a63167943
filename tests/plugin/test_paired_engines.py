"""``--ocr-summary=full`` with two or more engines on one dataset: each other engine's paired deltas against the
first (issue 19, item 6), the numbers of ``ocrmetrics compare RUN.json RUN.json --engine FIRST=OTHER``; a run with
one engine imports nothing of the gating package for it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pytest_ocrmetrics.cli import main
from pytest_ocrmetrics.reporting.common import format_delta

TWO_ENGINES = ["--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-engine=replay:preds2", "-p", "no:randomly"]


def _second_engine(root: Path) -> None:
    """``preds2``: doc_001 read without its error, doc_002 with two, doc_003 as ``preds`` reads it."""
    preds2 = root / "preds2"
    preds2.mkdir()
    for stem, text in {"doc_001": "INVOICE #12345\nTOTAL: 150.00", "doc_002": "Hel1o wor1d",
                       "doc_003": "Quick brwn fx"}.items():
        (preds2 / f"{stem}.txt").write_text(text, encoding="utf-8")


@pytest.mark.xdist_transport
def test_full_summary_shows_paired_deltas_against_the_first_engine(pytester: pytest.Pytester, dataset: Path,
                                                                   plugin_args: list[str]) -> None:
    _second_engine(pytester.path)
    result = pytester.runpytest(*TWO_ENGINES, "--ocr-summary=full", "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(passed=6)
    # CER: preds 3 errors in 54 characters, preds2 4 in 54: +1.85 pp over the 3 documents both scored
    result.stdout.fnmatch_lines([
        "*= OCR metrics =*",
        "paired deltas against the first engine of each dataset (other minus first, micro over the documents both "
        "scored; in brackets the 95% paired bootstrap interval):",
        "dataset*engines*paired*CER delta*WER delta*",
        "invoices*replay:preds -> replay:preds2*3*+1.85 pp [[]*, *[]]*",
        "",
        "*worst 5 documents by CER*",
    ])
    # the numbers of ocrmetrics compare on the run file, the same file twice
    out = io.StringIO()
    assert main(["compare", "run.json", "run.json", "--engine", "replay:preds=replay:preds2", "--json"],
                stdout=out) == 0
    (line,) = [line for line in result.stdout.lines if line.startswith("invoices ") and " -> " in line]
    for aggregate in json.loads(out.getvalue())["aggregates"]:
        if aggregate["metric"] in ("cer", "wer", "field_f1"):
            low, high = (format_delta(aggregate["metric"], bound).removesuffix(" pp") for bound in aggregate["interval"])
            assert f"{format_delta(aggregate['metric'], aggregate['delta'])} [{low}, {high}]" in line


def test_the_first_engine_is_the_first_one_given_in_the_terminal_the_run_file_and_the_html(
        pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]) -> None:
    _second_engine(pytester.path)
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds2", "--ocr-engine=replay:preds",
                                "--ocr-summary=full", "--ocr-json=run.json", "--ocr-html=r.html", *plugin_args)
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(["invoices*replay:preds2 -> replay:preds*3*-1.85 pp [[]*, *[]]*"])
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert list(run["environment"]["engines"]) == ["replay:preds2", "replay:preds"]
    assert "invoices (against replay:preds2)" in (pytester.path / "r.html").read_text(encoding="utf-8")


def test_full_summary_with_no_intervals_and_the_short_summary(pytester: pytest.Pytester, dataset: Path) -> None:
    _second_engine(pytester.path)
    result = pytester.runpytest(*TWO_ENGINES, "--ocr-summary=full", "--ocr-bootstrap=0")
    result.stdout.fnmatch_lines(["*documents both scored; no intervals: --ocr-bootstrap=0):",
                                 "invoices*replay:preds -> replay:preds2*3*+1.85 pp  *"])
    result = pytester.runpytest(*TWO_ENGINES)  # the short summary: the table only
    assert "paired deltas" not in result.stdout.str()


def test_an_engine_with_no_document_in_common_shows_zero_paired(pytester: pytest.Pytester, dataset: Path) -> None:
    """Documents are paired by id: an engine that scored none of the first engine's documents pairs nothing, and the
    row says 0 rather than hiding."""
    (pytester.path / "empty").mkdir()  # no prediction: every document of replay:empty errors
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-engine=replay:empty",
                                "--ocr-summary=full", "-p", "no:randomly")
    result.stdout.fnmatch_lines(["invoices*replay:preds -> replay:empty*0*-*"])


@pytest.mark.parametrize(("engines", "imported"), [(["--ocr-engine=replay:preds"], False),
                                                   (["--ocr-engine=replay:preds", "--ocr-engine=replay:preds2"], True)])
def test_one_engine_pays_nothing_for_the_paired_deltas(pytester: pytest.Pytester, dataset: Path,
                                                       engines: list[str], imported: bool) -> None:
    """The full summary of a one-engine run does not import the comparison machinery (a two-engine run does: the check
    can see it)."""
    _second_engine(pytester.path)
    pytester.makeconftest("""
        import sys

        def pytest_unconfigure(config):
            print("gating imported:", "pytest_ocrmetrics.gating.comparison" in sys.modules)
        """)
    result = pytester.runpytest_subprocess("--ocr-dataset=invoices", *engines, "--ocr-summary=full")
    assert result.ret == 0
    result.stdout.fnmatch_lines([f"gating imported: {imported}"])
    assert ("paired deltas" in result.stdout.str()) is imported
