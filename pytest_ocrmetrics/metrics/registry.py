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

__all__ = ["MetricSpec", "METRICS", "METRIC_DEFINITIONS", "get_metric", "unknown_metric_message", "closest_metric",
           "metric_names", "in_registry_order", "is_better", "regression"]

Direction = Literal["lower", "higher"]


@dataclass(frozen=True)
class MetricSpec:
    """How one metric is named, read and aggregated."""

    name: str
    title: str
    better: Direction
    requires: Literal["text", "lines", "fields", "schema", "answers", "facts", "tasks", "omnidoc"] = "text"
    aggregation: Literal["micro", "mean"] = "mean"
    numerator: str | None = None  # key in the document's counts[name] summed for the micro value
    denominator: str | None = None
    unit: Literal["fraction", "ratio", "count"] = "fraction"
    description: str = ""
    specification: str = ""  # the document or tool whose definition this follows (shown in the generated reference)

    @property
    def lower_is_better(self) -> bool:
        return self.better == "lower"


_SPECS = (
    MetricSpec("cer", "CER", "lower", "text", "micro", "errors", "reference_length",
               description="character error rate: (S+D+I)/N over grapheme clusters of the reference",
               specification="OCR benchmarking metrics specification (000); jiwer's and dinglehopper's CER"),
    MetricSpec("wer", "WER", "lower", "text", "micro", "errors", "reference_length",
               description="word error rate: (S+D+I)/N over reference words",
               specification="OCR benchmarking metrics specification (000); jiwer's and dinglehopper's WER"),
    MetricSpec("ser", "SER", "lower", "lines", "micro", "error_sentences", "total_sentences",
               description="sentence (line) error rate: lines that differ after strip(), the shorter side padded with "
                           "empty lines, / max(reference lines, output lines)",
               specification="OCR benchmarking metrics specification (000), sentence error rate"),
    MetricSpec("ned", "NED", "lower", "text", "mean",
               description="normalized edit distance: lev/max(len(ref), len(hyp)) in [0, 1]",
               specification="licence-plate evaluator (003/004), normalized edit distance"),
    MetricSpec("edit_similarity", "EditSim", "higher", "text", "mean", description="1 - NED",
               specification="licence-plate evaluator (003/004), edit distance similarity"),
    MetricSpec("exact_match", "Exact", "higher", "text", "micro", "matches", "documents",
               description="1 if the normalized texts are identical, else 0",
               specification="licence-plate evaluator (003/004), exact-match accuracy"),
    MetricSpec("token_accuracy", "TokAcc", "higher", "text", "micro", "position_matches", "position_total",
               description="exact-match rate: positions with equal tokens / max(reference tokens, output tokens)",
               specification="OCR benchmarking metrics specification (000), token accuracy (exact-match rate)"),
    MetricSpec("token_f1", "TokF1", "higher", "text", "mean", description="F1 on the sets of unique tokens",
               specification="OCR benchmarking metrics specification (000), token F1 on unique tokens"),
    MetricSpec("bow_f1", "BoW F1", "higher", "text", "mean",
               description="bag-of-words F1 on word multisets (a repeated word counts each time) after lowercasing "
                           "and punctuation removal",
               specification="this project (bag of words); Biblicus's set-based F1 is set_f1"),
    MetricSpec("crr", "CRR", "higher", "text", "mean",
               description="word-match character recognition rate: mean 1 - d/max(len) over matched word pairs",
               specification="OCR Metrics Evaluator (002), average CRR"),
    MetricSpec("word_f1", "WordF1", "higher", "text", "mean",
               description="word-match F1 over exact word matches",
               specification="OCR Metrics Evaluator (002), precision / recall / F1"),
    MetricSpec("set_precision", "Set P", "higher", "text", "micro", "matched", "hypothesis",
               description="set-based precision: unique words in both / unique output words (lowercased, punctuation "
                           "removed)",
               specification="Biblicus metrics reference (001), set-based"),
    MetricSpec("set_recall", "Set R", "higher", "text", "micro", "matched", "reference",
               description="set-based recall: unique words in both / unique reference words",
               specification="Biblicus metrics reference (001), set-based"),
    MetricSpec("set_f1", "Set F1", "higher", "text", "micro", "f1_numerator", "f1_denominator",
               description="set-based F1: harmonic mean of set_precision and set_recall",
               specification="Biblicus metrics reference (001), set-based"),
    MetricSpec("sequence_accuracy", "SeqAcc", "higher", "text", "micro", "position_matches", "reference_words",
               description="reference words equal to the output word at the same position / reference words",
               specification="Biblicus metrics reference (001), order-aware"),
    MetricSpec("lcs_ratio", "LCS", "higher", "text", "micro", "lcs_words", "reference_words",
               description="longest common subsequence of the word lists / reference words",
               specification="Biblicus metrics reference (001), order-aware"),
    MetricSpec("char_lcs_ratio", "CharLCS", "higher", "text", "mean",
               description="2 * LCS / (len(ref) + len(hyp)) over characters",
               specification="this project (the former lcs_ratio)"),
    MetricSpec("bigram_overlap", "Bigram", "higher", "text", "micro", "matched", "reference",
               description="reference word bigrams found in the output / reference bigrams",
               specification="Biblicus metrics reference (001), n-gram"),
    MetricSpec("trigram_overlap", "Trigram", "higher", "text", "micro", "matched", "reference",
               description="reference word trigrams found in the output / reference trigrams",
               specification="Biblicus metrics reference (001), n-gram"),
    MetricSpec("character_accuracy", "CharAcc", "higher", "text", "micro", "correct_characters", "reference_length",
               description="max(0, 1 - CER)",
               specification="Biblicus metrics reference (001), named there without a formula"),
    MetricSpec("field_f1", "Field F1", "higher", "fields", "micro", "f1_numerator", "f1_denominator",
               description="F1 over key fields: 2*correct / (extracted + reference)",
               specification="OCR benchmarking metrics specification (000), field extraction F1"),
    MetricSpec("field_precision", "Field P", "higher", "fields", "micro", "correct", "extracted",
               description="correct fields / extracted fields",
               specification="OCR benchmarking metrics specification (000), field extraction"),
    MetricSpec("field_recall", "Field R", "higher", "fields", "micro", "correct", "reference",
               description="correct fields / reference fields",
               specification="OCR benchmarking metrics specification (000), field extraction"),
    MetricSpec("json_valid", "JSON ok", "higher", "schema", "micro", "valid", "documents",
               description="1 if the output parses as JSON and satisfies the document's schema",
               specification="OCR benchmarking metrics specification (000), JSON/XML validity (is_schema_compliant)"),
    MetricSpec("parse_success", "Parsed", "higher", "schema", "micro", "parsed", "documents",
               description="1 if the output parses (JSON, or well-formed XML), schema or not",
               specification="OCR benchmarking metrics specification (000), JSON/XML validity (is_valid)"),
    MetricSpec("completeness", "Complete", "higher", "schema", "mean",
               description="schema-required fields present and non-empty / required fields (1.0 when none is "
                           "required, 0.0 when the output does not parse)",
               specification="OCR benchmarking metrics specification (000), JSON/XML validity (completeness_score)"),
    MetricSpec("task_success", "Task ok", "higher", "tasks", "micro", "successes", "tasks",
               description="downstream task success: successes / tasks, over the document's own tasks (extraction, "
                           "qa, classification) or else one extraction task on its fields (success when the share of "
                           "reference fields whose str(v).strip().lower() equals the output's is >= 0.8)",
               specification="OCR benchmarking metrics specification (000), downstream task success"),
    MetricSpec("anls", "ANLS", "higher", "answers", "mean",
               description="average normalized Levenshtein similarity (DocVQA), 0 below 0.5 similarity",
               specification="DocVQA, average normalized Levenshtein similarity"),
    MetricSpec("token_ratio", "TokRatio", "lower", "text", "micro", "output_tokens", "reference_tokens",
               unit="ratio", description="LLM tokens of the output / LLM tokens of the reference (cl100k_base)",
               specification="OCR benchmarking metrics specification (000), LLM token efficiency"),
    MetricSpec("fact_pass_rate", "Facts", "higher", "facts", "micro", "passed", "total",
               description="page-level facts (olmOCR-bench types) passed / facts; a fact passes when a strict "
                           "majority of the page's repeats pass it",
               specification="olmOCR-bench, page-level facts"),
    # OmniDocBench's end-to-end page scores (pytest_ocrmetrics.metrics.omnidoc), on pages of an OmniDocBench dataset
    # only; a page without the element (no table, no display formula) has no value, so the mean is over the pages
    # that have it, as the benchmark's leaderboard averages
    MetricSpec("text_block_edit", "Text edit", "lower", "omnidoc", "mean", specification="OmniDocBench",
               description="OmniDocBench text-block edit distance: the output's Markdown text blocks matched to the "
                           "page's annotated text blocks (headers, footers, page numbers, captions ignored), the "
                           "normalized edit distance of the matched pairs, summed edits / summed lengths per page"),
    MetricSpec("reading_order_edit", "Order edit", "lower", "omnidoc", "mean", specification="OmniDocBench",
               description="OmniDocBench reading-order edit distance: the normalized edit distance between the "
                           "annotated order of the matched text blocks and the order they appear in the output"),
    MetricSpec("table_edit", "Table edit", "lower", "omnidoc", "mean", specification="OmniDocBench",
               description="OmniDocBench table edit distance: edit distance of each matched table's HTML, summed "
                           "edits / summed lengths over the page's tables"),
    MetricSpec("table_teds", "TEDS", "higher", "omnidoc", "mean", specification="OmniDocBench",
               description="OmniDocBench table TEDS: tree-edit-distance similarity of each matched table's HTML "
                           "tree, structure and cell text, averaged over the page's tables"),
    MetricSpec("table_teds_s", "TEDS-S", "higher", "omnidoc", "mean", specification="OmniDocBench",
               description="OmniDocBench table TEDS-S: TEDS on structure only (cell text ignored), averaged over "
                           "the page's tables"),
    MetricSpec("formula_edit", "Formula edit", "lower", "omnidoc", "mean", specification="OmniDocBench",
               description="OmniDocBench display-formula edit distance: normalized edit distance of each matched "
                           "display formula's LaTeX, summed edits / summed lengths per page"),
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

    Args:
        name: the mistyped name.

    Returns:
        The closest registered name, or ``None``.

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

    Args:
        name: the name that was given.
        kind: what the name was for (``"metric"``, ``"gate metric"``, ...).

    Returns:
        The sentence, with a did-you-mean when a name is close.

    >>> unknown_metric_message("cre")[:49]
    "unknown metric 'cre' (did you mean 'cer'?); valid"
    """
    close = closest_metric(str(name))
    hint = f" (did you mean {close!r}?)" if close else ""
    return f"unknown {kind} {name!r}{hint}; valid metrics: {', '.join(METRICS)}"


def get_metric(name: str) -> MetricSpec:
    """Return the spec for ``name``; an unknown name raises ``KeyError`` listing the valid ones.

    Args:
        name: a metric name.

    Returns:
        Its :class:`MetricSpec`.
    """
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(unknown_metric_message(name)) from None


def metric_names() -> list[str]:
    """Every registered metric name, for option help and messages.

    Returns:
        Every registered name, in registry order.
    """
    return list(METRICS)


def in_registry_order(names: Iterable[str]) -> list[str]:
    """``names`` in registry order (the order of columns and messages everywhere); unknown names last, sorted.

    Args:
        names: metric names.

    Returns:
        The names, sorted.

    >>> in_registry_order(["field_f1", "zzz", "cer"])
    ['cer', 'field_f1', 'zzz']
    """
    names = set(names)
    return [name for name in METRICS if name in names] + sorted(names - METRICS.keys())


def is_better(name: str, new: float, old: float) -> bool:
    """True when ``new`` is strictly better than ``old`` for metric ``name``.

    Args:
        name: the metric.
        new: the new value.
        old: the old value.

    Returns:
        Whether ``new`` is better.
    """
    return new < old if METRICS[name].lower_is_better else new > old


def regression(name: str, new: float, old: float) -> float:
    """How much worse ``new`` is than ``old`` (positive = worse), in the metric's own units.

    Args:
        name: the metric.
        new: the new value.
        old: the old value.

    Returns:
        The amount (negative: better).
    """
    return new - old if METRICS[name].lower_is_better else old - new
