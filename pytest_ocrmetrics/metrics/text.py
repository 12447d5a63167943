"""Text correctness metrics: CER, WER, SER, token accuracy, confusion matrix, exact match and normalized edit distance.

Every function takes ``reference`` (the ground truth) first and ``hypothesis`` (the OCR output) second, options as
keywords only, and returns a small frozen dataclass that keeps the raw counts (so corpus values can be summed
exactly), the unit or tokenizer, and the name of the normalization profile both texts went through.
:func:`score_text` computes all of them from one character alignment and one word alignment; that is what the
plugin calls once per document.

>>> r = cer("INVOICE #12345", "INV0ICE #12345")
>>> r.errors, r.reference_length, round(r.value, 4)
(1, 14, 0.0714)

Empty references (policy ``empty_reference="bounded"``, the default): the rate is 0.0 when both texts are empty and
1.0 when only the reference is; the counts stay exact, so corpus (micro) rates are unaffected. ``"jiwer"`` returns
the number of insertions instead (jiwer's value) and ``"dinglehopper"`` returns ``inf`` (dinglehopper's value; written
as ``null`` by every ``to_dict``).
"""

from __future__ import annotations

import math
import operator
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain, compress, repeat
from operator import itemgetter
from typing import AbstractSet, Any, Literal, Sequence, Union, overload

from pytest_ocrmetrics.metrics.alignment import (
    ANCHOR_MIN_LENGTH,
    WORD_ANCHOR_MIN_LENGTH,
    Alignment,
    align_text,
    align_text_anchored,
    align_units,
    align_units_with_blocks,
    align_words,
    unit_codes,
)
from pytest_ocrmetrics.metrics.normalize import NormalizationProfile, ProfileLike, get_profile
from pytest_ocrmetrics.metrics.rates import json_float, normalized_distance, share
from pytest_ocrmetrics.metrics.units import TOKENIZERS, UNITS, check_text, words

__all__ = [
    "EMPTY_REFERENCE_POLICIES",
    "SER_DENOMINATORS",
    "TOKEN_COUNTINGS",
    "POSITION_DENOMINATORS",
    "CONFUSION_RATES",
    "DELETE_MARK",
    "INSERT_MARK",
    "EmptyReferencePolicy",
    "ErrorRate",
    "LineErrorRate",
    "TokenAccuracy",
    "ConfusionMatrix",
    "ExactMatch",
    "EditDistance",
    "TextScores",
    "cer",
    "wer",
    "ser",
    "token_accuracy",
    "confusion",
    "exact_match",
    "normalized_edit_distance",
    "edit_similarity",
    "score_text",
]

EmptyReferencePolicy = Literal["bounded", "jiwer", "dinglehopper"]
EMPTY_REFERENCE_POLICIES: tuple[str, ...] = ("bounded", "jiwer", "dinglehopper")
#: ``ser(denominator=...)``: "max" (the specification's) or "reference" (lines in error / reference lines)
SER_DENOMINATORS: tuple[str, ...] = ("max", "reference")
#: ``token_accuracy(counting=...)``: "set" (unique tokens, the specification's) or "multiset"
TOKEN_COUNTINGS: tuple[str, ...] = ("set", "multiset")
#: ``token_accuracy(position_denominator=...)``: "max" (the specification's) or "reference"
POSITION_DENOMINATORS: tuple[str, ...] = ("max", "reference")
#: ``confusion(rate_of=...)``: "errors" (S + D + I, the specification's) or "substitutions"
CONFUSION_RATES: tuple[str, ...] = ("errors", "substitutions")
LinesLike = Union[str, Sequence[str]]
#: a text (split by the tokenizer) or a list of tokens (used as given), as the specification's token accuracy takes
TokensLike = Union[str, Sequence[str]]


# --- helpers ---------------------------------------------------------------------------------------------------------


def _error_rate(errors: int, total: int, policy: str) -> float:
    if total:
        return errors / total
    if errors == 0:
        return 0.0
    if policy == "jiwer":
        return float(errors)
    if policy == "dinglehopper":
        return math.inf
    return 1.0


def _check_unit(unit: str) -> str:
    if unit not in UNITS:
        raise ValueError(f"unknown unit {unit!r}; valid units: {', '.join(UNITS)}")
    return unit


def _check_tokenizer(tokenizer: str) -> str:
    if tokenizer not in TOKENIZERS:
        raise ValueError(f"unknown tokenizer {tokenizer!r}; valid tokenizers: {', '.join(TOKENIZERS)}")
    return tokenizer


def _check_choice(value: str, option: str, valid: tuple[str, ...]) -> str:
    if value not in valid:
        import difflib

        close = difflib.get_close_matches(str(value), valid, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"unknown {option} {value!r}{hint}; valid: {', '.join(valid)}")
    return value


def _check_policy(policy: str) -> str:
    if policy not in EMPTY_REFERENCE_POLICIES:
        raise ValueError(
            f"unknown empty_reference policy {policy!r}; valid: {', '.join(EMPTY_REFERENCE_POLICIES)}"
        )
    return policy


def _prepare(reference: object, hypothesis: object, normalize: ProfileLike) -> tuple[str, str, NormalizationProfile]:
    ref = check_text(reference, "reference")
    hyp = check_text(hypothesis, "hypothesis")
    profile = get_profile(normalize)
    if profile.is_identity:
        return ref, hyp, profile
    return profile(ref), profile(hyp), profile


