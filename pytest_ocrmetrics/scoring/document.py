"""Score one engine output against one document: every applicable metric, with its counts.

Which metrics a document gets depends on its ground truth: text metrics when it has a reference text, field metrics
when it has ``fields``, JSON validity when it has a ``schema``. One character alignment and one word alignment serve
all text metrics (:func:`pytest_ocrmetrics.metrics.text.score_text`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import Any, Iterable, Mapping

from pytest_ocrmetrics.core.documents import Document, memory_text
from pytest_ocrmetrics.engines.base import EngineError, OcrOutput
from pytest_ocrmetrics.metrics.normalize import get_profile

__all__ = ["DocumentScore", "ScoringOptions", "ScoringError", "score_document", "DEFAULT_TEXT_METRICS",
           "fields_from_text", "task_prediction", "MAX_SCORED_CHARACTERS", "OutputTooLong", "check_output_length",
           "output_too_long_reason", "OUTPUT_LIMIT_SETTING", "not_applicable"]


def not_applicable(score: DocumentScore, metric: str) -> bool:
    """Whether ``metric`` does not apply to the scored document by its nature (an OmniDocBench page without a table
    has no ``table_teds``): a threshold on it is neither failed nor reported as unchecked.

    Args:
        score: the document's score.
        metric: a registered metric name.

    Returns:
        True when the document's scorer said the metric has no value for it.
    """
    omnidoc = score.details.get("omnidoc")
    return isinstance(omnidoc, Mapping) and metric in (omnidoc.get("absent") or ())


class ScoringError(ValueError):
    """A document that cannot be scored, said in one sentence naming it (its schema cannot be applied to the output:
    a ``$ref`` loop, a backtracking ``pattern``): a problem of the ground truth, not a verdict on the output. The
    plugin errors that document's test with the sentence; the other documents are scored."""


#: a document schema with ``"x-output-format": "xml"`` checks an XML output (its ``required`` are element paths)
XML_FORMAT_KEY = "x-output-format"

MAX_SCORED_CHARACTERS = 2_000_000
"""The default of the longest output scored, in characters, unless the reference is longer (then twice the
reference's length is).

Aligning an output costs about 160 bytes of memory per output character (the list of edit operations), so a
50,000,000-character output (an engine that looped, or returned a binary file as text) would need about 8 GB and end
the whole run with a ``MemoryError``; a page of text is a few thousand characters. Such an output errors its own
document instead (:func:`check_output_length`), in one sentence, and the run goes on.

The bound of a run is a setting (``ScoringOptions.max_output_chars``): ``--ocr-max-output-chars`` /
``ocr_max_output_chars`` in pytest, ``--max-output-chars`` of ``ocrmetrics evaluate`` and ``ocrmetrics score``,
``max_output_chars=`` of the evaluator; see ``docs/reference/limits.md``."""

OUTPUT_LIMIT_SETTING = "--ocr-max-output-chars, or --max-output-chars of ocrmetrics"
"""How the output-length bound's setting is named in the sentence of an output over it."""


class OutputTooLong(EngineError):
    """An engine's output is too long to score (:data:`MAX_SCORED_CHARACTERS`); that document's test errors."""


def output_too_long_reason(text: str, reference: str | None, limit: int = MAX_SCORED_CHARACTERS) -> str | None:
    """Why ``text`` is too long to score against ``reference``, in a sentence, or None when it is not: longer than
    ``limit`` characters and than twice the reference. Cheap (two ``len``), run on every output before anything
    aligns it.

    Args:
        text: the output to score.
        reference: the reference text it is scored against (None: no reference).
        limit: the longest output scored (the run's output-length setting).

    Returns:
        ``the output is N characters, more than the M scored (...): ...`` naming the setting, or None.

    >>> output_too_long_reason("x" * 11, "abc", limit=10)[:52]
    'the output is 11 characters, more than the 10 scored'
    >>> output_too_long_reason("x" * 11, "abcdef", limit=10) is None
    True
    """
    length = len(text)
    allowed = max(limit, 2 * len(reference or ""))
    if length <= allowed:
        return None
    return (f"the output is {length:,} characters, more than the {allowed:,} scored (set by {OUTPUT_LIMIT_SETTING}; "
            "twice the reference when that is longer): aligning it would take about "
            f"{memory_text(length * 160)} of memory; the engine probably looped or returned a binary file as text")


