"""Reading-order-tolerant text metrics from layout-aware OCR benchmarks (the Biblicus metrics reference).

Page OCR of multi-column layouts, tables and receipts often gets every word right but in another order; CER then
punishes the reading order, not the recognition. These metrics separate the two. The names the specification (the
Biblicus metrics reference) defines mean its definitions:

- :func:`word_set_overlap`: set-based precision / recall / F1 on the *sets* of unique words (``set_precision``,
  ``set_recall``, ``set_f1``); :func:`bag_of_words` is the multiset variant (``bow_f1``);
- :func:`ngram_overlap`: the same on multisets of word n-grams; its ``overlap`` and headline ``value`` (matching
  reference n-grams / reference n-grams) is the specification's bigram (``n=2``) and trigram (``n=3``) overlap;
- :func:`sequence_accuracy`: words equal *at the same position* / reference words;
- :func:`lcs_ratio`: LCS over *words* / reference words;
- :func:`char_lcs_ratio`: ``2 * LCS / (len(ref) + len(hyp))`` over characters (this project's variant);
- :func:`character_accuracy`: ``max(0, 1 - CER)``.

Words are compared after casefolding and punctuation removal (``normalize="nfc+casefold+punctuation"``, the
specification's "lowercase, remove punctuation, trim whitespace") and split on whitespace.

>>> bag_of_words("Total: 12.50 RM", "rm 1250 total").f1
1.0
>>> sequence_accuracy("hello world from biblicus", "hello form world biblicus").value  # positions 0 and 3
0.5
>>> lcs_ratio("the quick brown fox jumps", "the brown quick fox").value  # "the brown fox"
0.6
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import sub
from typing import Any

from rapidfuzz.distance import LCSseq

from pytest_ocrmetrics.metrics.alignment import encode_text, encode_units
from pytest_ocrmetrics.metrics.normalize import NormalizationProfile, get_profile
from pytest_ocrmetrics.metrics.rates import share
from pytest_ocrmetrics.metrics.units import check_text

__all__ = [
    "OverlapScores",
    "NgramOverlapScores",
    "SequenceAccuracy",
    "LcsRatio",
    "CharLcsRatio",
    "CharacterAccuracy",
    "word_set_overlap",
    "bag_of_words",
    "ngram_overlap",
    "sequence_accuracy",
    "lcs_ratio",
    "char_lcs_ratio",
    "character_accuracy",
    "layout_scores",
    "LAYOUT_METRICS",
    "WORD_NORMALIZATION",
]

WORD_NORMALIZATION = "nfc+casefold+punctuation"

ProfileArg = str | NormalizationProfile


@dataclass(frozen=True)
class OverlapScores:
    """Precision / recall / F1 of an overlap of words or word n-grams (a set or a multiset).

    precision = matched / hypothesis_count, recall = matched / reference_count, F1 = 2 * matched / (sum of both).
    When neither side has any item all three are ``1.0 if empty_match else 0.0``; when only one side has none, 0.0.
    ``overlap`` is the recall under the name the specification gives it for n-grams (matching reference n-grams /
    reference n-grams).
    """

    matched: int
    reference_count: int
    hypothesis_count: int
    unit: str
    normalize: str
    empty_match: bool = True

    def _rate(self, numerator: int, denominator: int) -> float:
        both_empty = self.empty_match and self.reference_count == 0 and self.hypothesis_count == 0
        return share(numerator, denominator, both_empty=both_empty)

    @property
    def precision(self) -> float:
        return self._rate(self.matched, self.hypothesis_count)

    @property
    def recall(self) -> float:
        return self._rate(self.matched, self.reference_count)

    @property
    def overlap(self) -> float:
        """matched / reference_count: the specification's bigram / trigram overlap (= ``recall``)."""
        return self.recall

    @property
    def f1(self) -> float:
        return self._rate(2 * self.matched, self.reference_count + self.hypothesis_count)

    @property
    def value(self) -> float:
        return self.f1

    def counts(self) -> dict[str, int]:
        """Counts that add up: corpus precision = sum(matched) / sum(hypothesis), recall = sum(matched) /
        sum(reference), F1 = sum(f1_numerator) / sum(f1_denominator)."""
        return {"matched": self.matched, "reference": self.reference_count, "hypothesis": self.hypothesis_count,
                "f1_numerator": 2 * self.matched, "f1_denominator": self.reference_count + self.hypothesis_count}

    def to_dict(self) -> dict[str, Any]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1, "overlap": self.overlap,
                "unit": self.unit, "normalize": self.normalize, "counts": self.counts()}


