"""Assertion helpers: ``assert_cer_below(ocr_score, 0.05)`` and friends.

Each helper takes a :class:`~pytest_ocrmetrics.scoring.document.DocumentScore` (the ``ocr_score`` fixture), or an
:class:`~pytest_ocrmetrics.engines.base.OcrOutput` (the ``ocr_output`` fixture, scored against the current test's
document), or a plain string together with ``reference=``. A failure names the metric, value, threshold and where the
threshold came from, the document and the engine, and shows an aligned excerpt of the worst-matching region.

A threshold in the document's ground truth (``"thresholds": {"cer": 0.2}``) wins over the helper's argument, so a
deliberately degraded document can carry its own limit.

Besides the named helpers, every registry metric has ``assert_<metric>_below`` (lower-is-better metrics) or
``assert_<metric>_above`` (higher-is-better metrics), e.g. ``assert_bow_f1_above(score, 0.9)``.
"""

from __future__ import annotations

from typing import Any, Mapping

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import OcrOutput
from pytest_ocrmetrics.metrics.registry import get_metric
from pytest_ocrmetrics.metrics.thresholds import Threshold, parse_limit, resolve_threshold
from pytest_ocrmetrics.scoring.context import OcrTestContext, current_context
from pytest_ocrmetrics.scoring.document import (
    DocumentScore,
    ScoringOptions,
    not_applicable,
    score_document,
    with_metrics,
)
from pytest_ocrmetrics.scoring.messages import METRIC_NEEDS, failure_message

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
    (:func:`~pytest_ocrmetrics.metrics.thresholds.parse_limit`): a percent typed as a fraction (``5`` for a CER of 5 %)
    raises :class:`~pytest_ocrmetrics.metrics.thresholds.LimitError` (a ``ValueError``) instead of passing everything.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` (scored against the current test's document) or a string (with
            ``reference=``).
        metric: a registry metric name.
        threshold: the limit (a fraction or ``"5%"``); ``None``: the document's own.
        reference: the ground truth when ``result`` is a string.
        document: the document when ``result`` is a string.

    Returns:
        The metric's value, so a test can use it further.

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
    """Assert the character error rate is at most ``max_cer`` (a fraction, ``0.05``, or a percentage, ``"5%"``).

    Args:
        result: an ``ocr_score``, an ``ocr_output`` (scored against the current test's document) or a string (with
            ``reference=``).
        max_cer: the limit; ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The metric's value, so a test can use it further.
    """
    __tracebackhide__ = True
    return assert_metric(result, "cer", max_cer, **kwargs)


def assert_wer_below(result: Any, max_wer: float | str | None = None, **kwargs: Any) -> float:
    """Assert the word error rate is at most ``max_wer``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` (scored against the current test's document) or a string (with
            ``reference=``).
        max_wer: the limit; ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The metric's value, so a test can use it further.
    """
    __tracebackhide__ = True
    return assert_metric(result, "wer", max_wer, **kwargs)


def assert_ned_below(result: Any, max_ned: float | str | None = None, **kwargs: Any) -> float:
    """Assert the normalized edit distance lev/max(len(ref), len(hyp)) is at most ``max_ned``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` (scored against the current test's document) or a string (with
            ``reference=``).
        max_ned: the limit; ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The metric's value, so a test can use it further.
    """
    __tracebackhide__ = True
    return assert_metric(result, "ned", max_ned, **kwargs)


def assert_field_f1(result: Any, min_f1: float | str | None = None, **kwargs: Any) -> float:
    """Assert the key-field F1 is at least ``min_f1``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` (scored against the current test's document) or a string (with
            ``reference=``).
        min_f1: the limit; ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The metric's value, so a test can use it further.
    """
    __tracebackhide__ = True
    return assert_metric(result, "field_f1", min_f1, **kwargs)


def assert_exact_match(result: Any, **kwargs: Any) -> float:
    """Assert the (normalized) output equals the reference exactly.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` (scored against the current test's document) or a string (with
            ``reference=``).
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The metric's value, so a test can use it further.
    """
    __tracebackhide__ = True
    return assert_metric(result, "exact_match", 1.0, **kwargs)


def assert_json_valid(result: Any, schema: Mapping[str, Any] | None = None, **kwargs: Any) -> float:
    """Assert the output parses as JSON (also inside a ```json fence) and, when a schema is given or the document
    has one, satisfies it; the message lists every validation error. With ``schema=`` a plain string needs no
    ``reference=`` (the schema is all the check compares with).

    Args:
        result: an ``ocr_score``, an ``ocr_output`` (scored against the current test's document) or a string (with
            ``reference=``).
        schema: a JSON Schema (default: the document's).
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The metric's value, so a test can use it further.

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


# ---- generated from the metric registry by `python tests/test_assertion_helpers.py`; do not edit by hand ----

def assert_ser_below(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert sentence (line) error rate: lines that differ after strip(), the shorter side padded with empty lines,
    / max(reference lines, output lines) is at most ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``ser``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'ser', limit, **kwargs)


def assert_edit_similarity_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert 1 - NED is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``edit_similarity``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'edit_similarity', limit, **kwargs)


