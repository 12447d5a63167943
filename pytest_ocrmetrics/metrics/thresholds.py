"""Thresholds: which limit applies to a document's metric, and whether its value passes.

Precedence, highest first: the document's own ``thresholds`` in the ground truth, the test's (a
``@pytest.mark.ocr_thresholds(cer=0.05)`` marker or the argument of an assertion helper), the command line
(``--ocr-max``/``--ocr-min``), the ini file. A document with page-level facts has one more, lowest: every fact must
pass (``fact_pass_rate >= 1``, :data:`FACTS_SOURCE`), as each fact is a test of olmOCR-bench; any level above
relaxes it (``--ocr-min=fact_pass_rate:0`` checks no fact). The direction comes from the metric registry: a lower-is-better metric
passes when ``value <= limit``, a higher-is-better one when ``value >= limit``.

Wherever a limit is written it is read by :func:`parse_limit`: a fraction (``0.05``) or an explicit percentage
(``"5%"``); a plain number above 1 on a fraction metric (``cer:5``) is a percent typo and is refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.metrics.registry import METRICS, get_metric, in_registry_order, unknown_metric_message

__all__ = ["Threshold", "resolve_threshold", "applicable_thresholds", "parse_limit", "format_limit", "LimitError",
           "FACTS_SOURCE"]

#: where the implicit "every fact passes" threshold of a document with facts comes from (in messages and checks)
FACTS_SOURCE = "page's facts, each of which must pass"


class LimitError(ValueError):
    """A written limit that is not a sensible one; the message is one sentence naming what was written and the fix."""


def parse_limit(metric: str, written: object, spell: Callable[[str], str], *, where: str,
                typed: str | None = None) -> float:
    """The limit on ``metric`` that ``written`` means: a number (``0.05``, or the text ``"0.05"`` of a command line)
    or a percentage (``"5%"``, which is ``0.05``). Every place a limit is written reads it here, so one rule holds
    for ``--ocr-max``/``--ocr-min`` and their ini keys, gates, the ``ocr_thresholds`` marker, per-document thresholds
    and the assertion helpers.

    A limit must be a finite number, never negative. On a metric whose unit is a fraction (the registry's
    ``unit == "fraction"``) a plain number above 1 is a percentage typed where a fraction belongs: ``cer:5`` would
    let a CER of 456 % pass, ``field_f1:90`` would fail every document. Both are refused with the fraction to write;
    a lower-is-better rate can truly exceed 1 (insertions), so ``cer:500%`` says so explicitly. A higher-is-better
    fraction is at most 100 % (``field_f1:150%`` is refused). Metrics of unit ``ratio`` or ``count`` (``token_ratio``)
    take any non-negative number.

    ``spell`` writes a limit the way the caller's user writes one (``lambda v: f"cer:{v}"``); ``where`` prefixes
    every problem (``"--ocr-max 'cer:x'"``) and ``typed`` (default ``where``) is the subject of the percent-typo
    sentence: what the user typed, as they typed it. A problem raises :class:`LimitError` with one sentence.

    Args:
        metric: the registry name the limit is on.
        written: the limit as given: a number, its text, or a percentage text.
        spell: writes a limit as the caller's user writes one (for the suggested fix).
        where: prefix of every problem sentence.
        typed: what the user typed, for the percent-typo sentence (default ``where``).

    Returns:
        The limit as a number (a fraction for fraction metrics).

    >>> parse_limit("cer", "5%", str, where="x"), parse_limit("field_f1", 0.9, str, where="x")
    (0.05, 0.9)
    >>> parse_limit("cer", "500%", str, where="x"), parse_limit("token_ratio", "3", str, where="x")
    (5.0, 3.0)
    >>> parse_limit("cer", "5", lambda v: f"cer:{v}", where="--ocr-max 'cer:5'", typed="--ocr-max=cer:5")
    Traceback (most recent call last):
    ...
    pytest_ocrmetrics.metrics.thresholds.LimitError: --ocr-max=cer:5 reads as 500 %; write cer:0.05 for 5 % (or cer:500% if you mean it)
    >>> parse_limit("field_f1", 90, lambda v: f"field_f1:{v}", where="--ocr-min 'field_f1:90'")
    ... # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    pytest_ocrmetrics.metrics.thresholds.LimitError: --ocr-min 'field_f1:90': field_f1 is a fraction between 0 and 1;
    write field_f1:0.9 for 90 %
    """
    spec = METRICS.get(metric)
    if spec is None:
        raise LimitError(f"{where}: {unknown_metric_message(metric)}")
    percent = False
    if isinstance(written, str):
        text = written.strip()
        percent = text.endswith("%")
        try:
            number = float(text[:-1].strip() if percent else text)
        except ValueError:
            raise LimitError(f"{where}: the limit on {metric} must be a number such as 0.05 or a percentage such as "
                             f"5%, got {written!r}") from None
    elif isinstance(written, (int, float)) and not isinstance(written, bool):
        number = float(written)
    else:
        raise LimitError(f"{where}: the limit on {metric} must be a finite number, got {written!r}")
    if not math.isfinite(number):
        raise LimitError(f"{where}: the limit on {metric} must be a finite number, got {written!r}")
    value = number / 100 if percent else number
    shown = f"{number:g}%" if percent else f"{number:g}"
    if value < 0:
        effect = "fails every document" if spec.lower_is_better else "passes every document"
        raise LimitError(f"{where}: {metric} is never negative, so a limit of {shown} {effect}")
    if spec.unit == "fraction" and value > 1:
        if percent and not spec.lower_is_better:
            raise LimitError(f"{where}: {metric} is at most 100 %, so a limit of {shown} fails every document")
        if not percent:
            fraction = f"{number / 100:g}"
            if spec.lower_is_better:
                raise LimitError(f"{typed or where} reads as {number * 100:g} %; write {spell(fraction)} for "
                                 f"{number:g} % (or {spell(f'{number * 100:g}%')} if you mean it)")
            raise LimitError(f"{where}: {metric} is a fraction between 0 and 1; write {spell(fraction)} for {number:g} %")
    return value


def format_limit(metric: str, limit: float) -> str:
    """``limit`` written so that :func:`parse_limit` reads it back: a fraction above 1 (a CER limit of 5, given as
    ``cer:500%``) as a percentage, every other limit as a plain number.

    Args:
        metric: the registry name the limit is on.
        limit: the limit as a number.

    Returns:
        The limit's text.

    >>> format_limit("cer", 0.05), format_limit("cer", 5.0), format_limit("token_ratio", 5.0)
    ('0.05', '500%', '5')
    """
    spec = METRICS.get(metric)
    if spec is not None and spec.unit == "fraction" and limit > 1:
        return f"{limit * 100:g}%"
    return f"{limit:g}"


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
        return f"{self.metric} {self.operator} {format_limit(self.metric, self.limit)} (from the {self.source})"


def resolve_threshold(
    metric: str,
    document: Document | None,
    test_limit: float | None = None,
    configured: Mapping[str, float] | None = None,
) -> Threshold | None:
    """The threshold for ``metric``, by precedence; ``None`` when no level sets one.

    The document's own threshold wins, then the test's, then the command line's or ini's; a document with facts
    gets the implicit every-fact-passes threshold on ``fact_pass_rate``.

    Args:
        metric: the registry name.
        document: the document (its ground truth may set thresholds), or ``None``.
        test_limit: the limit the test function gave (marker or helper argument).
        configured: ``--ocr-max``/``--ocr-min`` and their ini keys, by metric.

    Returns:
        The threshold with its source, or ``None``.

    >>> from pytest_ocrmetrics.core.documents import Document
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

    Args:
        document: the document.
        test_limits: the test function's limits, by metric.
        configured: the command line's and ini's limits, by metric.
        facts: include the implicit threshold on ``fact_pass_rate`` for a document with facts.

    Returns:
        The thresholds, one per metric, in registry order.
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