# --- result types ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorRate:
    """An edit-based error rate, (S + D + I) / N over the ``reference_length`` units of the reference.

    ``metric`` is ``"cer"`` (``unit`` ``"grapheme"`` or ``"codepoint"``) or ``"wer"`` (``unit`` ``"word"``, with the
    ``tokenizer``). ``alignment`` is the alignment the counts come from (not compared, not shown), so a confusion
    matrix or a diff can be read from it without aligning again.
    """

    metric: str
    value: float
    hits: int
    substitutions: int
    deletions: int
    insertions: int
    reference_length: int
    hypothesis_length: int
    unit: str
    tokenizer: str | None
    normalization: str
    empty_reference: str = "bounded"
    alignment: Alignment | None = field(default=None, compare=False, repr=False)

    @property
    def errors(self) -> int:
        """S + D + I: the Levenshtein distance between the two unit sequences."""
        return self.substitutions + self.deletions + self.insertions

    def counts(self) -> dict[str, int]:
        """The raw counts; corpus rates are ``sum(errors) / sum(reference_length)``."""
        return {
            "errors": self.errors,
            "reference_length": self.reference_length,
            "hypothesis_length": self.hypothesis_length,
            "hits": self.hits,
            "substitutions": self.substitutions,
            "deletions": self.deletions,
            "insertions": self.insertions,
        }

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (an infinite value, possible only with ``empty_reference="dinglehopper"``, is ``None``).

        Besides this project's keys it has the specification's output keys (document 000, 1.1 and 1.2): ``cer`` with
        ``total_chars``, or ``wer`` with ``word_substitutions``, ``word_deletions``, ``word_insertions`` and
        ``total_words`` (aliases of the counts; the rate stays a fraction, where the document prints a percentage).
        """
        value = json_float(self.value)
        if self.metric == "wer":
            spec: dict[str, Any] = {"wer": value, "word_substitutions": self.substitutions,
                                    "word_deletions": self.deletions, "word_insertions": self.insertions,
                                    "total_words": self.reference_length}
        else:
            spec = {self.metric: value, "total_chars": self.reference_length}
        return {
            "metric": self.metric,
            "value": value,
            **self.counts(),
            **spec,
            "unit": self.unit,
            "tokenizer": self.tokenizer,
            "normalization": self.normalization,
            "empty_reference": self.empty_reference,
        }

    def __float__(self) -> float:
        return float(self.value)


@dataclass(frozen=True)
class LineErrorRate:
    """SER, the sentence (line) error rate: the share of line positions whose lines differ.

    The specification's definition (``denominator="max"``, the default): the shorter list of lines is padded with
    empty lines, line ``i`` is in error when the two lines differ after ``strip()``, and
    ``value`` = ``error_sentences`` / ``total_sentences`` with ``total_sentences`` = max(reference lines,
    hypothesis lines), so it never exceeds 1.0 (1 reference line against 3 output lines is 2/3).
    ``denominator="reference"`` divides by the reference lines instead (the project's earlier SER: wrong, missing and
    extra lines over reference lines, which can exceed 1.0, like CER). ``error_indices`` are the positions in error
    (a position ``>= reference_lines`` is an extra hypothesis line). ``ser`` is ``value``, a fraction like every rate
    here (the specification prints it ×100).
    """

    metric: str
    value: float
    error_sentences: int
    total_sentences: int
    reference_lines: int
    hypothesis_lines: int
    error_indices: tuple[int, ...]
    normalization: str
    denominator: str = "max"
    empty_reference: str = "bounded"

    @property
    def ser(self) -> float:
        return self.value

    @property
    def correct_sentences(self) -> int:
        return self.total_sentences - self.error_sentences

    def counts(self) -> dict[str, int]:
        """Corpus SER = sum(error_sentences) / sum(total_sentences) (``reference_lines`` for the other denominator)."""
        return {
            "error_sentences": self.error_sentences,
            "total_sentences": self.total_sentences,
            "reference_lines": self.reference_lines,
            "hypothesis_lines": self.hypothesis_lines,
        }

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict with the specification's keys (``ser``, ``total_sentences``, ``error_sentences``,
        ``correct_sentences``, ``error_indices``) and this project's (``value``, line counts, options)."""
        return {
            "metric": self.metric,
            "value": json_float(self.value),
            "ser": json_float(self.value),
            **self.counts(),
            "correct_sentences": self.correct_sentences,
            "error_indices": list(self.error_indices),
            "denominator": self.denominator,
            "normalization": self.normalization,
            "empty_reference": self.empty_reference,
        }

    def __float__(self) -> float:
        return float(self.value)


@dataclass(frozen=True)
class TokenAccuracy:
    """Token agreement of whitespace (or ``tokenizer``) tokens: by position (``value``) and as sets or multisets.

    ``value`` is the exact-match rate: ``position_matches`` (indices ``i`` where both sides have the same token) over
    ``position_total`` = max(reference tokens, hypothesis tokens) (``position_denominator="reference"``: over the
    reference tokens). With ``counting="set"`` (the specification's definition, default) ``correct_tokens`` is the
    number of *unique* tokens both sides contain, precision = correct / unique hypothesis tokens, recall = correct /
    unique reference tokens; with ``counting="multiset"`` repeated tokens count each time (precision = common /
    hypothesis tokens, recall = common / reference tokens). F1 = 2PR / (P + R). A share whose denominator is 0 is 1.0
    when both sides are empty and 0.0 otherwise.
    """

    metric: str
    value: float
    precision: float
    recall: float
    f1: float
    position_matches: int
    position_total: int
    correct_tokens: int
    reference_tokens: int
    hypothesis_tokens: int
    tokenizer: str
    normalization: str
    counting: str = "set"
    position_denominator: str = "max"

    @property
    def accuracy(self) -> float:
        return self.value

    @property
    def exact_match_rate(self) -> float:
        return self.value

    def counts(self) -> dict[str, int]:
        """Corpus exact-match rate = sum(position_matches) / sum(position_total)."""
        return {
            "position_matches": self.position_matches,
            "position_total": self.position_total,
            "reference_tokens": self.reference_tokens,
            "hypothesis_tokens": self.hypothesis_tokens,
            "correct_tokens": self.correct_tokens,
        }

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict with the specification's keys (``exact_match_rate``, ``token_precision``,
        ``token_recall``, ``token_f1``, ``correct_tokens``, ``total_gt_tokens``, ``total_pred_tokens``) and this
        project's (``value``, ``precision``, ``recall``, ``f1``, counts, options). Rates are fractions."""
        return {
            "metric": self.metric,
            "value": self.value,
            "exact_match_rate": self.value,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "token_precision": self.precision,
            "token_recall": self.recall,
            "token_f1": self.f1,
            **self.counts(),
            "total_gt_tokens": self.reference_tokens,
            "total_pred_tokens": self.hypothesis_tokens,
            "counting": self.counting,
            "position_denominator": self.position_denominator,
            "tokenizer": self.tokenizer,
            "normalization": self.normalization,
        }

    def __float__(self) -> float:
        return float(self.value)


ConfusionCell = tuple[Union[str, None], Union[str, None], int]


DELETE_MARK = "<DELETE>"
INSERT_MARK = "<INSERT>"


