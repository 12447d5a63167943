"""A threshold on a metric computed only on request (crr, word_f1, lcs_ratio, ...) requests it: before, a threshold
like ``--ocr-min=crr:0.999`` passed every document having checked nothing. A threshold that still cannot be checked
on a document (field_f1 on a document without fields) is listed in the run file and said under the summary."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.helpers.plugin import DOCS, make_dataset


def _checked(run: dict[str, Any], metric: str) -> dict[str, bool]:
    return {doc["id"]: check["passed"] for doc in run["documents"] for check in doc.get("checks") or ()
            if check["metric"] == metric}


@pytest.mark.xdist_transport
@pytest.mark.parametrize("option", ["--ocr-min=crr:0.999", "--ocr-gate=crr>=0.999"])
def test_a_command_line_threshold_or_gate_on_an_opt_in_metric_computes_and_checks_it(
        pytester: pytest.Pytester, plugin_args: list[str], option: str) -> None:
    make_dataset(pytester.path)
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", option, "--ocr-json=run.json",
                                *plugin_args)
    assert result.ret == 1, result.stdout.str()  # doc_001 (INV0ICE) and doc_003 (brwn fx) read words wrong
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert all("crr" in doc["metrics"] for doc in run["documents"])
    assert run["summary"][0]["metrics"]["crr"]["mean"] < 0.999
    if option.startswith("--ocr-min"):
        assert _checked(run, "crr") == {"doc_001.png": False, "doc_002.png": True, "doc_003.png": False}
        result.assert_outcomes(passed=1, failed=2)
    else:
        result.assert_outcomes(passed=3)  # the gate judges the aggregate
        result.stdout.fnmatch_lines(["*crr*"])


def test_a_marker_and_a_document_threshold_compute_their_metrics(pytester: pytest.Pytester,
                                                                  plugin_args: list[str]) -> None:
    docs = {**DOCS, "doc_002.png": {**DOCS["doc_002.png"], "thresholds": {"word_f1": 1.0}}}
    make_dataset(pytester.path, docs, {"doc_001": DOCS["doc_001.png"]["full_text"], "doc_002": "Hello wrld",
                                       "doc_003": "Quick brown fox"})
    pytester.makepyfile(
        """
        import pytest

        pytestmark = pytest.mark.ocr_dataset("invoices")

        @pytest.mark.ocr_thresholds(lcs_ratio=1.0)
        def test_document(ocr_output):
            pass
        """
    )
    result = pytester.runpytest("--ocr-engine=replay:preds", "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(passed=2, failed=1)  # doc_002: "wrld" fails both its word_f1 and the marker's lcs_ratio
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert _checked(run, "lcs_ratio") == {"doc_001.png": True, "doc_002.png": False, "doc_003.png": True}
    assert _checked(run, "word_f1") == {"doc_002.png": False}
    result.stdout.fnmatch_lines(["*word_f1*", "*lcs_ratio*"])


def test_a_threshold_that_cannot_be_checked_is_said_not_passed_over(pytester: pytest.Pytester,
                                                                   plugin_args: list[str]) -> None:
    """doc_002 has an empty fields object and doc_003 none: field_f1 >= 0.9 is checked on doc_001 only, and the
    summary says on how many documents it could not be."""
    make_dataset(pytester.path)
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-min=field_f1:0.9",
                                "--ocr-json=run.json", *plugin_args)
    assert result.ret == 0, result.stdout.str()
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert {doc["id"]: doc.get("unchecked_thresholds") for doc in run["documents"]} == {
        "doc_001.png": None, "doc_002.png": ["field_f1"], "doc_003.png": ["field_f1"]}
    assert _checked(run, "field_f1") == {"doc_001.png": True} and run["unchecked_thresholds"] == {"field_f1": 2}
    result.stdout.fnmatch_lines(["the field_f1 threshold could not be checked on 2 documents: they lack ground-truth "
                                 "fields"])


def test_merged_shards_add_up_the_unchecked_thresholds(pytester: pytest.Pytester) -> None:
    from pytest_ocrmetrics.runfile.merge import merge_runs

    make_dataset(pytester.path)
    runs = []
    for shard in ("1/2", "2/2"):
        pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-min=field_f1:0.9",
                           f"--ocr-shard={shard}", f"--ocr-json=run{shard[0]}.json")
        runs.append((shard, json.loads((pytester.path / f"run{shard[0]}.json").read_text(encoding="utf-8"))))
    pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-min=field_f1:0.9",
                       "--ocr-json=whole.json")
    whole = json.loads((pytester.path / "whole.json").read_text(encoding="utf-8"))
    assert merge_runs(runs).get("unchecked_thresholds") == whole["unchecked_thresholds"]
