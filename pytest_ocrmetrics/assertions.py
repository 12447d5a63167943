"""Assertion helpers: ``assert_cer_below(ocr_score, 0.05)`` and friends.

Each helper takes a :class:`~pytest_ocrmetrics.scoring.DocumentScore` (the ``ocr_score`` fixture), or an
:class:`~pytest_ocrmetrics.engines.base.OcrOutput` (the ``ocr_output`` fixture, scored against the current test's
document), or a plain string together with ``reference=``. A failure names the metric, value, threshold and where the
threshold came from, the document and the engine, and shows an aligned excerpt of the worst-matching region.

A threshold in the document's ground truth (``"thresholds": {"cer": 0.2}``) wins over the helper's argument, so a
deliberately degraded document can carry its own limit.

Besides the named helpers, every registry metric has ``assert_<metric>_below`` (lower-is-better metrics) or
``assert_<metric>_above`` (higher-is-better metrics), e.g. ``assert_bow_f1_above(score, 0.9)``.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from pytest_ocrmetrics.diff import worst_region
from pytest_ocrmetrics.documents import Document
from pytest_ocrmetrics.engines.base import OcrOutput
from pytest_ocrmetrics.metrics.registry import METRICS, get_metric
from pytest_ocrmetrics.scoring import (DocumentScore, ScoringError, ScoringOptions, not_applicable, score_document,
                                       with_metrics)
from pytest_ocrmetrics.thresholds import Threshold, format_limit, parse_limit, resolve_threshold

__all__ = [
    "assert_metric",
    "assert_cer_below",
    "assert_wer_below",
    "assert_ned_below",
    "assert_field_f1",
    "assert_exact_match",
    "assert_json_valid",
    "OcrTestContext",
    "current_context",
]


# what a document must have for a metric to be computed, by the registry's ``requires``
METRIC_NEEDS = {"fields": "ground-truth fields", "schema": "a JSON schema", "lines": "a reference text",
                "text": "a reference text", "answers": "accepted answers", "facts": "page-level facts",
                "tasks": "ground-truth fields or tasks (and --ocr-metric=task_success)",
                "omnidoc": "an OmniDocBench page (a dataset in OmniDocBench's ground-truth format)"}


@dataclass
class OcrTestContext:
    """What the plugin knows about the running OCR test; lets helpers score an ``OcrOutput`` and record checks."""

    document: Document
    engine: str
    options: ScoringOptions
    score: DocumentScore | None = None
    checks: list[dict[str, Any]] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)  # metrics of thresholds this document could not be judged on
    score_error: tuple[OcrOutput, ScoringError] | None = None  # the output that could not be scored, and why

    def score_output(self, output: OcrOutput) -> DocumentScore:
        """The score of ``output``, computed once; :class:`ScoringError` (computed once too: a schema pattern may
        take its full time limit) when the document cannot be scored."""
        if self.score is None or self.score.output is not output:
            if self.score_error is not None and self.score_error[0] is output:
                raise self.score_error[1]
            try:
                self.score = score_document(self.document, output, engine=self.engine, options=self.options)
            except ScoringError as exc:
                self.score_error = (output, exc)
                raise
        return self.score


current_context: ContextVar[OcrTestContext | None] = ContextVar("ocrmetrics_test_context", default=None)


def _as_score(result: Any, reference: str | None, document: Document | None,
              metric: str | None = None) -> DocumentScore:
    """``result`` as a score: itself, the running test's score of an ``OcrOutput``, or a score against ``reference`` /
    ``document``. Scored here (not the running test's score), ``metric`` is computed even when the run did not ask
    for it: a reference given to a helper is a request for that helper's metric."""
    if isinstance(result, DocumentScore):
        return result
    context = current_context.get()
    if isinstance(result, str):
        result = OcrOutput(text=result)
    if not isinstance(result, OcrOutput):
        raise TypeError(
            f"expected an ocr_score (DocumentScore), an ocr_output (OcrOutput) or a str, not {type(result).__name__}"
        )
    if document is None and reference is not None:
        document = Document(id="(inline)", dataset="(inline)", image_path=None, reference_text=reference)
    if document is not None:
        options = context.options if context else ScoringOptions()
        if metric is not None:
            options = with_metrics(options, [metric])
        return score_document(document, result, engine=result.engine or "(inline)", options=options)
    if context is None:
        raise TypeError("an OcrOutput outside an OCR test needs reference= (the expected text) or document=")
    return context.score_output(result)


def _record(score: DocumentScore, threshold: Threshold, value: float) -> dict[str, Any]:
    """Check ``value`` against ``threshold`` and record the check on the running test (if it is this document's)."""
    check = threshold.check(value)
    context = current_context.get()
    if context is not None and context.document is score.document:
        context.checks.append(check)
    return check


_MAX_FIELD_LINES = 10
_MAX_VALUE_LENGTH = 60


def _quoted(value: str) -> str:
    """A field value for a message: repr() escapes control, bidi and surrogate characters; long values are cut."""
    if len(value) > _MAX_VALUE_LENGTH:
        value = value[:_MAX_VALUE_LENGTH - 1] + "…"
    return repr(value)


def _field_lines(fields: Mapping[str, Any]) -> list[str]:
    """``  total: expected '9.00', found '9.0O'`` per incorrect or missing field (at most 10), then the extra ones."""
    mismatches = fields.get("mismatches") or []
    where = "located in the OCR text" if fields.get("source") == "located in text" else "from the engine"
    lines = [f"fields {where}:"] if mismatches else []
    for item in mismatches[:_MAX_FIELD_LINES]:
        found = "found nothing" if item["found"] is None else f"found {_quoted(str(item['found']))}"
        lines.append(f"  {item['field']}: expected {_quoted(str(item['expected']))}, {found}")
    if len(mismatches) > _MAX_FIELD_LINES:
        lines.append(f"  … and {len(mismatches) - _MAX_FIELD_LINES} more incorrect or missing fields")
    extra = [str(path) for path in fields.get("extra") or []]
    if extra:
        shown = ", ".join(_quoted(path)[1:-1] for path in extra[:_MAX_FIELD_LINES])
        more = f" and {len(extra) - _MAX_FIELD_LINES} more" if len(extra) > _MAX_FIELD_LINES else ""
        lines.append(f"  extracted but not in the reference: {shown}{more}")
    return lines


def fact_failure_line(fact: Mapping[str, Any], score: DocumentScore | None = None) -> str:
    """``fact 'earnings_table00' (table) failed: Found cells matching ...`` (a fact of ``details["facts"]``); with
    ``score``, the document and engine follow, and a flaky fact says how its repeats voted."""
    line = f"fact {fact['id']!r} ({fact['type']}) failed: {fact.get('explanation') or 'no explanation'}"
    if score is not None:
        doc = score.document
        line += f"; document {doc.id!r} (dataset {doc.dataset}), engine {score.engine!r}"
    return line


def failure_message(score: DocumentScore, threshold: Threshold, value: float) -> str:
    """``cer = 0.0821, must be <= 0.05 (from the test); document 'a.png' (dataset d), engine 'e'`` + an excerpt."""
    doc = score.document
    head = (f"{threshold.metric} = {value:.4g}, must be {threshold.operator} "
            f"{format_limit(threshold.metric, threshold.limit)} "
            f"(from the {threshold.source}); document {doc.id!r} (dataset {doc.dataset}), engine {score.engine!r}")
    spec = get_metric(threshold.metric)
    if spec.requires in ("text", "lines") and score.reference is not None:
        return f"{head}\n{worst_region(score.reference, score.hypothesis)}"
    fields = score.details.get("fields")
    if spec.requires == "fields" and fields:
        return head + "".join(f"\n{line}" for line in _field_lines(fields))
    facts = score.details.get("facts")
    if spec.requires == "facts" and facts:
        failing = [fact for fact in facts if fact.get("passed") is False]  # null: not checked, not failed
        more = f"\n  and {len(failing) - 10} more" if len(failing) > 10 else ""
        return head + "".join(f"\n- {fact_failure_line(fact)}" for fact in failing[:10]) + more
    tasks = score.details.get("tasks") or ([score.details["task"]] if "task" in score.details else [])
    if spec.requires == "tasks" and tasks:
        return head + "".join(f"\n- task {n} ({task.get('type', 'extraction')}): "
                              f"{'succeeded' if task.get('task_success') else task.get('error_type') or 'failed'}"
                              f" (quality {float(task.get('quality_score', task.get('quality', 0.0))):.3g})"
                              for n, task in enumerate(tasks[:10], start=1))
    json_details = score.details.get("json")
    if spec.requires == "schema" and json_details:
        errors = json_details.get("errors") or []
        return head + ("\n" + "\n".join(f"- {e}" for e in errors[:10]) if errors else "")
    return head


def assert_metric(
    result: Any,
    metric: str,
    threshold: float | str | None = None,
    *,
    reference: str | None = None,
    document: Document | None = None,
) -> float:
    """Assert that ``metric`` of ``result`` meets ``threshold`` in the metric's direction; return the value.

    ``threshold`` is a number or a percentage (``"5%"``), read as every limit is
    (:func:`~pytest_ocrmetrics.thresholds.parse_limit`): a percent typed as a fraction (``5`` for a CER of 5 %)
    raises :class:`~pytest_ocrmetrics.thresholds.LimitError` (a ``ValueError``) instead of passing everything.

    >>> assert_metric("INV0ICE #12345", "cer", 0.1, reference="INVOICE #12345")
    0.07142857142857142
    """
    __tracebackhide__ = True
    spec = get_metric(metric)
    limit = None if threshold is None else parse_limit(
        metric, threshold, lambda v: repr(v) if v.endswith("%") else v, where=f"the limit {threshold!r} on {metric}")
    score = _as_score(result, reference, document, metric)
    resolved = resolve_threshold(metric, score.document, limit)
    if resolved is None:
        raise TypeError(f"assert_metric({metric!r}) needs a threshold (none given and none in the ground truth)")
    if metric not in score.metrics:
        if not_applicable(score, metric):  # an OmniDocBench page without a table: no value to assert on
            raise AssertionError(
                f"{metric} has no value for document {score.document.id!r}: the page has no such element; check "
                f"'{metric}' in the score's metrics first, or use a threshold (--ocr-max/--ocr-min, ocr_thresholds), "
                "which leaves such pages alone")
        needs = METRIC_NEEDS[spec.requires]
        raise AssertionError(
            f"{metric} was not computed for document {score.document.id!r}: it needs {needs}"
            + (" (add it with --ocr-metric)" if spec.requires == "text" else "")
        )
    value = score.metrics[metric]
    if not _record(score, resolved, value)["passed"]:
        raise AssertionError(failure_message(score, resolved, value))
    return value


def assert_cer_below(result: Any, max_cer: float | str | None = None, **kwargs: Any) -> float:
    """Assert the character error rate is at most ``max_cer`` (a fraction, ``0.05``, or a percentage, ``"5%"``)."""
    __tracebackhide__ = True
    return assert_metric(result, "cer", max_cer, **kwargs)


def assert_wer_below(result: Any, max_wer: float | str | None = None, **kwargs: Any) -> float:
    """Assert the word error rate is at most ``max_wer``."""
    __tracebackhide__ = True
    return assert_metric(result, "wer", max_wer, **kwargs)


def assert_ned_below(result: Any, max_ned: float | str | None = None, **kwargs: Any) -> float:
    """Assert the normalized edit distance lev/max(len(ref), len(hyp)) is at most ``max_ned``."""
    __tracebackhide__ = True
    return assert_metric(result, "ned", max_ned, **kwargs)


def assert_field_f1(result: Any, min_f1: float | str | None = None, **kwargs: Any) -> float:
    """Assert the key-field F1 is at least ``min_f1``."""
    __tracebackhide__ = True
    return assert_metric(result, "field_f1", min_f1, **kwargs)


def assert_exact_match(result: Any, **kwargs: Any) -> float:
    """Assert the (normalized) output equals the reference exactly."""
    __tracebackhide__ = True
    return assert_metric(result, "exact_match", 1.0, **kwargs)


def assert_json_valid(result: Any, schema: Mapping[str, Any] | None = None, **kwargs: Any) -> float:
    """Assert the output parses as JSON (also inside a ```json fence) and, when a schema is given or the document
    has one, satisfies it; the message lists every validation error. With ``schema=`` a plain string needs no
    ``reference=`` (the schema is all the check compares with).

    >>> assert_json_valid('{"total": "9.00"}', schema={"required": ["total"]})
    1.0
    """
    __tracebackhide__ = True
    if schema is None:
        return assert_metric(result, "json_valid", 1.0, **kwargs)
    from pytest_ocrmetrics.metrics.structured import json_validity

    reference, document = kwargs.get("reference"), kwargs.get("document")
    if reference is None and document is None and current_context.get() is None:
        reference = ""  # outside an OCR test: the text against the schema, no reference text involved
    score = _as_score(result, reference, document)
    text = score.output.raw if score.output.raw is not None else score.output.text
    validity = json_validity(text, schema)
    threshold = Threshold("json_valid", 1.0, "test")
    _record(score, threshold, float(validity.value))
    if not validity.value:
        errors = [f"{e.path}: {e.message}" for e in validity.errors]
        if not errors and validity.parse_error:
            errors = [validity.parse_error]
        raise AssertionError(
            f"output of document {score.document.id!r}, engine {score.engine!r} is not valid JSON for the schema"
            + "".join(f"\n- {e}" for e in errors[:10])
        )
    return float(validity.value)


def _make_helper(metric: str, suffix: str) -> Callable[..., float]:
    def helper(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
        __tracebackhide__ = True
        return assert_metric(result, metric, limit, **kwargs)

    spec = METRICS[metric]
    helper.__name__ = helper.__qualname__ = f"assert_{metric}_{suffix}"
    helper.__doc__ = f"Assert {spec.description} is {'at most' if suffix == 'below' else 'at least'} ``limit``."
    return helper


for _name, _spec in METRICS.items():
    _helper_name = f"assert_{_name}_{'below' if _spec.lower_is_better else 'above'}"
    if _helper_name not in globals():
        globals()[_helper_name] = _make_helper(_name, "below" if _spec.lower_is_better else "above")
        __all__.append(_helper_name)