@dataclass(frozen=True)
class ConfusionMatrix:
    """Which reference characters were read as what: the Levenshtein edit operations of one optimal alignment.

    ``cells`` are ``(reference, hypothesis, count)``, most frequent first (ties in order of first occurrence);
    ``hypothesis`` is ``None`` for a deletion and ``reference`` is ``None`` for an insertion (the insertion row).
    ``value`` is the confusion rate. By default (``rate_of="errors"``, the specification's definition) it is
    ``total_errors`` / reference length with ``total_errors`` = S + D + I; ``rate_of="substitutions"`` gives the
    project's earlier rate, substitutions / reference length (the share of reference characters read as another
    character). Both are 0.0 for an empty reference. The specification's views: :attr:`confusion_matrix` and
    :attr:`top_confusions` name deletions ``"<DELETE>"`` and insertions ``"<INSERT>"``.
    """

    metric: str
    value: float
    cells: tuple[ConfusionCell, ...]
    substitutions: int
    deletions: int
    insertions: int
    reference_length: int
    unit: str
    normalization: str
    rate_of: str = "errors"

    @property
    def errors(self) -> int:
        """Total errors S + D + I (the sum of every cell)."""
        return self.substitutions + self.deletions + self.insertions

    @property
    def total_errors(self) -> int:
        return self.errors

    @property
    def rate(self) -> float:
        return self.value

    @property
    def confusion_rate(self) -> float:
        return self.value

    def top(self, n: int = 10) -> list[ConfusionCell]:
        """The ``n`` most frequent cells, e.g. ``[("O", "0", 2), ...]``."""
        return list(self.cells[:n])

    @property
    def top_confusions(self) -> list[tuple[str, str, int]]:
        """The 10 most frequent ``(reference, hypothesis, count)``, with ``"<DELETE>"`` / ``"<INSERT>"`` marks."""
        return [(INSERT_MARK if r is None else r, DELETE_MARK if h is None else h, c) for r, h, c in self.top(10)]

    @property
    def confusion_matrix(self) -> dict[str, dict[str, int]]:
        """``[reference][hypothesis] -> count`` as the specification writes it: deletions under ``"<DELETE>"``,
        insertions in row ``"<INSERT>"``."""
        out: dict[str, dict[str, int]] = {}
        for ref, hyp, count in self.cells:
            out.setdefault(INSERT_MARK if ref is None else ref, {})[DELETE_MARK if hyp is None else hyp] = count
        return out

    def matrix(self) -> dict[str | None, dict[str | None, int]]:
        """``matrix()[reference][hypothesis] -> count``; deletions under hypothesis ``None``, insertions in row ``None``."""
        out: dict[str | None, dict[str | None, int]] = {}
        for ref, hyp, count in self.cells:
            out.setdefault(ref, {})[hyp] = count
        return out

    def insertion_row(self) -> dict[str, int]:
        """Inserted hypothesis characters and how often each was inserted."""
        return {hyp: count for ref, hyp, count in self.cells if ref is None and hyp is not None}

    def counts(self) -> dict[str, int]:
        return {
            "errors": self.errors,
            "substitutions": self.substitutions,
            "deletions": self.deletions,
            "insertions": self.insertions,
            "reference_length": self.reference_length,
        }

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict with the specification's keys (``confusion_matrix``, ``total_errors``,
        ``top_confusions``, ``confusion_rate``, a fraction) and this project's (``value``, counts, ``cells``)."""
        return {
            "metric": self.metric,
            "value": self.value,
            "confusion_rate": self.value,
            "total_errors": self.errors,
            "confusion_matrix": self.confusion_matrix,
            "top_confusions": [list(cell) for cell in self.top_confusions],
            **self.counts(),
            "cells": [{"reference": r, "hypothesis": h, "count": c} for r, h, c in self.cells],
            "rate_of": self.rate_of,
            "unit": self.unit,
            "normalization": self.normalization,
        }


@dataclass(frozen=True)
class ExactMatch:
    """Whether the two normalized texts are identical (``value`` 1.0 or 0.0)."""

    metric: str
    value: float
    matched: bool
    normalization: str

    def counts(self) -> dict[str, int]:
        return {"matches": int(self.matched), "documents": 1}

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "value": self.value, **self.counts(), "normalization": self.normalization}

    def __bool__(self) -> bool:
        return self.matched

    def __float__(self) -> float:
        return float(self.value)


@dataclass(frozen=True)
class EditDistance:
    """Normalized edit distance, NED = distance / max(reference_length, hypothesis_length), in [0, 1].

    ``metric`` ``"ned"`` has ``value`` = NED; ``metric`` ``"edit_similarity"`` has ``value`` = 1 - NED. Two empty
    texts have NED 0.0.
    """

    metric: str
    value: float
    distance: int
    reference_length: int
    hypothesis_length: int
    unit: str
    normalization: str

    @property
    def normalized_distance(self) -> float:
        return normalized_distance(self.distance, self.reference_length, self.hypothesis_length)

    @property
    def similarity(self) -> float:
        return 1.0 - self.normalized_distance

    def counts(self) -> dict[str, int]:
        return {
            "distance": self.distance,
            "reference_length": self.reference_length,
            "hypothesis_length": self.hypothesis_length,
        }

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "value": self.value, **self.counts(), "unit": self.unit,
                "normalization": self.normalization}

    def __float__(self) -> float:
        return float(self.value)


# --- builders from alignments (shared by the public functions and score_text) ---------------------------------------


def _error_rate_result(metric: str, a: Alignment, *, unit: str, tokenizer: str | None, profile: str,
                       policy: str) -> ErrorRate:
    n = a.reference_length
    return ErrorRate(
        metric=metric,
        value=_error_rate(a.distance, n, policy),
        hits=a.hits,
        substitutions=a.substitutions,
        deletions=a.deletions,
        insertions=a.insertions,
        reference_length=n,
        hypothesis_length=a.hypothesis_length,
        unit=unit,
        tokenizer=tokenizer,
        normalization=profile,
        empty_reference=policy,
        alignment=a,
    )


@overload
def confusion_cells(a: Alignment) -> list[tuple[str | None, str | None, int]]: ...


@overload
def confusion_cells(a: Alignment, *, rows: Literal[True]) -> list[list[str | int]]: ...


def confusion_cells(a: Alignment, *, rows: bool = False) -> list[tuple[str | None, str | None, int]] | list[list[str | int]]:
    """The cells of the confusion matrix of an alignment, ``(reference unit, hypothesis unit, count)``, most frequent
    first (sorted stably, as ``Counter.most_common`` does, so equal counts keep their order of first occurrence).

    With ``rows``, the cells as a run file holds them: ``[reference unit, hypothesis unit, count]`` lists with ``""``
    for the missing side of a deletion or insertion, made in the same pass (every document's record has them)."""
    ranked = sorted(a.confusions.items(), key=itemgetter(1), reverse=True)  # Counter.most_common, without its call
    if rows:
        table: list[list[str | int]] = [[ref or "", hyp or "", count] for (ref, hyp), count in ranked]
        return table
    return [(ref, hyp, count) for (ref, hyp), count in ranked]


