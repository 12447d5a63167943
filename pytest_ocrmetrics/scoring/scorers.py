"""How each metric of the registry is computed: one scorer per metric family, keyed by the registry's names.

:func:`~pytest_ocrmetrics.scoring.document.score_document` aligns the texts once and then loops over
:data:`SCORERS`; it names no metric itself. A family computes one metric (``bow_f1``) or several from one call
(``crr`` and ``word_f1`` from one word matching; ``field_f1``, ``field_precision`` and ``field_recall`` from one field
comparison), and applies to the documents whose ground truth it needs (``applies``): a reference text, fields, a
schema, downstream tasks, page-level facts, or a dataset format of its own.

Adding a metric: its :class:`~pytest_ocrmetrics.metrics.registry.MetricSpec` row (name, direction, aggregation) and
a :class:`Scorer` here that computes it; ``tests/metrics/test_scorers.py`` checks that every registry name has a
scorer and every scorer's names are in the registry. The order of :data:`SCORERS` is the order of the metrics in a
document's record (and so in the run file and the JUnit properties).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Mapping

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import OcrOutput
from pytest_ocrmetrics.metrics.layout import LAYOUT_METRICS
from pytest_ocrmetrics.scoring.document import (
    XML_FORMAT_KEY,
    ScoringError,
    ScoringOptions,
    fields_from_text,
    task_prediction,
)

__all__ = ["Scorer", "ScoringContext", "SCORERS", "NOT_SCORED_PER_DOCUMENT", "scorers_for", "scored_metrics"]


@dataclass(slots=True)
class ScoringContext:
    """One document being scored: what every scorer reads (the document, the output, the options, the requested
    metrics, the texts as aligned once) and the three mappings the scorers fill.

    ``text`` is the :class:`~pytest_ocrmetrics.metrics.text.TextScores` of the reference and the output (``None``
    when the document has no reference text); ``reference`` and ``hypothesis`` are the normalized texts.
    """

    document: Document
    output: OcrOutput
    engine: str
    options: ScoringOptions
    wanted: frozenset[str]
    text: Any
    reference: str | None
    hypothesis: str
    metrics: dict[str, float]
    counts: dict[str, dict[str, Any]]
    details: dict[str, Any]


@dataclass(frozen=True)
class Scorer:
    """How one metric family is computed.

    Attributes:
        name: the family's name (for messages and tests).
        metrics: the registry names it computes (all of them from one call of ``score``).
        score: fills ``context.metrics`` / ``counts`` / ``details`` for one document.
        applies: whether a document has what the family needs (its ground truth: a reference text, fields, ...).
        on_request: ``True``: runs only when one of ``metrics`` is requested (the default text metrics and the
            ``--ocr-metric`` extras); ``False``: runs on every document it applies to (fields, schema, facts are
            always scored where the ground truth has them).
    """

    name: str
    metrics: tuple[str, ...]
    score: Callable[[ScoringContext], None]
    applies: Callable[[Document], bool]
    on_request: bool = True


def _has_text(document: Document) -> bool:
    return document.reference_text is not None


# ----------------------------------------------------------------------------------------------- text families

def _text(context: ScoringContext) -> None:
    """The metrics of the one character and word alignment (:func:`~pytest_ocrmetrics.metrics.text.score_text`)."""
    context.text.record_into(context.metrics, context.counts, context.wanted)  # a new counts dict each


def _bag_of_words(context: ScoringContext) -> None:
    from pytest_ocrmetrics.metrics.layout import bag_of_words

    context.metrics["bow_f1"] = float(bag_of_words(context.reference, context.hypothesis).f1)  # type: ignore[arg-type]


def _word_match(context: ScoringContext) -> None:
    from pytest_ocrmetrics.metrics.word_match import word_match

    options = context.options
    result = word_match(context.reference, context.hypothesis, max_distance=options.word_distance,  # type: ignore[arg-type]
                        case_sensitive=options.word_case_sensitive, ignore_punctuation=options.word_ignore_punctuation)
    if "crr" in context.wanted:
        context.metrics["crr"] = float(result.crr)
    if "word_f1" in context.wanted:
        context.metrics["word_f1"] = float(result.f1)


def _layout(context: ScoringContext) -> None:
    """Set, order and n-gram metrics: the words are split once for all the requested ones."""
    from pytest_ocrmetrics.metrics.layout import layout_scores

    for name, (value, counts) in layout_scores(context.reference, context.hypothesis,  # type: ignore[arg-type]
                                               context.wanted).items():
        context.metrics[name] = value
        context.counts[name] = counts


def _character_accuracy(context: ScoringContext) -> None:
    """From the CER counts already computed."""
    from pytest_ocrmetrics.metrics.layout import CharacterAccuracy

    accuracy = CharacterAccuracy.from_error_rate(context.text.cer)
    context.metrics["character_accuracy"] = float(accuracy.value)
    context.counts["character_accuracy"] = accuracy.counts()


def _token_f1(context: ScoringContext) -> None:
    context.metrics["token_f1"] = float(context.text.token_accuracy.f1)


def _token_ratio(context: ScoringContext) -> None:
    from pytest_ocrmetrics.metrics.tokens import token_efficiency

    efficiency = token_efficiency(context.hypothesis, reference=context.reference)
    context.metrics["token_ratio"] = float(efficiency.token_ratio or 0.0)  # a reference was given, so it is set
    context.counts["token_ratio"] = dict(efficiency.counts())


# ----------------------------------------------------------------------------------- ground-truth families

def _fields(context: ScoringContext) -> None:
    """Field F1, precision and recall from one comparison; with ``task_success`` requested and no tasks of its own,
    the specification's downstream extraction task on the same extracted fields."""
    from pytest_ocrmetrics.metrics.fields import field_f1

    document, output, options = context.document, context.output, context.options
    metrics, counts, details = context.metrics, context.counts, context.details
    reference: Mapping[str, Any] = document.fields or {}  # set: the family applies to documents with fields
    extracted = output.fields if output.fields is not None else fields_from_text(
        reference, output.text, ignore_case=options.field_compare != "exact",  # as field_f1 compares
        join_lines=options.field_compare != "exact")
    result = field_f1(reference, extracted, compare=options.field_compare)  # type: ignore[arg-type]
    metrics["field_f1"] = float(result.f1)
    metrics["field_precision"] = float(result.precision)
    metrics["field_recall"] = float(result.recall)
    field_counts = dict(result.counts())
    counts["field_f1"] = counts["field_precision"] = counts["field_recall"] = field_counts
    if "task_success" in context.wanted and not document.tasks:
        from pytest_ocrmetrics.metrics.downstream import downstream_task

        task = downstream_task("extraction", extracted, reference)
        metrics["task_success"] = float(task.success)
        counts["task_success"] = task.counts()
        details["task"] = {"quality": task.quality, "error_type": task.error_type}
    details["fields"] = {
        "source": "engine" if output.fields is not None else "located in text",
        "missing": list(result.missing),
        "incorrect": list(result.incorrect),
        "extra": list(result.extra),
        "mismatches": [{"field": path, "expected": expected, "found": found}
                       for path, expected, found in result.mismatches],
    }