@dataclass(frozen=True)
class NgramOverlapScores(OverlapScores):
    """:class:`OverlapScores` of word n-grams, whose headline ``value`` is the specification's ``overlap``.

    ``value`` is the number every other result leads with and the one the registry's ``bigram_overlap`` /
    ``trigram_overlap`` record: matching reference n-grams / reference n-grams (1/3 for "a b c d" against "a b"),
    not the F1 of the two multisets (still ``f1``).
    """

    @property
    def value(self) -> float:
        return self.overlap


@dataclass(frozen=True)
class SequenceAccuracy:
    """Reference words equal to the hypothesis word at the same position: ``position_matches / reference_words``.

    1.0 when both texts have no words; 0.0 when only the reference has none (everything in the hypothesis is extra).
    """

    position_matches: int
    reference_words: int
    hypothesis_words: int
    normalize: str

    @property
    def value(self) -> float:
        return share(self.position_matches, self.reference_words, both_empty=self.hypothesis_words == 0)

    def counts(self) -> dict[str, int]:
        return {"position_matches": self.position_matches, "reference_words": self.reference_words}

    def to_dict(self) -> dict[str, Any]:
        return {"sequence_accuracy": self.value, "position_matches": self.position_matches,
                "reference_words": self.reference_words, "hypothesis_words": self.hypothesis_words,
                "normalize": self.normalize}


@dataclass(frozen=True)
class LcsRatio:
    """Reference words recovered in reading order: ``lcs_words / reference_words`` (LCS over words).

    1.0 when both texts have no words; 0.0 when only the reference has none (everything in the hypothesis is extra).
    """

    lcs_words: int
    reference_words: int
    hypothesis_words: int
    normalize: str

    @property
    def value(self) -> float:
        return share(self.lcs_words, self.reference_words, both_empty=self.hypothesis_words == 0)

    def counts(self) -> dict[str, int]:
        return {"lcs_words": self.lcs_words, "reference_words": self.reference_words}

    def to_dict(self) -> dict[str, Any]:
        return {"lcs_ratio": self.value, "lcs_words": self.lcs_words, "reference_words": self.reference_words,
                "hypothesis_words": self.hypothesis_words, "normalize": self.normalize}


@dataclass(frozen=True)
class CharLcsRatio:
    """``2 * lcs / (reference_length + hypothesis_length)`` over characters; 1.0 when both are empty."""

    lcs: int
    reference_length: int
    hypothesis_length: int
    unit: str
    normalize: str

    @property
    def value(self) -> float:
        return share(2 * self.lcs, self.reference_length + self.hypothesis_length, both_empty=True)

    def counts(self) -> dict[str, int]:
        return {"lcs": self.lcs, "reference_length": self.reference_length,
                "hypothesis_length": self.hypothesis_length}

    def to_dict(self) -> dict[str, Any]:
        return {"char_lcs_ratio": self.value, "unit": self.unit, "normalize": self.normalize,
                "counts": self.counts()}


@dataclass(frozen=True)
class CharacterAccuracy:
    """``max(0, 1 - CER)``: the share of reference characters not in error, clipped at 0.

    ``correct_characters = max(0, reference_length - errors)``, so the corpus value is
    ``sum(correct_characters) / sum(reference_length)``. Empty reference: 1.0 when the hypothesis is empty too, else
    0.0 (CER's bounded policy).
    """

    errors: int
    reference_length: int
    hypothesis_length: int
    unit: str
    normalize: str

    @property
    def correct_characters(self) -> int:
        return max(0, self.reference_length - self.errors)

    @property
    def value(self) -> float:
        return share(self.correct_characters, self.reference_length, both_empty=self.hypothesis_length == 0)

    @classmethod
    def from_error_rate(cls, cer: Any) -> CharacterAccuracy:
        """From a CER result (:func:`pytest_ocrmetrics.metrics.text.cer`, ``score_text(...).cer``): no new alignment."""
        return cls(cer.errors, cer.reference_length, cer.hypothesis_length, cer.unit, cer.normalization)

    def counts(self) -> dict[str, int]:
        return {"correct_characters": self.correct_characters, "reference_length": self.reference_length,
                "errors": self.errors}

    def to_dict(self) -> dict[str, Any]:
        return {"character_accuracy": self.value, "unit": self.unit, "normalize": self.normalize,
                "counts": self.counts()}