def check_output_length(document: Document, output: OcrOutput, limit: int = MAX_SCORED_CHARACTERS) -> None:
    """Raise :class:`OutputTooLong` when ``output.text`` is longer than ``limit`` characters and than twice the
    reference text (see :func:`output_too_long_reason`).

    Args:
        document: the document the output is of (its reference text).
        output: the engine's output.
        limit: the longest output scored (``ScoringOptions.max_output_chars``).
    """
    reason = output_too_long_reason(output.text, document.reference_text, limit)
    if reason is not None:
        raise OutputTooLong(reason)


DEFAULT_TEXT_METRICS = ("cer", "wer", "ser", "ned", "edit_similarity", "exact_match", "token_accuracy", "bow_f1")


@dataclass(frozen=True)
class ScoringOptions:
    """How documents are scored in this run (recorded in the run file)."""

    normalize: str = "nfc"
    unit: str = "grapheme"
    tokenizer: str = "whitespace"
    extra_metrics: tuple[str, ...] = ()
    field_compare: str = "lowercase"
    #: word matching of ``crr`` and ``word_f1`` (:func:`~pytest_ocrmetrics.metrics.word_match.word_match`); the
    #: defaults are the evaluator's: within 1 character edit, case-insensitive, punctuation stripped
    word_distance: int = 1
    word_case_sensitive: bool = False
    word_ignore_punctuation: bool = True
    #: the longest output scored (``--ocr-max-output-chars``), see :data:`MAX_SCORED_CHARACTERS`
    max_output_chars: int = MAX_SCORED_CHARACTERS


def with_metrics(options: ScoringOptions, names: Iterable[str]) -> ScoringOptions:
    """``options`` also computing the registered metrics among ``names`` (those a threshold, gate or tolerance
    names); the same object when it computes them all already.

    >>> with_metrics(ScoringOptions(), ["cer", "crr", "*"]).extra_metrics
    ('crr',)
    """
    from pytest_ocrmetrics.metrics.registry import METRICS

    wanted = _wanted_metrics(tuple(options.extra_metrics))
    missing = [name for name in dict.fromkeys(names) if name in METRICS and name not in wanted]
    return replace(options, extra_metrics=(*options.extra_metrics, *missing)) if missing else options


@dataclass(frozen=True)
class DocumentScore:
    """Every metric of one output against one document, with raw counts and the texts that were compared.

    ``metrics`` maps registry names to values (fractions), ``counts`` maps a metric name to its raw counts (for micro
    averages). ``reference`` and ``hypothesis`` are the normalized texts that were compared. ``details`` keeps
    per-metric explanations (missing/incorrect fields, JSON errors) for messages and reports.
    """

    document: Document
    engine: str
    output: OcrOutput
    metrics: Mapping[str, float]
    counts: Mapping[str, Mapping[str, float]]
    normalization: str
    reference: str | None
    hypothesis: str
    details: Mapping[str, Any] = field(default_factory=dict)
    # the text scores the confusions are counted from, when first read (None: no reference text, no confusions)
    text_scores: Any = field(default=None, repr=False, compare=False)

    def __getitem__(self, name: str) -> float:
        return self.metrics[name]

    def get(self, name: str, default: float | None = None) -> float | None:
        return self.metrics.get(name, default)

    @cached_property
    def confusions(self) -> tuple[tuple[str, str, int], ...]:
        """Every confusion pair ``(reference unit, output unit, count)``, most frequent first (corpus counts stay
        exact); a deleted or inserted character is ``""`` on the other side. Counted from the character alignment
        when first read: a run that writes no report showing them never pays for them."""
        return tuple(map(tuple, self.confusion_rows()))  # type: ignore[arg-type]

    def confusion_rows(self) -> list[list[str | int]]:
        """:attr:`confusions` as the run file holds them, ``[reference unit, output unit, count]`` lists, made in one
        pass over the cells (each document's record has them: converting tuples again would cost as much).

        Returns:
            The rows, most frequent first; ``[]`` when the document has no reference text.
        """
        if self.text_scores is None:
            return []
        from pytest_ocrmetrics.metrics.text import confusion_cells

        # the cells of text_scores.confusion, without building the whole ConfusionMatrix
        return confusion_cells(self.text_scores.character_alignment, rows=True)


