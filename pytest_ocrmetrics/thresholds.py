"""Thresholds: which limit applies to a document's metric, and whether its value passes.

Precedence, highest first: the document's own ``thresholds`` in the ground truth, the test's (a
``@pytest.mark.ocr_thresholds(cer=0.05)`` marker or the argument of an assertion helper), the command line
(``--ocr-max``/``--ocr-min``), the ini file. A document with page-level facts has one more, lowest: every fact must
pass (``fact_pass_rate >= 1``, :data:`FACTS_SOURCE`), as each fact is a test of olmOCR-bench; any level above
relaxes it (``--ocr-min=fact_pass_rate:0`` checks no fact). The direction comes from the metric registry: a lower-is-better metric
passes when ``value <= limit``, a higher-is-better one when ``value >= limit``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from pytest_ocrmetrics.documents import Document
from pytest_ocrmetrics.metrics.registry import METRICS, get_metric, in_registry_order, unknown_metric_message

__all__ = ["Threshold", "resolve_threshold", "applicable_thresholds", "limit_problem", "FACTS_SOURCE"]

#: where the implicit "every fact passes" threshold of a document with facts comes from (in messages and checks)
FACTS_SOURCE = "page's facts, each of which must pass"


def limit_problem(metric: str, value: float, written: Callable[[str], str]) -> str | None:
    """What is wrong with ``value`` as a limit on ``metric`` (one clause), or ``None`` when it is a sensible limit.

    The same rule as suite gates: a limit must be a finite number, never negative, and a higher-is-better fraction
    (``field_f1``, ``exact_match``) lies between 0 and 1: ``field_f1:90`` is a percentage typed where a fraction
    belongs, and would fail every document. ``written`` spells a corrected limit the way the caller's user typed it
    (``lambda v: f"--ocr-min=field_f1:{v}"``), so the message shows the fix.

    >>> limit_problem("field_f1", 90, lambda v: f"--ocr-min=field_f1:{v}")
    'field_f1 is a fraction between 0 and 1; write --ocr-min=field_f1:0.9 for 90 %'
    >>> limit_problem("cer", 0.05, str) is None
    True
    """
    spec = METRICS.get(metric)
    if spec is None:
        return unknown_metric_message(metric)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return f"the limit on {metric} must be a finite number, got {value!r}"
    if spec.unit == "fraction" and not spec.lower_is_better and not 0.0 <= value <= 1.0:
        if value > 1.0:
            return f"{metric} is a fraction between 0 and 1; write {written(f'{value / 100:g}')} for {value:g} %"
        return f"{metric} is a fraction between 0 and 1, got {value:g}"
    if value < 0:
        effect = "fails every document" if spec.lower_is_better else "passes every document"
        return f"{metric} is never negative, so a limit of {value:g} {effect}"
    return None


@dataclass(frozen=True)
class Threshold:
    """A limit on one metric and where it came from (``document``, ``test``, ``command line``)."""

    metric: str
    limit: float
    source: str

    @property
    def operator(self) -> str:
        return "<=" if get_metric(self.metric).lower_is_better else ">="

    def passes(self, value: float) -> bool:
        return value <= self.limit if get_metric(self.metric).lower_is_better else value >= self.limit

    def check(self, value: float) -> dict[str, Any]:
        """The check of ``value`` as recorded in the run file's ``checks``."""
        return {"metric": self.metric, "value": value, "limit": self.limit, "operator": self.operator,
                "source": self.source, "passed": self.passes(value)}

    def __str__(self) -> str:
        return f"{self.metric} {self.operator} {self.limit:g} (from the {self.source})"


def resolve_threshold(
    metric: str,
    document: Document | None,
    test_limit: float | None = None,
    configured: Mapping[str, float] | None = None,
) -> Threshold | None:
    """The threshold for ``metric``, by precedence; ``None`` when no level sets one.

    >>> from pytest_ocrmetrics.documents import Document
    >>> doc = Document("a.png", "demo", None, "x", thresholds={"cer": 0.2})
    >>> str(resolve_threshold("cer", doc, test_limit=0.05))
    'cer <= 0.2 (from the document ground truth)'
    """
    if document is not None and metric in document.thresholds:
        return Threshold(metric, float(document.thresholds[metric]), "document ground truth")
    if test_limit is not None:
        return Threshold(metric, float(test_limit), "test")
    if configured and metric in configured:
        return Threshold(metric, float(configured[metric]), "command line / ini")
    if metric == "fact_pass_rate" and document is not None and document.facts:
        return Threshold(metric, 1.0, FACTS_SOURCE)
    return None


def applicable_thresholds(
    document: Document,
    test_limits: Mapping[str, float],
    configured: Mapping[str, float],
    *,
    facts: bool = True,
) -> list[Threshold]:
    """Every threshold that applies to ``document`` at any level, one per metric, in registry order.

    ``facts=False`` leaves out the implicit every-fact-passes threshold (with ``--ocr-fact-items`` each fact is
    judged by its own test item instead).
    """
    names = set(document.thresholds) | set(test_limits) | set(configured)
    if document.facts:
        names.add("fact_pass_rate")
    result = []
    for name in in_registry_order(names):
        threshold = resolve_threshold(name, document, test_limits.get(name), configured)
        if threshold is not None and (facts or threshold.source != FACTS_SOURCE):
            result.append(threshold)
    return result