def assert_exact_match_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert 1 if the normalized texts are identical, else 0 is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``exact_match``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'exact_match', limit, **kwargs)


def assert_token_accuracy_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert exact-match rate: positions with equal tokens / max(reference tokens, output tokens) is at least
    ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``token_accuracy``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'token_accuracy', limit, **kwargs)


def assert_token_f1_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert F1 on the sets of unique tokens is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``token_f1``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'token_f1', limit, **kwargs)


def assert_bow_f1_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert bag-of-words F1 on word multisets (a repeated word counts each time) after lowercasing and punctuation
    removal is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``bow_f1``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'bow_f1', limit, **kwargs)


def assert_crr_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert word-match character recognition rate: mean 1 - d/max(len) over matched word pairs is at least
    ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``crr``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'crr', limit, **kwargs)


def assert_word_f1_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert word-match F1 over exact word matches is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``word_f1``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'word_f1', limit, **kwargs)


def assert_set_precision_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert set-based precision: unique words in both / unique output words (lowercased, punctuation removed) is
    at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``set_precision``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'set_precision', limit, **kwargs)


def assert_set_recall_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert set-based recall: unique words in both / unique reference words is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``set_recall``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'set_recall', limit, **kwargs)


def assert_set_f1_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert set-based F1: harmonic mean of set_precision and set_recall is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``set_f1``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'set_f1', limit, **kwargs)


def assert_sequence_accuracy_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert reference words equal to the output word at the same position / reference words is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``sequence_accuracy``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'sequence_accuracy', limit, **kwargs)


def assert_lcs_ratio_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert longest common subsequence of the word lists / reference words is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``lcs_ratio``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'lcs_ratio', limit, **kwargs)


def assert_char_lcs_ratio_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert 2 * LCS / (len(ref) + len(hyp)) over characters is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``char_lcs_ratio``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'char_lcs_ratio', limit, **kwargs)


def assert_bigram_overlap_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert reference word bigrams found in the output / reference bigrams is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``bigram_overlap``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'bigram_overlap', limit, **kwargs)


def assert_trigram_overlap_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert reference word trigrams found in the output / reference trigrams is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``trigram_overlap``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'trigram_overlap', limit, **kwargs)


def assert_character_accuracy_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert max(0, 1 - CER) is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``character_accuracy``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'character_accuracy', limit, **kwargs)


def assert_field_f1_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert F1 over key fields: 2*correct / (extracted + reference) is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``field_f1``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'field_f1', limit, **kwargs)


def assert_field_precision_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert correct fields / extracted fields is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``field_precision``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'field_precision', limit, **kwargs)


def assert_field_recall_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert correct fields / reference fields is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``field_recall``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'field_recall', limit, **kwargs)


def assert_json_valid_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert 1 if the output parses as JSON and satisfies the document's schema is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``json_valid``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'json_valid', limit, **kwargs)


def assert_parse_success_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert 1 if the output parses (JSON, or well-formed XML), schema or not is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``parse_success``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'parse_success', limit, **kwargs)


