"""Downstream task success: does the OCR output still let the next step (extraction, QA, classification) succeed?

CER says how many characters are wrong; this says whether it matters. Each task has one quality measure in
[0, 1], and success means ``quality >= threshold``. The specification's definitions (``scoring="exact"``, the
default), on the specification's inputs (dicts):

- ``extraction``: quality = reference fields whose ``str(value).strip().lower()`` equals the result's / reference
  fields; success at quality ≥ 0.8, else ``error_type`` ``"extraction_incomplete"``;
- ``qa``: quality 1.0 when ``result["answer"]`` equals ``ground_truth["answer"]`` after strip + lower, else 0.0;
  success at ≥ 0.5, else ``"answer_incorrect"``;
- ``classification``: quality 1.0 when ``result["class"] == ground_truth["class"]``, else 0.0; success when equal,
  else ``"classification_wrong"``.

An unknown task is no exception: success False, quality 0.0, ``error_type`` ``"unknown_task_type"``.
``scoring="similarity"`` keeps the project's graded variants: extraction = field F1 with ``compare="normalized"``,
qa = DocVQA ANLS, classification = labels equal after strip + casefold.

The specification's own example, 3 of 4 fields, is quality 0.75 and a failure (its comment says success; its code
says 0.75 < 0.8):

>>> r = downstream_task("extraction", {"invoice_number": "INV-2024-001", "date": "2024-03-15", "total": "$150.00"},
...                     {"invoice_number": "INV-2024-001", "date": "2024-03-15", "total": "$150.00",
...                      "vendor": "Acme Corp"})
>>> r.quality_score, r.task_success, r.error_type
(0.75, False, 'extraction_incomplete')
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from pytest_ocrmetrics.metrics.fields import _check_threshold, anls, field_f1
from pytest_ocrmetrics.metrics.structured import parse_json_output
from pytest_ocrmetrics.metrics.units import check_text

__all__ = ["TASKS", "SCORINGS", "DEFAULT_THRESHOLDS", "ERROR_TYPES", "Task", "DownstreamResult", "downstream_task",
           "success_rate"]

Task = Literal["extraction", "qa", "classification"]
TASKS: tuple[str, ...] = ("extraction", "qa", "classification")
#: ``scoring="exact"``: the specification's string equality; ``"similarity"``: field F1 / ANLS / casefolded labels
SCORINGS: tuple[str, ...] = ("exact", "similarity")
#: success threshold of each task when none is given (the specification's)
DEFAULT_THRESHOLDS: dict[str, float] = {"extraction": 0.8, "qa": 0.5, "classification": 1.0}
#: ``error_type`` of a failed task
ERROR_TYPES: dict[str, str] = {"extraction": "extraction_incomplete", "qa": "answer_incorrect",
                               "classification": "classification_wrong"}
UNKNOWN_TASK_TYPE = "unknown_task_type"


@dataclass(frozen=True)
class DownstreamResult:
    """One downstream task outcome: ``quality`` in [0, 1], ``success`` (``quality >= threshold`` for a known task)
    and ``error_type`` (None on success). ``task_success`` and ``quality_score`` are the specification's names."""

    task: str
    quality: float
    threshold: float
    success: bool
    error_type: str | None
    scoring: str = "exact"
    details: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def task_success(self) -> bool:
        return self.success

    @property
    def quality_score(self) -> float:
        return self.quality

    @property
    def value(self) -> float:
        return self.quality

    def counts(self) -> dict[str, int]:
        """``successes / tasks`` over a corpus is the task success rate."""
        return {"successes": int(self.success), "tasks": 1}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict with the specification's keys (``task_success``, ``quality_score``, ``error_type``)."""
        return {"task_success": self.success, "quality_score": self.quality, "error_type": self.error_type,
                "task": self.task, "success": self.success, "quality": self.quality, "threshold": self.threshold,
                "scoring": self.scoring, "counts": self.counts(), "details": self.details}


def _as_mapping(result: Any, what: str) -> tuple[Mapping[str, Any] | None, str | None]:
    """The extracted fields: a mapping, None (nothing extracted) or a model's JSON text; (None, reason) if unparsable."""
    if isinstance(result, str):
        parsed = parse_json_output(result)
        if not parsed.ok or not isinstance(parsed.data, Mapping):
            return None, parsed.error if not parsed.ok else f"the JSON is a {type(parsed.data).__name__}, not an object"
        return parsed.data, None
    if result is None:
        return {}, None
    if not isinstance(result, Mapping):
        raise TypeError(f"{what} must be a mapping, a JSON string or None, not {type(result).__name__}")
    return result, None


def _plain(value: Any) -> str:
    return str(value).strip().lower()


def _extraction(result: Any, ground_truth: Any, scoring: str) -> tuple[float, dict[str, Any]]:
    if not isinstance(ground_truth, Mapping):
        raise TypeError(f"extraction ground_truth must be a mapping of field names to values, not {type(ground_truth).__name__}")
    fields, parse_error = _as_mapping(result, "extraction result")
    if scoring == "similarity":
        scores = field_f1(ground_truth, fields, compare="normalized")
        details = scores.to_dict() if parse_error is None else {"parse_error": parse_error, **scores.to_dict()}
        return (scores.f1 if parse_error is None else 0.0), details
    fields = fields or {}
    matched = [k for k in ground_truth if k in fields and _plain(fields[k]) == _plain(ground_truth[k])]
    details = {"matched": matched, "missing": [k for k in ground_truth if k not in fields],
               "incorrect": [k for k in ground_truth if k in fields and k not in matched]}
    if parse_error is not None:
        details["parse_error"] = parse_error
    return (len(matched) / len(ground_truth) if ground_truth else 0.0), details


