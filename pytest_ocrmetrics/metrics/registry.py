"""The metric registry: the one place that names every per-document metric.

JSON keys, JUnit property names (``ocr.<name>``), table columns, threshold and gate expressions, and the
``assert_<name>_below`` / ``assert_<name>_above`` helpers all take their names from here, so a metric is added in
one place; how it is computed per document is its family's scorer in :mod:`pytest_ocrmetrics.scoring.scorers`
(``tests/metrics/test_scorers.py`` checks that both name the same metrics).

``aggregation="micro"`` metrics carry counts: the corpus (micro) value is ``sum(numerator) / sum(denominator)``
over documents, so partial aggregates (xdist workers) merge exactly. ``aggregation="mean"`` metrics have no natural
counts; their micro value is the mean over documents.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Iterable, Literal

__all__ = ["MetricSpec", "METRICS", "METRIC_DEFINITIONS", "get_metric", "unknown_metric_message", "closest_metric", "metric_names", "in_registry_order", "is_better", "regression"]

Direction = Literal["lower", "higher"]


@dataclass(frozen=True)
class MetricSpec:
    """How one metric is named, read and aggregated."""

    name: str
    title: str
    better: Direction
    requires: Literal["text", "lines", "fields", "schema", "answers", "facts", "tasks"] = "text"
    aggregation: Literal["micro", "mean"] = "mean"
    numerator: str | None = None  # key in the document's counts[name] summed for the micro value
    denominator: str | None = None
    unit: Literal["fraction", "ratio", "count"] = "fraction"
    description: str = ""

    @property
    def lower_is_better(self) -> bool:
        return self.better == "lower"


_SPECS = (
    MetricSpec("cer", "CER", "lower", "text", "micro", "errors", "reference_length",
               description="character error rate: (S+D+I)/N over grapheme clusters of the reference"),
    MetricSpec("wer", "WER", "lower", "text", "micro", "errors", "reference_length",
               description="word error rate: (S+D+I)/N over reference words"),
    MetricSpec("ser", "SER", "lower", "lines", "micro", "error_sentences", "total_sentences",
               description="sentence (line) error rate: lines that differ after strip(), the shorter side padded with "
                           "empty lines, / max(reference lines, output lines)"),
    MetricSpec("ned", "NED", "lower", "text", "mean",
               description="normalized edit distance: lev/max(len(ref), len(hyp)) in [0, 1]"),
    MetricSpec("edit_similarity", "EditSim", "higher", "text", "mean", description="1 - NED"),
    MetricSpec("exact_match", "Exact", "higher", "text", "micro", "matches", "documents",
               description="1 if the normalized texts are identical, else 0"),
    MetricSpec("token_accuracy", "TokAcc", "higher", "text", "micro", "position_matches", "position_total",
               description="exact-match rate: positions with equal tokens / max(reference tokens, output tokens)"),
    MetricSpec("token_f1", "TokF1", "higher", "text", "mean", description="F1 on the sets of unique tokens"),
    MetricSpec("bow_f1", "BoW F1", "higher", "text", "mean",
               description="bag-of-words F1 on word multisets (a repeated word counts each time) after lowercasing "
                           "and punctuation removal"),
    MetricSpec("crr", "CRR", "higher", "text", "mean",
               description="word-match character recognition rate: mean 1 - d/max(len) over matched word pairs"),
    MetricSpec("word_f1", "WordF1", "higher", "text", "mean",
               description="word-match F1 over exact word matches"),
    MetricSpec("set_precision", "Set P", "higher", "text", "micro", "matched", "hypothesis",
               description="set-based precision: unique words in both / unique output words (lowercased, punctuation "
                           "removed)"),
    MetricSpec("set_recall", "Set R", "higher", "text", "micro", "matched", "reference",
               description="set-based recall: unique words in both / unique reference words"),
    MetricSpec("set_f1", "Set F1", "higher", "text", "micro", "f1_numerator", "f1_denominator",
               description="set-based F1: harmonic mean of set_precision and set_recall"),
    MetricSpec("sequence_accuracy", "SeqAcc", "higher", "text", "micro", "position_matches", "reference_words",
               description="reference words equal to the output word at the same position / reference words"),
    MetricSpec("lcs_ratio", "LCS", "higher", "text", "micro", "lcs_words", "reference_words",
               description="longest common subsequence of the word lists / reference words"),
    MetricSpec("char_lcs_ratio", "CharLCS", "higher", "text", "mean",
               description="2 * LCS / (len(ref) + len(hyp)) over characters"),
    MetricSpec("bigram_overlap", "Bigram", "higher", "text", "micro", "matched", "reference",
               description="reference word bigrams found in the output / reference bigrams"),
    MetricSpec("trigram_overlap", "Trigram", "higher", "text", "micro", "matched", "reference",
               description="reference word trigrams found in the output / reference trigrams"),
    MetricSpec("character_accuracy", "CharAcc", "higher", "text", "micro", "correct_characters", "reference_length",
               description="max(0, 1 - CER)"),
    MetricSpec("field_f1", "Field F1", "higher", "fields", "micro", "f1_numerator", "f1_denominator",
               description="F1 over key fields: 2*correct / (extracted + reference)"),
    MetricSpec("field_precision", "Field P", "higher", "fields", "micro", "correct", "extracted",
               description="correct fields / extracted fields"),
    MetricSpec("field_recall", "Field R", "higher", "fields", "micro", "correct", "reference",
               description="correct fields / reference fields"),
    MetricSpec("json_valid", "JSON ok", "higher", "schema", "micro", "valid", "documents",
               description="1 if the output parses as JSON and satisfies the document's schema"),
    MetricSpec("parse_success", "Parsed", "higher", "schema", "micro", "parsed", "documents",
               description="1 if the output parses (JSON, or well-formed XML), schema or not"),
    MetricSpec("completeness", "Complete", "higher", "schema", "mean",
               description="schema-required fields present and non-empty / required fields (1.0 when none is "
                           "required, 0.0 when the output does not parse)"),
    MetricSpec("task_success", "Task ok", "higher", "tasks", "micro", "successes", "tasks",
               description="downstream task success: successes / tasks, over the document's own tasks (extraction, "
                           "qa, classification) or else one extraction task on its fields (success when the share of "
                           "reference fields whose str(v).strip().lower() equals the output's is >= 0.8)"),
    MetricSpec("anls", "ANLS", "higher", "answers", "mean",
               description="average normalized Levenshtein similarity (DocVQA), 0 below 0.5 similarity"),
    MetricSpec("token_ratio", "TokRatio", "lower", "text", "micro", "output_tokens", "reference_tokens",
               unit="ratio", description="LLM tokens of the output / LLM tokens of the reference (cl100k_base)"),
    MetricSpec("fact_pass_rate", "Facts", "higher", "facts", "micro", "passed", "total",
               description="page-level facts (olmOCR-bench types) passed / facts; a fact passes when a strict "
                           "majority of the page's repeats pass it"),
)

METRICS: dict[str, MetricSpec] = {spec.name: spec for spec in _SPECS}

#: Version of the metric definitions behind a run's numbers, written into the run file's ``normalization`` object.
#: Bumped whenever a metric keeps its name but computes something else, so a baseline of the old definitions is
#: refused instead of compared. 1: pytest-ocrmetrics 0.1.0 (files without the key). 2: the specification's
#: definitions of ``ser``, ``token_accuracy``, ``token_f1``, ``sequence_accuracy``, ``lcs_ratio`` and the
#: ``lowercase`` field comparison as the default. 3: ``field_f1`` as the specification's code computes it (an empty
#: extracted value is an extracted, incorrect field; two empty values agree; no field on either side scores 0).
METRIC_DEFINITIONS = 3


def closest_metric(name: str) -> str | None:
    """The registered metric nearest to a typo (a transposition counts as one edit), or ``None`` when none is close.

    >>> closest_metric("cre"), closest_metric("feild_f1"), closest_metric("accuracy")
    ('cer', 'field_f1', 'token_accuracy')
    """
    from rapidfuzz.distance import DamerauLevenshtein

    typed = name.lower()
    best = min(METRICS, key=lambda c: DamerauLevenshtein.distance(typed, c))
    if DamerauLevenshtein.distance(typed, best) <= max(1, len(typed) // 3):
        return best
    close = difflib.get_close_matches(typed, list(METRICS), n=1)
    return close[0] if close else None


def unknown_metric_message(name: object, *, kind: str = "metric") -> str:
    """The one sentence every part of the project uses for a metric name that is not in the registry.

    >>> unknown_metric_message("cre")[:49]
    "unknown metric 'cre' (did you mean 'cer'?); valid"
    """
    close = closest_metric(str(name))
    hint = f" (did you mean {close!r}?)" if close else ""
    return f"unknown {kind} {name!r}{hint}; valid metrics: {', '.join(METRICS)}"


def get_metric(name: str) -> MetricSpec:
    """Return the spec for ``name``; an unknown name raises ``KeyError`` listing the valid ones."""
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(unknown_metric_message(name)) from None


def metric_names() -> list[str]:
    return list(METRICS)


def in_registry_order(names: Iterable[str]) -> list[str]:
    """``names`` in registry order (the order of columns and messages everywhere); unknown names last, sorted.

    >>> in_registry_order(["field_f1", "zzz", "cer"])
    ['cer', 'field_f1', 'zzz']
    """
    names = set(names)
    return [name for name in METRICS if name in names] + sorted(names - METRICS.keys())


def is_better(name: str, new: float, old: float) -> bool:
    """True when ``new`` is strictly better than ``old`` for metric ``name``."""
    return new < old if METRICS[name].lower_is_better else new > old


def regression(name: str, new: float, old: float) -> float:
    """How much worse ``new`` is than ``old`` (positive = worse), in the metric's own units."""
    return new - old if METRICS[name].lower_is_better else old - new