def assert_completeness_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert schema-required fields present and non-empty / required fields (1.0 when none is required, 0.0 when
    the output does not parse) is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``completeness``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'completeness', limit, **kwargs)


def assert_task_success_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert downstream task success: successes / tasks, over the document's own tasks (extraction, qa,
    classification) or else one extraction task on its fields (success when the share of reference fields whose
    str(v).strip().lower() equals the output's is >= 0.8) is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``task_success``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'task_success', limit, **kwargs)


def assert_anls_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert average normalized Levenshtein similarity (DocVQA), 0 below 0.5 similarity is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``anls``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'anls', limit, **kwargs)


def assert_token_ratio_below(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert LLM tokens of the output / LLM tokens of the reference (cl100k_base) is at most ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``token_ratio``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'token_ratio', limit, **kwargs)


def assert_fact_pass_rate_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert page-level facts (olmOCR-bench types) passed / facts; a fact passes when a strict majority of the
    page's repeats pass it is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``fact_pass_rate``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'fact_pass_rate', limit, **kwargs)


def assert_text_block_edit_below(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert OmniDocBench text-block edit distance: the output's Markdown text blocks matched to the page's
    annotated text blocks (headers, footers, page numbers, captions ignored), the normalized edit distance of the
    matched pairs, summed edits / summed lengths per page is at most ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``text_block_edit``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'text_block_edit', limit, **kwargs)


def assert_reading_order_edit_below(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert OmniDocBench reading-order edit distance: the normalized edit distance between the annotated order of
    the matched text blocks and the order they appear in the output is at most ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``reading_order_edit``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'reading_order_edit', limit, **kwargs)


def assert_table_edit_below(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert OmniDocBench table edit distance: edit distance of each matched table's HTML, summed edits / summed
    lengths over the page's tables is at most ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``table_edit``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'table_edit', limit, **kwargs)


def assert_table_teds_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert OmniDocBench table TEDS: tree-edit-distance similarity of each matched table's HTML tree, structure
    and cell text, averaged over the page's tables is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``table_teds``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'table_teds', limit, **kwargs)


def assert_table_teds_s_above(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert OmniDocBench table TEDS-S: TEDS on structure only (cell text ignored), averaged over the page's tables
    is at least ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``table_teds_s``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'table_teds_s', limit, **kwargs)


def assert_formula_edit_below(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:
    """Assert OmniDocBench display-formula edit distance: normalized edit distance of each matched display formula's
    LaTeX, summed edits / summed lengths per page is at most ``limit``.

    Args:
        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).
        limit: the limit (a fraction or a percentage such as ``"5%"``); ``None``: the document's own.
        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.

    Returns:
        The value of ``formula_edit``.
    """
    __tracebackhide__ = True
    return assert_metric(result, 'formula_edit', limit, **kwargs)


__all__ += [
    "assert_ser_below",
    "assert_edit_similarity_above",
    "assert_exact_match_above",
    "assert_token_accuracy_above",
    "assert_token_f1_above",
    "assert_bow_f1_above",
    "assert_crr_above",
    "assert_word_f1_above",
    "assert_set_precision_above",
    "assert_set_recall_above",
    "assert_set_f1_above",
    "assert_sequence_accuracy_above",
    "assert_lcs_ratio_above",
    "assert_char_lcs_ratio_above",
    "assert_bigram_overlap_above",
    "assert_trigram_overlap_above",
    "assert_character_accuracy_above",
    "assert_field_f1_above",
    "assert_field_precision_above",
    "assert_field_recall_above",
    "assert_json_valid_above",
    "assert_parse_success_above",
    "assert_completeness_above",
    "assert_task_success_above",
    "assert_anls_above",
    "assert_token_ratio_below",
    "assert_fact_pass_rate_above",
    "assert_text_block_edit_below",
    "assert_reading_order_edit_below",
    "assert_table_edit_below",
    "assert_table_teds_above",
    "assert_table_teds_s_above",
    "assert_formula_edit_below",
]
# ---- end of the generated helpers ----
