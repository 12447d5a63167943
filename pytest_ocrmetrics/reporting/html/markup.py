"""Markup shared by every section of the HTML report: escaping, sort keys, metric titles and the classes that
mark a change against the baseline as worse or better."""

from __future__ import annotations

import html
import math
from typing import Any, Mapping

from pytest_ocrmetrics.core.safe_text import show_controls
from pytest_ocrmetrics.gating import Comparison
from pytest_ocrmetrics.metrics.registry import METRICS


def e(value: Any) -> str:
    """Escape anything for HTML text and attribute values; control characters other than line breaks and tabs are
    shown as marks (:func:`~pytest_ocrmetrics.core.safe_text.show_controls`), never written raw."""
    return html.escape(show_controls("" if value is None else str(value), keep="\n\t"), quote=True)


def sort_value(value: float | None) -> str:
    """A number for a ``data-sort`` attribute (empty when absent)."""
    if value is None or (isinstance(value, float) and (math.isnan(value) or math.isinf(value))):
        return ""
    return repr(float(value))


def metric_title(metric: str) -> str:
    """The registry's title of ``metric`` (the name itself for a metric the registry does not know)."""
    return METRICS[metric].title if metric in METRICS else metric


def delta_class(verdict: str | None) -> str:
    """The CSS class of a verdict: ``worse`` for a regression, ``better`` for an improvement, else empty."""
    return {"regression": "worse", "improvement": "better"}.get(verdict or "", "")


ChangeClasses = Mapping[tuple[str, str, str, str], str]


def change_classes(comparison: Comparison | None) -> ChangeClasses:
    """``worse`` / ``better`` per (dataset, engine, document, metric) that moved beyond tolerance, built once."""
    if comparison is None:
        return {}
    classes = {(i.dataset, i.engine, str(i.document), i.metric): "better" for i in comparison.improvements}
    classes.update({(r.dataset, r.engine, str(r.document), r.metric): "worse" for r in comparison.regressions})
    return classes