def _lower_keeping_length(text: str) -> str:
    """``text.lower()`` where that keeps every character one character (offsets stay valid), else per character."""
    lowered = text.lower()
    if len(lowered) == len(text):  # lower() never shortens a character, so no character changed length
        return lowered
    return "".join(low if len(low := ch.lower()) == 1 else ch for ch in text)


def fields_from_text(reference_fields: Mapping[str, Any], text: str, *, ignore_case: bool = False,
                     join_lines: bool = False) -> dict[str, Any]:
    """Locate each reference field's value in plain OCR text, for engines that return no structured fields.

    Each (flattened) reference value is aligned to its best-matching span of ``text`` (rapidfuzz
    ``partial_ratio_alignment``); that span, as written in ``text``, is taken as the extracted value and compared
    like any extracted field. With ``ignore_case`` (what :func:`score_document` uses when the field comparison
    ignores case: ``lowercase``, the default, ``normalized`` and ``fuzzy``) the value is located
    case-insensitively. With ``join_lines`` (every comparison but ``exact``), a span found across line breaks for a
    reference value written on one line has its whitespace runs read as single spaces: the page's layout broke the
    line, the engine did not misread the value (an address printed over two lines). Nested objects are handled by
    key path; list values are matched element by element.

    >>> fields_from_text({"total": "60.30", "date": "19/10/2018"}, "TOTAL RM 60.30\\nDATE 19/10/2018 20:49")
    {'total': '60.30', 'date': '19/10/2018'}
    >>> fields_from_text({"city": "JOHOR BAHRU"}, "Johor Bahru, Malaysia", ignore_case=True)
    {'city': 'Johor Bahru'}
    >>> fields_from_text({"address": "12 Harbour Road, Brighton"}, "12 Harbour Road,\\nBrighton", join_lines=True)
    {'address': '12 Harbour Road, Brighton'}
    """
    from pytest_ocrmetrics.metrics.fields import locate_value

    haystack = _lower_keeping_length(text) if ignore_case else text

    def locate(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: locate(v) for k, v in value.items()}
        if isinstance(value, list):
            return [locate(v) for v in value]
        needle = _lower_keeping_length(str(value)) if ignore_case else str(value)
        if not needle or not text:
            return None
        found = locate_value(needle, haystack) if len(needle) <= len(text) else (0, len(text))
        if found is None:
            return None
        span = text[found[0]:found[1]]
        if join_lines and "\n" not in str(value) and "\n" in span:
            span = " ".join(span.split())
        return span

    return {key: locate(value) for key, value in reference_fields.items()}