def _confusion_result(a: Alignment, *, unit: str, profile: str, rate_of: str = "errors") -> ConfusionMatrix:
    cells = tuple(confusion_cells(a))
    counted = a.distance if rate_of == "errors" else a.substitutions
    return ConfusionMatrix(
        metric="confusion",
        value=counted / a.reference_length if a.reference_length else 0.0,
        cells=cells,
        substitutions=a.substitutions,
        deletions=a.deletions,
        insertions=a.insertions,
        reference_length=a.reference_length,
        unit=unit,
        normalization=profile,
        rate_of=rate_of,
    )


def _edit_distance_result(metric: str, a: Alignment, *, unit: str, profile: str) -> EditDistance:
    ned = normalized_distance(a.distance, a.reference_length, a.hypothesis_length)
    return EditDistance(
        metric=metric,
        value=ned if metric == "ned" else 1.0 - ned,
        distance=a.distance,
        reference_length=a.reference_length,
        hypothesis_length=a.hypothesis_length,
        unit=unit,
        normalization=profile,
    )


def _exact_match_result(ref: str, hyp: str, *, profile: str) -> ExactMatch:
    matched = ref == hyp
    return ExactMatch(metric="exact_match", value=1.0 if matched else 0.0, matched=matched, normalization=profile)


def _token_accuracy_result(ref: list[str], hyp: list[str], *, tokenizer: str, profile: str, counting: str = "set",
                           position_denominator: str = "max") -> TokenAccuracy:
    n, m = len(ref), len(hyp)
    position_matches = sum(map(operator.eq, ref, hyp))
    if counting == "set":
        ref_side, hyp_side = set(ref), set(hyp)
        correct = len(ref_side & hyp_side)
        ref_count, hyp_count = len(ref_side), len(hyp_side)
    else:
        correct = 0
        if n and m:
            ref_counts, hyp_counts = Counter(ref), Counter(hyp)
            correct = sum(map(min, ref_counts.values(), map(hyp_counts.__getitem__, ref_counts)))
        ref_count, hyp_count = n, m
    return _token_accuracy(n, m, position_matches, correct, ref_count, hyp_count, tokenizer=tokenizer,
                           profile=profile, counting=counting, position_denominator=position_denominator)


def _token_counts_from_codes(ref_codes: list[int], hyp_codes: list[int], ref_distinct: int,
                             distinct: int) -> tuple[int, int, int, int, int, int]:
    """The arguments of :func:`_token_accuracy` before its options (``n``, ``m``, position matches, correct tokens,
    unique reference and hypothesis tokens) with the defaults (set counting, max denominator), from the codes of
    :func:`~pytest_ocrmetrics.metrics.alignment.unit_codes` (one code per distinct token): only the hypothesis set is
    built. The tokens in both sets are the distinct hypothesis tokens less those that only the hypothesis has."""
    hyp_distinct = len(set(hyp_codes))
    return (len(ref_codes), len(hyp_codes), sum(map(operator.eq, ref_codes, hyp_codes)),
            hyp_distinct - (distinct - ref_distinct), ref_distinct, hyp_distinct)


def _token_accuracy(n: int, m: int, position_matches: int, correct: int, ref_count: int, hyp_count: int, *,
                    tokenizer: str, profile: str, counting: str = "set",
                    position_denominator: str = "max") -> TokenAccuracy:
    position_total = max(n, m) if position_denominator == "max" else n
    return TokenAccuracy(
        metric="token_accuracy",
        value=share(position_matches, position_total, both_empty=m == 0 and n == 0),
        precision=share(correct, hyp_count, both_empty=n == 0),
        recall=share(correct, ref_count, both_empty=m == 0),
        f1=share(2 * correct, ref_count + hyp_count, both_empty=True),
        position_matches=position_matches,
        position_total=position_total,
        correct_tokens=correct,
        reference_tokens=n,
        hypothesis_tokens=m,
        tokenizer=tokenizer,
        normalization=profile,
        counting=counting,
        position_denominator=position_denominator,
    )


def _split_lines(text: str) -> list[str]:
    return list(filter(str.strip, text.splitlines()))  # the non-blank lines


def _stripped_lines(text: str) -> list[str]:
    return list(filter(None, map(str.strip, text.splitlines())))  # _split_lines, stripped (as SER compares them)


def _as_lines(value: object, name: str, profile: NormalizationProfile) -> list[str]:
    line_profile = profile.line_preserving()
    if isinstance(value, str):
        return _split_lines(line_profile(value))
    if isinstance(value, (list, tuple)):
        return [line_profile(check_text(line, f"{name}[{i}]")) for i, line in enumerate(value)]
    if value is None or isinstance(value, (bytes, bytearray)):
        check_text(value, name)  # the usual message for None and bytes
    raise TypeError(f"{name} must be a str or a list of str lines, not {type(value).__name__}")


def _line_errors(ref_lines: Sequence[str], hyp_lines: Sequence[str], *,
                 stripped: bool = False) -> tuple[int, int, tuple[int, ...]]:
    """(reference lines, hypothesis lines, the positions in error) of two lists of lines."""
    n, m = len(ref_lines), len(hyp_lines)
    total = max(n, m)
    # the shorter side is padded with empty lines; lines are compared stripped (``stripped``: they already are)
    if not stripped:
        ref_lines, hyp_lines = list(map(str.strip, ref_lines)), list(map(str.strip, hyp_lines))
    padded_ref = chain(ref_lines, repeat("", total - n))
    padded_hyp = chain(hyp_lines, repeat("", total - m))
    return n, m, tuple(compress(range(total), map(operator.ne, padded_ref, padded_hyp)))


def _line_error_rate_result(ref_lines: Sequence[str], hyp_lines: Sequence[str], *, profile: str, policy: str,
                            denominator: str = "max", stripped: bool = False) -> LineErrorRate:
    return _line_error_rate(*_line_errors(ref_lines, hyp_lines, stripped=stripped), profile=profile, policy=policy,
                            denominator=denominator)