def _score_task(task: Mapping[str, Any], output: OcrOutput, options: ScoringOptions) -> tuple[Any, str]:
    """One downstream task of a document scored on ``output``: (its DownstreamResult, the prediction's source)."""
    from pytest_ocrmetrics.metrics.downstream import downstream_task

    predicted, source = task_prediction(task, output, field_compare=options.field_compare)
    return downstream_task(str(task.get("type")), predicted, task.get("reference")), source


def _tasks(context: ScoringContext) -> None:
    """The document's own downstream tasks (they replace the extraction task on its fields)."""
    results = [_score_task(task, context.output, context.options) for task in context.document.tasks]
    successes = sum(result.success for result, _ in results)
    context.metrics["task_success"] = successes / len(results)
    context.counts["task_success"] = {"successes": successes, "tasks": len(results)}
    context.details["tasks"] = [{"type": result.task, "task_success": result.success,
                                 "quality_score": result.quality, "error_type": result.error_type,
                                 "source": source} for result, source in results]


def _schema(context: ScoringContext) -> None:
    """Validity, parsing and completeness of a structured output from one check against the document's schema."""
    from pytest_ocrmetrics.metrics.structured import json_validity, xml_validity

    document, output = context.document, context.output
    schema: Mapping[str, Any] = document.schema  # type: ignore[assignment]
    raw = output.raw if output.raw is not None else output.text
    if schema.get(XML_FORMAT_KEY) == "xml":  # an XML output: well-formed, with the required elements
        validity: Any = xml_validity(raw, required=list(schema.get("required", ())))
    else:
        from pytest_ocrmetrics.metrics.structured import SchemaCheckError

        try:
            validity = json_validity(raw, schema)
        except SchemaCheckError as exc:
            where = f" [ground truth: {document.source}]" if document.source else ""
            raise ScoringError(f"document {document.id!r} ({context.engine}): {exc}{where}") from None
    context.metrics["json_valid"] = float(validity.value)
    context.metrics["parse_success"] = float(validity.parsed)
    context.metrics["completeness"] = float(validity.completeness)
    context.counts["json_valid"] = context.counts["parse_success"] = dict(validity.counts())
    context.details["json"] = validity.to_dict()


