"""Failure messages of OCR checks: the metric, its value and threshold, where the threshold came from, the
document and the engine, then what explains the value: an aligned excerpt of the worst-matching region (text
metrics), the incorrect fields, the failing facts, the tasks or the JSON schema errors.

Shared by the assertion helpers (:mod:`pytest_ocrmetrics.assertions`) and the plugin's threshold checks, so a
failure reads the same whichever made it.
"""

from __future__ import annotations

from typing import Any, Mapping

from pytest_ocrmetrics.metrics.alignment import Alignment
from pytest_ocrmetrics.metrics.registry import get_metric
from pytest_ocrmetrics.metrics.thresholds import Threshold, format_limit
from pytest_ocrmetrics.scoring.diff import worst_region
from pytest_ocrmetrics.scoring.document import DocumentScore

__all__ = ["METRIC_NEEDS", "failure_message", "fact_failure_line", "field_lines"]

#: what a document must have for a metric to be computed, by the registry's ``requires`` (said when it
#: was not computed)
METRIC_NEEDS = {"fields": "ground-truth fields", "schema": "a JSON schema", "lines": "a reference text",
                "text": "a reference text", "answers": "accepted answers", "facts": "page-level facts",
                "tasks": "ground-truth fields or tasks (and --ocr-metric=task_success)",
                "omnidoc": "an OmniDocBench page (a dataset in OmniDocBench's ground-truth format)"}

_MAX_FIELD_LINES = 10
_MAX_VALUE_LENGTH = 60


def _quoted(value: str) -> str:
    """A field value for a message: repr() escapes control, bidi and surrogate characters; long values are cut."""
    if len(value) > _MAX_VALUE_LENGTH:
        value = value[:_MAX_VALUE_LENGTH - 1] + "…"
    return repr(value)


def field_lines(fields: Mapping[str, Any]) -> list[str]:
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


def _grapheme_alignment(score: DocumentScore) -> Alignment | None:
    """The character alignment the score's metrics made, when it is in grapheme clusters of the texts the excerpt
    shows (the default unit); None otherwise (the excerpt then aligns the texts itself)."""
    text_scores = score.text_scores
    if text_scores is None or text_scores.cer.unit != "grapheme":
        return None
    if text_scores.reference != score.reference or text_scores.hypothesis != score.hypothesis:
        return None
    return text_scores.cer.alignment


def failure_message(score: DocumentScore, threshold: Threshold, value: float) -> str:
    """``cer = 0.0821, must be <= 0.05 (from the test); document 'a.png' (dataset d), engine 'e'`` + an excerpt."""
    doc = score.document
    head = (f"{threshold.metric} = {value:.4g}, must be {threshold.operator} "
            f"{format_limit(threshold.metric, threshold.limit)} "
            f"(from the {threshold.source}); document {doc.id!r} (dataset {doc.dataset}), engine {score.engine!r}")
    spec = get_metric(threshold.metric)
    if spec.requires in ("text", "lines") and score.reference is not None:
        return f"{head}\n{worst_region(score.reference, score.hypothesis, alignment=_grapheme_alignment(score))}"
    fields = score.details.get("fields")
    if spec.requires == "fields" and fields:
        return head + "".join(f"\n{line}" for line in field_lines(fields))
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