def _line_error_rate(n: int, m: int, errors: tuple[int, ...], *, profile: str, policy: str,
                     denominator: str = "max") -> LineErrorRate:
    total = max(n, m)
    if denominator == "max":
        value = len(errors) / total if total else 0.0
    else:
        value = _error_rate(len(errors), n, policy)
    return LineErrorRate(
        metric="ser",
        value=value,
        error_sentences=len(errors),
        total_sentences=total,
        reference_lines=n,
        hypothesis_lines=m,
        error_indices=errors,
        normalization=profile,
        denominator=denominator,
        empty_reference=policy,
    )


# --- public functions ------------------------------------------------------------------------------------------------


def cer(
    reference: str,
    hypothesis: str,
    *,
    unit: str = "grapheme",
    normalize: ProfileLike = "nfc",
    empty_reference: str = "bounded",
) -> ErrorRate:
    """Character error rate: (S + D + I) / N over the characters of the reference.

    Characters are grapheme clusters (``unit="grapheme"``, the default) or code points (``unit="codepoint"``), taken
    after the ``normalize`` profile (default ``"nfc"``) is applied to both texts. With ``unit="codepoint",
    normalize="strip", empty_reference="jiwer"`` the value is ``jiwer.cer``'s for any input; the defaults give
    dinglehopper's ``character_error_rate`` (``empty_reference="dinglehopper"`` also for empty references).

    Args:
        reference: the ground truth.
        hypothesis: the OCR output.
        unit: ``"grapheme"`` (default) or ``"codepoint"``.
        normalize: normalization profile applied to both sides (a preset, ``+``-joined steps or a profile).
        empty_reference: ``"bounded"`` (default), ``"jiwer"`` or ``"dinglehopper"``: the value when the reference is
            empty.

    Returns:
        An :class:`ErrorRate` with the counts (hits, substitutions, deletions, insertions) and ``value``.

    >>> r = cer("INVOICE #12345", "INV0ICE #12345")
    >>> r.substitutions, r.errors, r.reference_length, round(r.value, 4)
    (1, 1, 14, 0.0714)
    >>> cer("", "").value, cer("", "abc").value, cer("", "abc", empty_reference="jiwer").value
    (0.0, 1.0, 3.0)
    """
    _check_unit(unit)
    _check_policy(empty_reference)
    ref, hyp, profile = _prepare(reference, hypothesis, normalize)
    a = align_text(ref, hyp, unit=unit)
    return _error_rate_result("cer", a, unit=unit, tokenizer=None, profile=profile.name, policy=empty_reference)


def wer(
    reference: str,
    hypothesis: str,
    *,
    tokenizer: str = "whitespace",
    normalize: ProfileLike = "nfc",
    empty_reference: str = "bounded",
) -> ErrorRate:
    """Word error rate: (S + D + I) / N over the words of the reference.

    Words come from ``tokenizer``: ``"whitespace"`` (default, ``str.split``), ``"unicode"`` (UAX #29 words without
    punctuation, dinglehopper's definition) or ``"jiwer"`` (jiwer's exact default split); see
    :mod:`pytest_ocrmetrics.metrics.units`.

    Args:
        reference: the ground truth.
        hypothesis: the OCR output.
        tokenizer: ``"whitespace"`` (default), ``"unicode"`` or ``"jiwer"``.
        normalize: normalization profile applied to both sides (a preset, ``+``-joined steps or a profile).
        empty_reference: ``"bounded"`` (default), ``"jiwer"`` or ``"dinglehopper"``: the value when the reference is
            empty.

    Returns:
        An :class:`ErrorRate` over words.

    >>> r = wer("the cat sat on the mat", "the cat sat on hat")
    >>> r.substitutions, r.deletions, r.reference_length, round(r.value, 4)
    (1, 1, 6, 0.3333)
    >>> wer("Dies ist ein Beispielsatz!", "Dies ist ein Beispielsarz:", tokenizer="unicode").value
    0.25
    """
    _check_tokenizer(tokenizer)
    _check_policy(empty_reference)
    ref, hyp, profile = _prepare(reference, hypothesis, normalize)
    a = align_words(words(ref, tokenizer=tokenizer), words(hyp, tokenizer=tokenizer))
    return _error_rate_result("wer", a, unit="word", tokenizer=tokenizer, profile=profile.name,
                              policy=empty_reference)


def ser(
    reference_lines: LinesLike,
    hypothesis_lines: LinesLike,
    *,
    denominator: str = "max",
    normalize: ProfileLike = "nfc",
    empty_reference: str = "bounded",
) -> LineErrorRate:
    """Sentence (line) error rate: lines in error / max(reference lines, hypothesis lines), lines aligned by position.

    The specification's definition: the shorter list is padded with empty lines and line ``i`` is in error when the
    two lines differ after ``strip()`` (and normalization). ``denominator="reference"`` divides the same errors by the
    reference lines (the project's earlier SER; it can exceed 1.0, and ``empty_reference`` then decides the value for
    an empty reference). Pass two lists of lines, or two strings: a string is split into lines after normalization
    and blank lines are dropped. A profile with the ``whitespace`` step is applied as ``lines`` here, so line breaks
    survive.

    Args:
        reference_lines: the reference, as lines or one string.
        hypothesis_lines: the output, as lines or one string.
        denominator: ``"max"`` (default) or ``"reference"``.
        normalize: normalization profile applied to both sides (a preset, ``+``-joined steps or a profile).
        empty_reference: ``"bounded"`` (default), ``"jiwer"`` or ``"dinglehopper"``: the value when the reference is
            empty.

    Returns:
        A :class:`LineErrorRate`.

    >>> r = ser("TOTAL 10.00\\nCASH 20.00\\nCHANGE 10.00", "TOTAL 10.00\\nCASH 2O.00\\nCHANGE 10.00")
    >>> r.error_sentences, r.total_sentences, r.correct_sentences, r.error_indices
    (1, 3, 2, (1,))
    >>> r = ser(["a"], ["a", "b", "c"])
    >>> r.value, r.error_indices, ser(["a"], ["a", "b", "c"], denominator="reference").value
    (0.6666666666666666, (1, 2), 2.0)
    """
    _check_policy(empty_reference)
    _check_choice(denominator, "denominator", SER_DENOMINATORS)
    profile = get_profile(normalize)
    ref_lines = _as_lines(reference_lines, "reference_lines", profile)
    hyp_lines = _as_lines(hypothesis_lines, "hypothesis_lines", profile)
    return _line_error_rate_result(ref_lines, hyp_lines, profile=profile.name, policy=empty_reference,
                                   denominator=denominator)