def _facts(context: ScoringContext) -> None:
    """Page-level facts, on every repeat of the output (replay repeat files)."""
    from pytest_ocrmetrics.metrics.facts import check_repeats

    output = context.output
    repeats = output.metadata.get("repeats")
    texts = [str(t) for t in repeats] if isinstance(repeats, (list, tuple)) and repeats else [output.text]
    results = [check_repeats(fact, texts) for fact in context.document.facts]
    checked = [result.passed for result in results if result.passed is not None]  # None: could not be checked
    if checked:
        context.metrics["fact_pass_rate"] = sum(checked) / len(checked)
        context.counts["fact_pass_rate"] = {"passed": sum(checked), "total": len(checked)}
    context.details["facts"] = [result.to_dict() for result in results]


def _omnidoc(context: ScoringContext) -> None:
    """OmniDocBench's page scores of the output's Markdown; in ``details["omnidoc"]`` the matched blocks (for the
    reports) and the metrics the page has no element for (``absent``: no value, so neither a failure nor an unchecked
    threshold; the mean is over the pages that have the element)."""
    from dataclasses import asdict

    from pytest_ocrmetrics.metrics.omnidoc import score_page

    scores = score_page(context.document.omnidoc_page or {}, context.output.text)
    values = scores.as_dict()
    context.metrics.update({name: float(value) for name, value in values.items() if value is not None})
    context.details["omnidoc"] = {"absent": [name for name, value in values.items() if value is None],
                                  "matches": [asdict(match) for match in scores.matches]}


#: every metric family, in the order a document's metrics are written
SCORERS: tuple[Scorer, ...] = (
    Scorer("text", ("cer", "wer", "ser", "ned", "edit_similarity", "exact_match", "token_accuracy"), _text,
           _has_text),
    Scorer("bag of words", ("bow_f1",), _bag_of_words, _has_text),
    Scorer("word match", ("crr", "word_f1"), _word_match, _has_text),
    Scorer("layout", tuple(sorted(LAYOUT_METRICS)), _layout, _has_text),
    Scorer("character accuracy", ("character_accuracy",), _character_accuracy, _has_text),
    Scorer("token F1", ("token_f1",), _token_f1, _has_text),
    Scorer("token ratio", ("token_ratio",), _token_ratio, _has_text),
    Scorer("fields", ("field_f1", "field_precision", "field_recall", "task_success"), _fields,
           lambda document: bool(document.fields), on_request=False),
    Scorer("tasks", ("task_success",), _tasks, lambda document: bool(document.tasks)),
    Scorer("schema", ("json_valid", "parse_success", "completeness"), _schema,
           lambda document: document.schema is not None, on_request=False),
    Scorer("facts", ("fact_pass_rate",), _facts, lambda document: bool(document.facts), on_request=False),
    Scorer("OmniDocBench", ("text_block_edit", "reading_order_edit", "table_edit", "table_teds", "table_teds_s",
                            "formula_edit"), _omnidoc, lambda document: document.omnidoc_page is not None,
           on_request=False),
)

#: registry metrics no document scorer computes, and why (a test checks that the registry holds no other)
NOT_SCORED_PER_DOCUMENT: Mapping[str, str] = {
    "anls": "it needs question answers, which documents do not carry; computed by pytest_ocrmetrics.metrics.fields.anls",
}


@lru_cache(maxsize=64)
def scorers_for(wanted: frozenset[str]) -> tuple[Scorer, ...]:
    """The scorers that run when ``wanted`` metrics are requested (one tuple per run, not one per document): those
    computing one of them, and those that run on every document they apply to.

    >>> [scorer.name for scorer in scorers_for(frozenset({"cer", "crr"}))]
    ['text', 'word match', 'fields', 'schema', 'facts', 'OmniDocBench']
    """
    return tuple(scorer for scorer in SCORERS if not scorer.on_request or not wanted.isdisjoint(scorer.metrics))


def scored_metrics() -> set[str]:
    """Every metric name some scorer computes.

    >>> {"cer", "field_f1", "fact_pass_rate"} <= scored_metrics()
    True
    """
    return {name for scorer in SCORERS for name in scorer.metrics}