def _answer(value: Any) -> Any:
    if isinstance(value, Mapping):
        return value.get("answer", "")
    return value


def _qa(result: Any, ground_truth: Any, scoring: str) -> tuple[float, dict[str, Any]]:
    answer = _answer(result)
    expected = _answer(ground_truth)
    if isinstance(expected, Mapping) or not isinstance(expected, (str, Sequence)):
        raise TypeError("qa ground_truth must be {'answer': ...}, an answer (str) or a list of accepted answers, "
                        f"not {type(expected).__name__}")
    if scoring == "similarity":
        scores = anls(expected, check_text(answer, "qa result"))
        return scores.score, scores.to_dict()
    accepted = [expected] if isinstance(expected, str) else list(expected)
    match = any(_plain(answer) == _plain(a) for a in accepted)
    return (1.0 if match else 0.0), {"answer": answer, "expected": expected}


def _label(value: Any) -> Any:
    return value.get("class") if isinstance(value, Mapping) else value


def _classification(result: Any, ground_truth: Any, scoring: str) -> tuple[float, dict[str, Any]]:
    label, expected = _label(result), _label(ground_truth)
    if scoring == "similarity":
        label = check_text(label, "classification result")
        expected = check_text(expected, "classification ground_truth")
        match = label.strip().casefold() == expected.strip().casefold()
    else:
        match = label == expected
    return (1.0 if match else 0.0), {"label": label, "expected": expected}


_HANDLERS = {"extraction": _extraction, "qa": _qa, "classification": _classification}


def _unknown(name: str, valid: Sequence[str], what: str) -> str:
    close = difflib.get_close_matches(str(name), valid, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown {what} {name!r}{hint}; valid: {', '.join(valid)}"


def downstream_task(task: str, result: Any, ground_truth: Any, *, scoring: str = "exact",
                    threshold: float | None = None) -> DownstreamResult:
    """Score one downstream task and decide success (``quality >= threshold``).

    ``task`` is ``"extraction"``, ``"qa"`` or ``"classification"``; any other name gives success False, quality 0.0
    and ``error_type`` ``"unknown_task_type"`` (``details["error"]`` names the valid tasks), as the specification
    says. ``threshold`` defaults to the task's (:data:`DEFAULT_THRESHOLDS`: 0.8, 0.5, 1.0).

    - ``"extraction"``: ``result`` is the extracted fields (a dict, a model's JSON text, fenced or not, or None) and
      ``ground_truth`` the reference fields. ``scoring="exact"``: quality = reference fields whose
      ``str(v).strip().lower()`` equals the result's / reference fields (0.0 with no reference field, or when the
      text holds no JSON object); ``"similarity"``: field F1 with ``compare="normalized"``.
    - ``"qa"``: ``{"answer": ...}`` on both sides (a plain string, or on the reference side a list of accepted
      answers, works too). ``"exact"``: 1.0 when equal after strip + lower; ``"similarity"``: ANLS.
    - ``"classification"``: ``{"class": ...}`` on both sides (or plain labels). ``"exact"``: 1.0 when equal;
      ``"similarity"``: equal after strip + casefold.

    Args:
        task: ``"extraction"``, ``"qa"`` or ``"classification"``.
        result: what the system produced.
        ground_truth: what it should have produced.
        scoring: how quality is measured (``"exact"`` by default).
        threshold: the quality a success needs (default: the task's).

    Returns:
        A :class:`DownstreamResult` (quality and success).

    >>> downstream_task("qa", {"answer": " Denver Broncos"}, {"answer": "denver broncos"}).task_success
    True
    >>> downstream_task("classification", {"class": "invoice"}, {"class": "receipt"}).error_type
    'classification_wrong'
    >>> downstream_task("summary", "x", "x").error_type
    'unknown_task_type'
    >>> downstream_task("qa", "12/15/89", "12/15/88", scoring="similarity").quality
    0.875
    """
    if scoring not in SCORINGS:
        raise ValueError(_unknown(scoring, SCORINGS, "downstream scoring"))
    if threshold is not None:
        threshold = _check_threshold(threshold)
    handler = _HANDLERS.get(task) if isinstance(task, str) else None
    if handler is None:
        return DownstreamResult(str(task), 0.0, 1.0 if threshold is None else threshold, False, UNKNOWN_TASK_TYPE,
                                scoring, {"error": _unknown(task, TASKS, "downstream task")})
    if threshold is None:
        threshold = DEFAULT_THRESHOLDS[task]
    quality, details = handler(result, ground_truth, scoring)
    success = quality >= threshold
    return DownstreamResult(task, float(quality), threshold, success, None if success else ERROR_TYPES[task],
                            scoring, details)


def success_rate(results: Iterable[Union[DownstreamResult, Mapping[str, Any]]]) -> float:
    """The share of successful tasks in a batch (0.0 for an empty batch): the specification's ``success_rate``.

    Takes results, or their ``to_dict()`` (anything with ``task_success``).

    Args:
        results: task results, or their ``to_dict()`` mappings.

    Returns:
        The share of successes, 0.0 for none.

    >>> batch = [downstream_task("qa", {"answer": a}, {"answer": "42"}) for a in ("42", "41", " 42 ")]
    >>> success_rate(batch)
    0.6666666666666666
    """
    outcomes = []
    for i, r in enumerate(results):
        if isinstance(r, DownstreamResult):
            outcomes.append(r.success)
        elif isinstance(r, Mapping) and "task_success" in r:
            outcomes.append(bool(r["task_success"]))
        else:
            raise TypeError(f"results[{i}] must be a DownstreamResult or a dict with 'task_success', not {type(r).__name__}")
    return sum(outcomes) / len(outcomes) if outcomes else 0.0