def _as_tokens(value: object, name: str, tokenizer: str, profile: NormalizationProfile) -> list[str]:
    """A text's tokens (normalized, then split by ``tokenizer``), or a list of tokens each normalized, not split."""
    if isinstance(value, str):
        return words(profile(value), tokenizer=tokenizer)
    if isinstance(value, (list, tuple)):
        return [profile(check_text(token, f"{name}[{i}]")) for i, token in enumerate(value)]
    if value is None or isinstance(value, (bytes, bytearray)):
        check_text(value, name)  # the usual message for None and bytes
    raise TypeError(f"{name} must be a str or a list of str tokens, not {type(value).__name__}")


def token_accuracy(
    reference: TokensLike,
    hypothesis: TokensLike,
    *,
    counting: str = "set",
    position_denominator: str = "max",
    tokenizer: str = "whitespace",
    normalize: ProfileLike = "nfc",
) -> TokenAccuracy:
    """Token exact-match rate by position, and token precision / recall / F1 on the sets of unique tokens.

    The specification's definition by default: ``value`` (the exact-match rate) = positions with equal tokens /
    max(len(reference tokens), len(hypothesis tokens)); precision, recall and F1 on the *sets* of tokens.
    ``counting="multiset"`` counts repeated tokens each time; ``position_denominator="reference"`` divides the
    position matches by the reference tokens only (both the project's earlier definitions). Either side may be a
    text, normalized and split by ``tokenizer``, or a list of tokens (the specification's ``List[str]`` input), each
    token normalized and used as given.

    Args:
        reference: the ground truth, as text or tokens.
        hypothesis: the output, as text or tokens.
        counting: ``"set"`` (default) or ``"multiset"``.
        position_denominator: ``"max"`` (default) or ``"reference"``.
        tokenizer: ``"whitespace"`` (default), ``"unicode"`` or ``"jiwer"``.
        normalize: normalization profile applied to both sides (a preset, ``+``-joined steps or a profile).

    Returns:
        A :class:`TokenAccuracy`.

    >>> r = token_accuracy("Invoice Number INV-2024-001 Total Amount $150.00",
    ...                    "Invoice Number INV-2024-OO1 Total Amount $150.00")
    >>> r.position_matches, r.position_total, r.correct_tokens, r.exact_match_rate == r.f1 == 5 / 6
    (5, 6, 5, True)
    >>> r = token_accuracy("a a b", "a b")
    >>> r.precision, r.recall, token_accuracy("a a b", "a b", counting="multiset").recall
    (1.0, 1.0, 0.6666666666666666)
    >>> token_accuracy(["New York", "10001"], "New York 10001").position_matches  # a token list is not split
    0
    """
    _check_tokenizer(tokenizer)
    _check_choice(counting, "counting", TOKEN_COUNTINGS)
    _check_choice(position_denominator, "position_denominator", POSITION_DENOMINATORS)
    if isinstance(reference, str) and isinstance(hypothesis, str):
        ref, hyp, profile = _prepare(reference, hypothesis, normalize)
        ref_tokens, hyp_tokens = words(ref, tokenizer=tokenizer), words(hyp, tokenizer=tokenizer)
    else:
        profile = get_profile(normalize)
        ref_tokens = _as_tokens(reference, "reference", tokenizer, profile)
        hyp_tokens = _as_tokens(hypothesis, "hypothesis", tokenizer, profile)
    return _token_accuracy_result(ref_tokens, hyp_tokens, tokenizer=tokenizer, profile=profile.name,
                                  counting=counting, position_denominator=position_denominator)


def confusion(
    reference: str,
    hypothesis: str,
    *,
    rate_of: str = "errors",
    unit: str = "grapheme",
    normalize: ProfileLike = "nfc",
) -> ConfusionMatrix:
    """Character confusion counts from the Levenshtein edit operations (substitution, deletion or insertion).

    ``value`` (``confusion_rate``) = total_errors (S + D + I) / reference length, the specification's rate;
    ``rate_of="substitutions"`` counts substitutions only (the project's earlier rate).

    Args:
        reference: the ground truth.
        hypothesis: the OCR output.
        rate_of: ``"errors"`` (default) or ``"substitutions"``.
        unit: ``"grapheme"`` (default) or ``"codepoint"``.
        normalize: normalization profile applied to both sides (a preset, ``+``-joined steps or a profile).

    Returns:
        A :class:`ConfusionMatrix`.

    >>> m = confusion("INVOICE #12345 TOTAL: $150.00", "INV0ICE #I2345 T0TAL: $15O.OO")
    >>> m.top(3), m.total_errors, m.confusion_rate == 6 / 29
    ([('0', 'O', 3), ('O', '0', 2), ('1', 'I', 1)], 6, True)
    >>> confusion("abc", "abxc").confusion_matrix, confusion("abc", "ac").top_confusions
    ({'<INSERT>': {'x': 1}}, [('b', '<DELETE>', 1)])
    """
    _check_unit(unit)
    _check_choice(rate_of, "rate_of", CONFUSION_RATES)
    ref, hyp, profile = _prepare(reference, hypothesis, normalize)
    return _confusion_result(align_text(ref, hyp, unit=unit), unit=unit, profile=profile.name, rate_of=rate_of)


def exact_match(reference: str, hypothesis: str, *, normalize: ProfileLike = "nfc") -> ExactMatch:
    """1.0 when the two texts are identical after normalization, else 0.0.

    Args:
        reference: the ground truth.
        hypothesis: the OCR output.
        normalize: normalization profile applied to both sides (a preset, ``+``-joined steps or a profile).

    Returns:
        An :class:`ExactMatch`.

    >>> exact_match("ABC 123", "abc  123").value, exact_match("ABC 123", "abc  123", normalize="lenient").value
    (0.0, 1.0)
    """
    ref, hyp, profile = _prepare(reference, hypothesis, normalize)
    return _exact_match_result(ref, hyp, profile=profile.name)


def normalized_edit_distance(
    reference: str,
    hypothesis: str,
    *,
    unit: str = "grapheme",
    normalize: ProfileLike = "nfc",
) -> EditDistance:
    """Levenshtein distance / max(len(reference), len(hypothesis)), in [0, 1]; 0.0 for two empty texts.

    Args:
        reference: the ground truth.
        hypothesis: the OCR output.
        unit: ``"grapheme"`` (default) or ``"codepoint"``.
        normalize: normalization profile applied to both sides (a preset, ``+``-joined steps or a profile).

    Returns:
        An :class:`EditDistance`.

    >>> r = normalized_edit_distance("ABC123", "A8C1234")
    >>> r.distance, round(r.value, 4)
    (2, 0.2857)
    """
    _check_unit(unit)
    ref, hyp, profile = _prepare(reference, hypothesis, normalize)
    return _edit_distance_result("ned", align_text(ref, hyp, unit=unit), unit=unit, profile=profile.name)