def task_prediction(task: Mapping[str, Any], output: OcrOutput, *, field_compare: str = "lowercase") -> tuple[Any, str]:
    """What the engine's output answers to one downstream task of a document, and where that came from.

    The specification scores a task on a predicted dict (the fields, ``{"answer": ...}``, ``{"class": ...}``).
    An engine with structured output (``output.fields``) supplies it: its fields for ``extraction``, its
    ``"answer"`` for ``qa``, its ``"class"`` for ``classification`` (source ``"engine"``). Otherwise (a text-only
    engine, or fields without ``"answer"``) the text is read like fields are (:func:`fields_from_text`, source
    ``"located in text"``): each reference field,
    or each accepted answer, is located in the text, case-insensitively, so a qa answer succeeds when it is written
    in the text. A class is a decision no text makes: without ``output.fields["class"]`` the task gets no class
    (source ``"none"``) and fails.

    >>> task_prediction({"type": "qa", "reference": {"answer": "Acme Corp"}}, OcrOutput(text="Vendor: ACME CORP"))
    ({'answer': 'ACME CORP'}, 'located in text')
    >>> task_prediction({"type": "classification", "reference": {"class": "invoice"}}, OcrOutput(text="INVOICE"))
    ({}, 'none')
    """
    kind, reference, structured = task.get("type"), task.get("reference"), output.fields
    given = output.metadata.get("task_prediction") or {}  # a replay .json's top-level "answer" / "class"
    if kind == "qa" and "answer" in given or kind == "classification" and "class" in given:
        key = "answer" if kind == "qa" else "class"
        return {key: given[key]}, "engine"
    if kind == "extraction" and isinstance(reference, Mapping):
        if structured is not None:
            return structured, "engine"
        return fields_from_text(reference, output.text, ignore_case=field_compare != "exact",
                                join_lines=field_compare != "exact"), "located in text"
    if kind == "qa" and isinstance(reference, Mapping):
        if structured is not None and "answer" in structured:
            return {"answer": structured["answer"]}, "engine"
        return {"answer": _answer_in_text(reference.get("answer"), output.text)}, "located in text"
    if kind == "classification" and structured is not None and "class" in structured:
        return {"class": structured["class"]}, "engine"
    return {}, "none"


def _answer_in_text(accepted: Any, text: str) -> str:
    """The span of ``text`` holding an accepted answer (one, or a list of them): the first that matches an answer
    exactly (case aside), else the first located, else empty."""
    answers = [accepted] if isinstance(accepted, str) else [str(answer) for answer in accepted or ()]
    spans: list[str | None] = [fields_from_text({"answer": answer}, text, ignore_case=True, join_lines=True)["answer"]
             for answer in answers]
    matching = [span for span, answer in zip(spans, answers)
                if span is not None and span.strip().lower() == answer.strip().lower()]
    located = [span for span in spans if span is not None]
    return (matching or located or [""])[0]


_DEFAULT_OPTIONS = ScoringOptions()


@lru_cache(maxsize=64)
def _wanted_metrics(extra_metrics: tuple[str, ...]) -> frozenset[str]:
    """The default text metrics and the ``--ocr-metric`` extras (one set per run, not one per document)."""
    return frozenset(DEFAULT_TEXT_METRICS) | frozenset(extra_metrics)


def score_document(document: Document, output: OcrOutput, *, engine: str, options: ScoringOptions | None = None) -> DocumentScore:
    """Compute every metric that applies to ``document`` for ``output``.

    The texts are normalized and aligned once (:func:`~pytest_ocrmetrics.metrics.text.score_text`, when the document
    has a reference text); then each metric family that applies to the document and is requested computes its
    metrics (:data:`~pytest_ocrmetrics.scoring.scorers.SCORERS`).
    """
    from pytest_ocrmetrics.scoring.scorers import ScoringContext, scorers_for

    options = options or _DEFAULT_OPTIONS
    profile = get_profile(options.normalize)
    wanted = _wanted_metrics(tuple(options.extra_metrics))
    if document.reference_text is None:
        text, reference, hypothesis = None, None, profile(output.text)
    else:
        from pytest_ocrmetrics.metrics.text import score_text

        text = score_text(document.reference_text, output.text, unit=options.unit, tokenizer=options.tokenizer,
                          normalize=profile)
        reference, hypothesis = text.reference, text.hypothesis  # normalized once, by score_text
    context = ScoringContext(document, output, engine, options, wanted, text, reference, hypothesis, {}, {}, {})
    for scorer in scorers_for(wanted):
        if scorer.applies(document):
            scorer.score(context)
    return DocumentScore(
        document=document,
        engine=engine,
        output=output,
        metrics=context.metrics,
        counts=context.counts,
        normalization=profile.name,
        reference=reference,
        hypothesis=hypothesis,
        details=context.details,
        text_scores=text,
    )