def _words(text: str, name: str, profile: NormalizationProfile) -> list[str]:
    return profile(check_text(text, name)).split()


def _both_words(reference: str, hypothesis: str, normalize: ProfileArg) -> tuple[list[str], list[str], str]:
    profile = get_profile(normalize)
    return _words(reference, "reference", profile), _words(hypothesis, "hypothesis", profile), profile.name


def _ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def _check_n(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"n must be an int >= 1, not {type(n).__name__}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return n


def _set_overlap(ref: list[str], hyp: list[str], name: str) -> OverlapScores:
    ref_set, hyp_set = set(ref), set(hyp)
    return OverlapScores(len(ref_set & hyp_set), len(ref_set), len(hyp_set), "word set", name)


def _bag_overlap(ref: list[str], hyp: list[str], name: str) -> OverlapScores:
    # Σ over the smaller bag's words of min(count in ref, count in hyp): the size of the multiset intersection
    # (``Counter(ref) & Counter(hyp)``), summed in C instead of building the intersection Counter in Python, as
    # (Σ a + Σ b - Σ |a - b|) / 2 (``min`` would cost a call with argument parsing per word)
    small, large, size = Counter(ref), Counter(hyp), len(ref)
    if len(small) > len(large):
        small, large, size = large, small, len(hyp)
    found = list(map(large.get, small, repeat(0)))  # each word's count in the other bag
    matched = (size + sum(found) - sum(map(abs, map(sub, small.values(), found)))) // 2
    return OverlapScores(matched, len(ref), len(hyp), "word", name)


def _ngram_overlap(ref: list[str], hyp: list[str], n: int, name: str) -> NgramOverlapScores:
    ref_grams, hyp_grams = _ngrams(ref, n), _ngrams(hyp, n)
    matched = sum((ref_grams & hyp_grams).values())
    return NgramOverlapScores(matched, sum(ref_grams.values()), sum(hyp_grams.values()), f"{n}-gram", name,
                         empty_match=ref == hyp)


def _sequence_accuracy(ref: list[str], hyp: list[str], name: str) -> SequenceAccuracy:
    return SequenceAccuracy(sum(map(str.__eq__, ref, hyp)), len(ref), len(hyp), name)  # zip: the shorter length


def _lcs_ratio(ref: list[str], hyp: list[str], name: str) -> LcsRatio:
    return LcsRatio(LCSseq.similarity(*encode_units(ref, hyp)), len(ref), len(hyp), name)


def word_set_overlap(reference: str, hypothesis: str, *, normalize: ProfileArg = WORD_NORMALIZATION) -> OverlapScores:
    """The specification's set-based metrics: precision / recall / F1 on the *sets* of unique words.

    precision = |ref ∩ hyp| / |hyp set|, recall = |ref ∩ hyp| / |ref set|, F1 = their harmonic mean
    (= 2 |ref ∩ hyp| / (|ref set| + |hyp set|)). A repeated word counts once on each side; :func:`bag_of_words`
    counts repetitions. Words as in :func:`bag_of_words`.

    Args:
        reference: the ground truth.
        hypothesis: the OCR output.
        normalize: normalization profile applied to both texts before they are split into words.

    Returns:
        The :class:`OverlapScores`.

    >>> r = word_set_overlap("hello world from biblicus", "hello world form")  # the specification's example
    >>> r.precision, r.recall, round(r.f1, 3)
    (0.6666666666666666, 0.5, 0.571)
    >>> word_set_overlap("the the the cat", "the cat").recall, bag_of_words("the the the cat", "the cat").recall
    (1.0, 0.5)
    """
    return _set_overlap(*_both_words(reference, hypothesis, normalize))


def bag_of_words(reference: str, hypothesis: str, *, normalize: ProfileArg = WORD_NORMALIZATION) -> OverlapScores:
    """Position-agnostic word overlap: precision / recall / F1 on the multisets of words (``bow_f1``).

    Both texts are normalized (default: NFC, casefold, punctuation removed) and split on whitespace; a word
    occurring twice in the reference and once in the hypothesis matches once. :func:`word_set_overlap` is the
    specification's set-based variant.

    Args:
        reference: the ground truth.
        hypothesis: the OCR output.
        normalize: normalization profile applied to both texts before they are split into words.

    Returns:
        The :class:`OverlapScores`.

    >>> r = bag_of_words("the cat the hat", "The hat, the bat!")
    >>> r.matched, r.precision, r.recall
    (3, 0.75, 0.75)
    """
    return _bag_overlap(*_both_words(reference, hypothesis, normalize))


def ngram_overlap(
    reference: str, hypothesis: str, *, n: int = 2, normalize: ProfileArg = WORD_NORMALIZATION
) -> NgramOverlapScores:
    """Overlap of the multisets of word n-grams (``n=2`` bigrams, ``n=3`` trigrams).

    ``overlap`` (= ``value`` = ``recall``) is the specification's bigram / trigram overlap: matching reference
    n-grams / reference n-grams, a reference n-gram occurring k times matching at most k times. Precision and F1 are
    there too. Words as in :func:`bag_of_words`. A text with fewer than ``n`` words has no n-grams; when neither side has
    one the score is 1.0 if the two word lists are identical, else 0.0.

    Args:
        reference: the ground truth.
        hypothesis: the OCR output.
        n: the n-gram length.
        normalize: normalization profile applied to both texts before they are split into words.

    Returns:
        The :class:`NgramOverlapScores`.

    >>> r = ngram_overlap("hello world from biblicus", "hello world biblicus from", n=2)  # the specification's
    >>> r.matched, r.reference_count, r.overlap, r.value == r.overlap
    (1, 3, 0.3333333333333333, True)
    """
    _check_n(n)
    ref, hyp, name = _both_words(reference, hypothesis, normalize)
    return _ngram_overlap(ref, hyp, n, name)


def sequence_accuracy(
    reference: str, hypothesis: str, *, normalize: ProfileArg = WORD_NORMALIZATION
) -> SequenceAccuracy:
    """The specification's sequence accuracy: reference words equal to the hypothesis word *at the same position*,
    over the reference words.

    Strict: one inserted or dropped word shifts every later word out of place. Words as in :func:`bag_of_words`.
    :func:`lcs_ratio` is the order-tolerant measure (words in the same relative order).

    Args:
        reference: the ground truth.
        hypothesis: the OCR output.
        normalize: normalization profile applied to both texts before they are split into words.

    Returns:
        The :class:`SequenceAccuracy`.

    >>> sequence_accuracy("a b c d", "a c b d").value, sequence_accuracy("a b c d", "x a b c d").value
    (0.5, 0.0)
    """
    return _sequence_accuracy(*_both_words(reference, hypothesis, normalize))


def lcs_ratio(reference: str, hypothesis: str, *, normalize: ProfileArg = WORD_NORMALIZATION) -> LcsRatio:
    """The specification's LCS ratio: the longest common subsequence of the two word lists / reference words.

    Counts the reference words the hypothesis reproduces in the same relative order; words present but out of
    order do not count. Words as in :func:`bag_of_words`. :func:`char_lcs_ratio` is the character-level variant.

    Args:
        reference: the ground truth.
        hypothesis: the OCR output.
        normalize: normalization profile applied to both texts before they are split into words.

    Returns:
        The :class:`LcsRatio`.

    >>> lcs_ratio("a b c d", "a c b d").value
    0.75
    """
    return _lcs_ratio(*_both_words(reference, hypothesis, normalize))


def char_lcs_ratio(reference: str, hypothesis: str, *, normalize: ProfileArg = "nfc") -> CharLcsRatio:
    """``2 * LCS / (len(ref) + len(hyp))`` over characters (grapheme clusters): 1.0 identical, 0.0 nothing shared.

    Equal to ``1 - Indel distance / (len(ref) + len(hyp))``. Normalization default: NFC only. (Before the
    specification's word-level :func:`lcs_ratio` this project's ``lcs_ratio`` was this.)

    Args:
        reference: the ground truth.
        hypothesis: the OCR output.
        normalize: normalization profile applied to both sides (a preset, ``+``-joined steps or a profile).

    Returns:
        The :class:`CharLcsRatio`.

    >>> char_lcs_ratio("kitten", "sitting").value
    0.6153846153846154
    """
    profile = get_profile(normalize)
    ref, hyp, ref_codes, hyp_codes = encode_text(profile(check_text(reference, "reference")),
                                                 profile(check_text(hypothesis, "hypothesis")))
    return CharLcsRatio(LCSseq.similarity(ref_codes, hyp_codes), len(ref), len(hyp), "grapheme", profile.name)


def character_accuracy(
    reference: str, hypothesis: str, *, unit: str = "grapheme", normalize: ProfileArg = "nfc"
) -> CharacterAccuracy:
    """Character accuracy = ``max(0, 1 - CER)``, CER as :func:`pytest_ocrmetrics.metrics.text.cer` computes it.

    The Biblicus metrics reference names "Character Accuracy" (character-level correctness, 0 to 1, higher is
    better) without a formula; this is the usual one. (Biblicus's own code computes ``1 - lev / max(len)``, which is
    ``edit_similarity`` here.)

    Args:
        reference: the ground truth.
        hypothesis: the OCR output.
        unit: ``"grapheme"`` (default) or ``"codepoint"``.
        normalize: normalization profile applied to both sides (a preset, ``+``-joined steps or a profile).

    Returns:
        The :class:`CharacterAccuracy`.

    >>> round(character_accuracy("INVOICE", "INV0ICE").value, 4), character_accuracy("ab", "xyzw").value
    (0.8571, 0.0)
    """
    from pytest_ocrmetrics.metrics.text import cer

    return CharacterAccuracy.from_error_rate(cer(reference, hypothesis, unit=unit, normalize=normalize))


# the registry metrics this module computes, and how each reads its result
_WORD_METRICS: dict[str, tuple[str, str]] = {
    "set_precision": ("set", "precision"),
    "set_recall": ("set", "recall"),
    "set_f1": ("set", "f1"),
    "sequence_accuracy": ("sequence", "value"),
    "lcs_ratio": ("lcs", "value"),
    "bigram_overlap": ("bigram", "overlap"),
    "trigram_overlap": ("trigram", "overlap"),
}
LAYOUT_METRICS: frozenset[str] = frozenset(_WORD_METRICS) | {"char_lcs_ratio"}


def layout_scores(
    reference: str, hypothesis: str, names: Collection[str], *, normalize: ProfileArg = WORD_NORMALIZATION
) -> dict[str, tuple[float, dict[str, int]]]:
    """``{metric name: (value, counts)}`` for the registry metrics in ``names`` that this module computes.

    Words are split once for all of them; names this module does not compute are ignored. ``char_lcs_ratio`` uses
    its own default normalization (NFC). This is what the plugin calls for ``--ocr-metric`` extras.

    Args:
        reference: the ground truth.
        hypothesis: the OCR output.
        names: registry metric names wanted.
        normalize: normalization profile applied to both texts before they are split into words.

    Returns:
        ``{metric name: (value, counts)}``.

    >>> scores = layout_scores("a b c", "a c b", ["sequence_accuracy", "bigram_overlap", "cer"])
    >>> {name: value for name, (value, counts) in scores.items()}, scores["bigram_overlap"][1]["reference"]
    ({'sequence_accuracy': 0.3333333333333333, 'bigram_overlap': 0.0}, 2)
    """
    out: dict[str, tuple[float, dict[str, int]]] = {}
    wanted = [name for name in _WORD_METRICS if name in names]
    if wanted:
        ref, hyp, profile_name = _both_words(reference, hypothesis, normalize)
        make: dict[str, Callable[[], Any]] = {
            "set": lambda: _set_overlap(ref, hyp, profile_name),
            "sequence": lambda: _sequence_accuracy(ref, hyp, profile_name),
            "lcs": lambda: _lcs_ratio(ref, hyp, profile_name),
            "bigram": lambda: _ngram_overlap(ref, hyp, 2, profile_name),
            "trigram": lambda: _ngram_overlap(ref, hyp, 3, profile_name)}
        results: dict[str, Any] = {}
        for name in wanted:
            kind, attribute = _WORD_METRICS[name]
            if kind not in results:
                results[kind] = make[kind]()
            result = results[kind]
            out[name] = (float(getattr(result, attribute)), result.counts())
    if "char_lcs_ratio" in names:
        result = char_lcs_ratio(reference, hypothesis)
        out["char_lcs_ratio"] = (float(result.value), result.counts())
    return out