def edit_similarity(
    reference: str,
    hypothesis: str,
    *,
    unit: str = "grapheme",
    normalize: ProfileLike = "nfc",
) -> EditDistance:
    """1 - :func:`normalized_edit_distance`, in [0, 1]; 1.0 for two empty texts.

    Args:
        reference: the ground truth.
        hypothesis: the OCR output.
        unit: ``"grapheme"`` (default) or ``"codepoint"``.
        normalize: normalization profile applied to both sides (a preset, ``+``-joined steps or a profile).

    Returns:
        An :class:`EditDistance` whose value is the similarity.

    >>> round(edit_similarity("ABC123", "A8C1234").value, 4)
    0.7143
    """
    _check_unit(unit)
    ref, hyp, profile = _prepare(reference, hypothesis, normalize)
    return _edit_distance_result("edit_similarity", align_text(ref, hyp, unit=unit), unit=unit,
                                 profile=profile.name)


# --- everything at once -----------------------------------------------------------------------------------------------


class _TextParts:
    """What :func:`score_text` computed, before it is made into result objects: the two alignments, the lines in
    error, the token counts. A :class:`TextScores` made by :func:`score_text` builds its eight result objects from
    these only when one is first read (about a third of the per-document cost beyond the alignments, on a page of
    receipt text); the plugin reads the values and counts directly (:meth:`TextScores.record_into`)."""

    __slots__ = ("chars", "words", "lines", "tokens", "matched", "unit", "tokenizer", "policy", "name")

    def __init__(self, chars: Alignment, words: Alignment, lines: tuple[int, int, tuple[int, ...]],
                 tokens: tuple[int, int, int, int, int, int], matched: bool, *, unit: str, tokenizer: str,
                 policy: str, name: str) -> None:
        self.chars, self.words, self.lines, self.tokens, self.matched = chars, words, lines, tokens, matched
        self.unit, self.tokenizer, self.policy, self.name = unit, tokenizer, policy, name

    def results(self) -> dict[str, Any]:
        """The result objects, as :meth:`TextScores.results` has them (made by the same builders as every metric)."""
        chars, name, policy = self.chars, self.name, self.policy
        return {
            "cer": _error_rate_result("cer", chars, unit=self.unit, tokenizer=None, profile=name, policy=policy),
            "wer": _error_rate_result("wer", self.words, unit="word", tokenizer=self.tokenizer, profile=name,
                                      policy=policy),
            "ser": _line_error_rate(*self.lines, profile=name, policy=policy),
            "ned": _edit_distance_result("ned", chars, unit=self.unit, profile=name),
            "edit_similarity": _edit_distance_result("edit_similarity", chars, unit=self.unit, profile=name),
            "exact_match": ExactMatch(metric="exact_match", value=1.0 if self.matched else 0.0,
                                      matched=self.matched, normalization=name),
            "token_accuracy": _token_accuracy(*self.tokens, tokenizer=self.tokenizer, profile=name),
        }

    def record_into(self, metrics: dict[str, float], counts: dict[str, dict[str, int]], wanted: AbstractSet[str]
                    ) -> None:
        """:meth:`TextScores.record_into` without the result objects: the same values (from the same rate
        functions) and the same counts, in the same order (a test checks it against the objects)."""
        for metric, alignment in (("cer", self.chars), ("wer", self.words)):
            if metric in wanted:
                n, s, d, i = len(alignment.reference), alignment.substitutions, alignment.deletions, alignment.insertions
                metrics[metric] = _error_rate(s + d + i, n, self.policy)
                counts[metric] = {"errors": s + d + i, "reference_length": n,
                                  "hypothesis_length": len(alignment.hypothesis), "hits": n - s - d,
                                  "substitutions": s, "deletions": d, "insertions": i}
        if "ser" in wanted:
            n, m, errors = self.lines
            total = max(n, m)
            metrics["ser"] = len(errors) / total if total else 0.0
            counts["ser"] = {"error_sentences": len(errors), "total_sentences": total, "reference_lines": n,
                             "hypothesis_lines": m}
        chars = self.chars
        n, m = len(chars.reference), len(chars.hypothesis)
        distance = chars.substitutions + chars.deletions + chars.insertions
        ned = normalized_distance(distance, n, m)
        for metric, value in (("ned", ned), ("edit_similarity", 1.0 - ned)):
            if metric in wanted:
                metrics[metric] = value
                counts[metric] = {"distance": distance, "reference_length": n, "hypothesis_length": m}
        if "exact_match" in wanted:
            metrics["exact_match"] = 1.0 if self.matched else 0.0
            counts["exact_match"] = {"matches": int(self.matched), "documents": 1}
        if "token_accuracy" in wanted:
            n, m, position_matches, correct, _, _ = self.tokens
            total = max(n, m)
            metrics["token_accuracy"] = share(position_matches, total, both_empty=m == 0 and n == 0)
            counts["token_accuracy"] = {"position_matches": position_matches, "position_total": total,
                                        "reference_tokens": n, "hypothesis_tokens": m, "correct_tokens": correct}


_TEXT_RESULTS = frozenset(("cer", "wer", "ser", "ned", "edit_similarity", "exact_match", "token_accuracy"))


