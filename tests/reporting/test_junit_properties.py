"""The JUnit ``<testsuite>`` property ``ocr.baseline.regressed``: ``true`` whenever the baseline comparison fails the
run (:attr:`~pytest_ocrmetrics.gating.comparison.Comparison.exit_failed`), not only on an aggregate regression.

The plugin end to end (``--ocr-document-regressions=fail``, with and without ``-n 2``) is in
``tests/plugin/test_release_verdict.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from ocr_run_factory import make_doc, make_run

from pytest_ocrmetrics.gating import compare_runs
from pytest_ocrmetrics.gating.verdict import Verdict
from pytest_ocrmetrics.reporting.junit import suite_properties


def _runs(worse: dict[int, float]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A baseline of 20 documents at CER 0.10 and a run where the documents in ``worse`` got that much worse."""
    base = make_run([make_doc(f"doc_{i:02}.png", {"cer": 0.10}) for i in range(20)])
    new = make_run([make_doc(f"doc_{i:02}.png", {"cer": round(0.10 + worse.get(i, 0.0), 4)}) for i in range(20)])
    return base, new


def _regressed(base: dict[str, Any], new: dict[str, Any], **options: Any) -> str:
    comparison = compare_runs(base, new, **options)
    properties = dict(suite_properties(new, Verdict(comparison=comparison)))
    assert properties["ocr.baseline.regressed"] == ("true" if comparison.exit_failed else "false")
    return properties["ocr.baseline.regressed"]


@pytest.mark.parametrize(("policy", "expected"), [("fail", "true"), ("warn", "false"), ("off", "false")])
def test_documents_regressed_under_fail_mark_the_baseline_regressed(policy: str, expected: str) -> None:
    """One document much worse, the aggregate within tolerance: only ``fail`` fails the run, and says so."""
    base, new = _runs({3: 0.2})
    comparison = compare_runs(base, new, {"cer": 0.05}, document_regressions=policy)
    assert not comparison.aggregate_failed  # +0.01 on the aggregate: within tolerance
    assert comparison.documents_fail is (policy == "fail")
    assert _regressed(base, new, tolerances={"cer": 0.05}, document_regressions=policy) == expected


def test_an_aggregate_regression_a_baseline_that_matched_nothing_and_an_unmatched_tolerance_mark_it() -> None:
    base, new = _runs({i: 0.1 for i in range(20)})
    assert _regressed(base, new, tolerances={"cer": 0.05}) == "true"
    other = make_run([make_doc("elsewhere.png", {"cer": 0.1}, dataset="letters")])
    assert compare_runs(other, new).matched_nothing
    assert _regressed(other, new) == "true"
    same, _ = _runs({})
    assert _regressed(base, same, tolerances={"cer": 0.05}) == "false"
    # a tolerance whose metric was compared nowhere fails the run as well
    assert compare_runs(base, same, {"crr": 0.01}).unmatched_tolerances
    assert _regressed(base, same, tolerances={"crr": 0.01}) == "true"