@dataclass(frozen=True)
class TextScores:
    """The full per-document text metric set, from one character alignment and one word alignment.

    ``reference`` and ``hypothesis`` are the two texts after normalization, as they were compared (a caller that
    also needs them reads them here instead of normalizing again). ``confusion`` is counted from the character
    alignment when it is first read (one Python step per edit operation: on a high-error page about a third of the
    work beyond the character alignment), so a caller that never reads it does not pay for it; its value does not
    depend on when it is read. Likewise the result objects of a :class:`TextScores` made by :func:`score_text` are
    made when one of them is first read (``cer``, ``wer``, ...); :meth:`record_into` needs none of them.
    """

    cer: ErrorRate
    wer: ErrorRate
    ser: LineErrorRate
    ned: EditDistance
    edit_similarity: EditDistance
    exact_match: ExactMatch
    token_accuracy: TokenAccuracy
    normalization: str
    reference: str = field(default="", repr=False)
    hypothesis: str = field(default="", repr=False)

    @classmethod
    def _of(cls, parts: _TextParts, reference: str, hypothesis: str) -> TextScores:
        """A :class:`TextScores` whose result objects are made from ``parts`` when first read."""
        scores = object.__new__(cls)
        scores.__dict__.update(normalization=parts.name, reference=reference, hypothesis=hypothesis, _parts=parts)
        return scores

    def __getattr__(self, name: str) -> Any:
        # called only for an attribute not set: the results of a TextScores made by score_text, before first read
        parts = self.__dict__.get("_parts")
        if parts is None or name not in _TEXT_RESULTS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        for key, value in parts.results().items():
            self.__dict__.setdefault(key, value)  # another thread may have made them first: keep those
        return self.__dict__[name]

    @property
    def character_alignment(self) -> Alignment:
        """The character alignment CER, NED and the confusion matrix come from (``cer.alignment``), read without
        making the result objects."""
        parts = self.__dict__.get("_parts")
        alignment = parts.chars if parts is not None else self.cer.alignment
        assert alignment is not None  # score_text always keeps it
        return alignment

    @cached_property
    def confusion(self) -> ConfusionMatrix:
        """The character confusion matrix (:func:`confusion` with the same options), from the CER alignment."""
        parts = self.__dict__.get("_parts")
        unit = parts.unit if parts is not None else self.cer.unit  # without making the result objects
        return _confusion_result(self.character_alignment, unit=unit, profile=self.normalization)

    def results(self) -> dict[str, Any]:
        """The results keyed by registry metric name (each has ``value``, ``counts()`` and ``to_dict()``)."""
        return {
            "cer": self.cer,
            "wer": self.wer,
            "ser": self.ser,
            "ned": self.ned,
            "edit_similarity": self.edit_similarity,
            "exact_match": self.exact_match,
            "token_accuracy": self.token_accuracy,
        }

    def record_into(self, metrics: dict[str, float], counts: dict[str, dict[str, int]],
                    wanted: AbstractSet[str]) -> None:
        """Add the value (``float(result.value)``) and the counts (``result.counts()``) of each result named in
        ``wanted`` to ``metrics`` and ``counts``, in the order of :meth:`results` (what a document's score keeps).

        Args:
            metrics: metric name -> value, filled.
            counts: metric name -> counts, filled (a new dict each).
            wanted: the metric names to add.
        """
        parts = self.__dict__.get("_parts")
        if parts is not None:
            parts.record_into(metrics, counts, wanted)
            return
        for name, result in self.results().items():
            if name in wanted:
                metrics[name] = float(result.value)
                counts[name] = result.counts()

    def values(self) -> dict[str, float]:
        """Registry metric name -> value, including ``token_f1``."""
        out = {name: float(result.value) for name, result in self.results().items()}
        out["token_f1"] = self.token_accuracy.f1
        return out

    def counts(self) -> dict[str, dict[str, int]]:
        """Registry metric name -> raw counts (numerators and denominators for micro aggregation)."""
        return {name: result.counts() for name, result in self.results().items()}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict of every result, plus the confusion matrix."""
        return {
            **{name: result.to_dict() for name, result in self.results().items()},
            "confusion": self.confusion.to_dict(),
            "normalization": self.normalization,
        }


def score_text(
    reference: str,
    hypothesis: str,
    *,
    unit: str = "grapheme",
    tokenizer: str = "whitespace",
    normalize: ProfileLike = "nfc",
    empty_reference: str = "bounded",
) -> TextScores:
    """Every text metric for one document: normalize once, align characters once and words once.

    Equal to calling :func:`cer`, :func:`wer`, :func:`ser`, :func:`normalized_edit_distance`,
    :func:`edit_similarity`, :func:`exact_match`, :func:`token_accuracy` and :func:`confusion` one by one with the
    same options, at the cost of about one alignment.

    Args:
        reference: the ground truth.
        hypothesis: the OCR output.
        unit: ``"grapheme"`` (default) or ``"codepoint"``.
        tokenizer: ``"whitespace"`` (default), ``"unicode"`` or ``"jiwer"``.
        normalize: normalization profile applied to both sides (a preset, ``+``-joined steps or a profile).
        empty_reference: ``"bounded"`` (default), ``"jiwer"`` or ``"dinglehopper"``: the value when the reference is
            empty.

    Returns:
        A :class:`TextScores` holding every text metric.

    >>> s = score_text("INVOICE #12345\\nTOTAL 10.00", "INV0ICE #12345\\nTOTAL 10.00")
    >>> s.cer.errors, s.wer.errors, s.ser.error_sentences, s.exact_match.value, s.confusion.top(1)
    (1, 1, 1, 0.0, [('O', '0', 1)])
    """
    _check_unit(unit)
    _check_tokenizer(tokenizer)
    _check_policy(empty_reference)
    ref, hyp, profile = _prepare(reference, hypothesis, normalize)
    name = profile.name

    ref_words = words(ref, tokenizer=tokenizer)
    hyp_words = words(hyp, tokenizer=tokenizer)
    ref_codes, hyp_codes, ref_distinct, distinct = unit_codes(ref_words, hyp_words)
    # long texts: the character alignment is anchored on runs of lines or words both sides share (the same distance
    # for a part of the cost; align_text_anchored); the longest on the word alignment's matching blocks
    longest = max(len(ref), len(hyp))
    word_blocks = None
    if tokenizer == "whitespace" and longest >= WORD_ANCHOR_MIN_LENGTH:
        word_alignment, word_blocks = align_units_with_blocks(ref_words, hyp_words, ref_codes, hyp_codes)
    else:
        word_alignment = align_units(ref_words, hyp_words, ref_codes, hyp_codes)

    if profile.whitespace:  # the normalized texts lost their line breaks; lines need the line-preserving profile
        lines = _line_errors(_as_lines(reference, "reference", profile), _as_lines(hypothesis, "hypothesis", profile))
    else:
        lines = _line_errors(_stripped_lines(ref), _stripped_lines(hyp), stripped=True)
    # the character alignment last: its matrix fills the CPU caches, and its edit operations stay warm for the
    # confusion matrix when that is read next
    if longest >= ANCHOR_MIN_LENGTH:
        chars = align_text_anchored(ref, hyp, ref_words, hyp_words, word_blocks, unit=unit)
    else:
        chars = align_text(ref, hyp, unit=unit)
    parts = _TextParts(chars, word_alignment, lines, _token_counts_from_codes(ref_codes, hyp_codes, ref_distinct, distinct),
                       ref == hyp, unit=unit, tokenizer=tokenizer, policy=empty_reference, name=name)
    return TextScores._of(parts, ref, hyp)
