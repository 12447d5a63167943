"""Word matching with fuzzy pairs: which words were read exactly, which nearly, which not at all.

:func:`word_match` pairs reference and hypothesis words regardless of order: first exact matches (as multisets),
then, among the words left over, greedy fuzzy pairs by lowest edit distance up to ``max_distance``. Precision,
recall and F1 count exact matches only; the character recognition rate ``crr`` rewards near misses. The pairs come
back with their word positions so a report can highlight them.

>>> r = word_match("the quick brown fox", "the quik brown dog")
>>> r.exact_count, [(p.reference, p.hypothesis, p.distance) for p in r.fuzzy], r.unmatched_reference, r.crr
(2, [('quick', 'quik', 1)], ('fox',), 0.9333333333333332)
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass
from heapq import heapify, heappop, heapreplace
from typing import Any

from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from pytest_ocrmetrics.metrics.normalize import strip_punctuation
from pytest_ocrmetrics.metrics.rates import normalized_distance, share
from pytest_ocrmetrics.metrics.units import check_text

__all__ = ["WordPair", "WordMatch", "word_match", "FUZZY_COMPARISONS", "MAX_DISTANCE", "distance_out_of_range"]

#: The largest ``max_distance``: document 002's word-match threshold range is 0 to 5 (the page, its API, the
#: plugin's ``--ocr-word-distance`` and ``ocrmetrics score --fuzzy`` all refuse more, with the same sentence).
MAX_DISTANCE = 5


def distance_out_of_range(name: str, value: object) -> str:
    """The one sentence that refuses a word-match distance outside 0..:data:`MAX_DISTANCE`, ``name`` saying where.

    Args:
        name: where the distance was given.
        value: the value given.

    Returns:
        The sentence.

    >>> distance_out_of_range("max_distance", 6)
    'max_distance must be a whole number from 0 to 5 (the largest edit distance of a fuzzy match), got 6'
    """
    return (f"{name} must be a whole number from 0 to {MAX_DISTANCE} (the largest edit distance of a fuzzy match), "
            f"got {value!r}")


@dataclass(frozen=True)
class WordPair:
    """A matched pair: the words as written, their positions in ``text.split()``, and their edit distance.

    ``similarity`` is ``1 - distance / max(len)`` over the compared (case-folded, punctuation-stripped) forms.
    """

    reference: str
    hypothesis: str
    reference_index: int
    hypothesis_index: int
    distance: int
    similarity: float

    def to_dict(self) -> dict[str, Any]:
        return {"reference": self.reference, "hypothesis": self.hypothesis, "reference_index": self.reference_index,
                "hypothesis_index": self.hypothesis_index, "distance": self.distance, "similarity": self.similarity}


@dataclass(frozen=True)
class WordMatch:
    """Word-level matching of one page.

    - precision = exact / hypothesis words, recall = exact / reference words, F1 = 2 * exact / (both);
      1.0 when both texts have no words, 0.0 when only one has none;
    - ``crr`` = mean of ``1 - d / max(len)`` over exact (1.0 each) and fuzzy pairs; 1.0 when both texts have no
      words, 0.0 when there are words but no pair.

    ``value`` is F1. Words are counted after the options (an all-punctuation word is dropped with
    ``ignore_punctuation=True``).
    """

    exact: tuple[WordPair, ...]
    fuzzy: tuple[WordPair, ...]
    unmatched_reference: tuple[str, ...]
    unmatched_hypothesis: tuple[str, ...]
    unmatched_reference_indices: tuple[int, ...]
    unmatched_hypothesis_indices: tuple[int, ...]
    reference_words: int
    hypothesis_words: int
    max_distance: int
    case_sensitive: bool
    ignore_punctuation: bool
    bounded: bool = False  # the fuzzy search hit ``max_comparisons`` and compared only nearby words (see word_match)

    @property
    def exact_count(self) -> int:
        return len(self.exact)

    @property
    def fuzzy_count(self) -> int:
        return len(self.fuzzy)

    def _rate(self, numerator: float, denominator: int) -> float:
        return share(numerator, denominator, both_empty=self.reference_words == 0 and self.hypothesis_words == 0)

    @property
    def precision(self) -> float:
        return self._rate(self.exact_count, self.hypothesis_words)

    @property
    def recall(self) -> float:
        return self._rate(self.exact_count, self.reference_words)

    @property
    def f1(self) -> float:
        return self._rate(2 * self.exact_count, self.reference_words + self.hypothesis_words)

    @property
    def crr_sum(self) -> float:
        return self.exact_count + sum(p.similarity for p in self.fuzzy)

    @property
    def crr(self) -> float:
        return self._rate(self.crr_sum, self.exact_count + self.fuzzy_count)

    @property
    def value(self) -> float:
        return self.f1

    def counts(self) -> dict[str, float]:
        """Counts that add up: corpus F1 = 2 * sum(exact) / sum(words), corpus CRR = sum(crr_sum) / sum(pairs)."""
        return {
            "exact": self.exact_count,
            "fuzzy": self.fuzzy_count,
            "pairs": self.exact_count + self.fuzzy_count,
            "crr_sum": self.crr_sum,
            "reference_words": self.reference_words,
            "hypothesis_words": self.hypothesis_words,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "crr": self.crr,
            "max_distance": self.max_distance,
            "case_sensitive": self.case_sensitive,
            "ignore_punctuation": self.ignore_punctuation,
            **({"bounded": True} if self.bounded else {}),
            "counts": self.counts(),
            "exact": [p.to_dict() for p in self.exact],
            "fuzzy": [p.to_dict() for p in self.fuzzy],
            "unmatched_reference": list(self.unmatched_reference),
            "unmatched_hypothesis": list(self.unmatched_hypothesis),
            "unmatched_reference_indices": list(self.unmatched_reference_indices),
            "unmatched_hypothesis_indices": list(self.unmatched_hypothesis_indices),
        }


def _tokens(text: str, case_sensitive: bool, ignore_punctuation: bool) -> list[tuple[int, str, str]]:
    """(position in text.split(), word as written, compared form) for each word kept."""
    out = []
    for i, word in enumerate(text.split()):
        form = word if word.isascii() else unicodedata.normalize("NFC", word)
        if ignore_punctuation and not form.isalnum():  # isalnum: letters and digits only, nothing to strip
            form = strip_punctuation(form)
            if not form:
                continue
        if not case_sensitive:
            form = form.casefold()
            if not form.isascii():
                form = unicodedata.normalize("NFC", form)
        out.append((i, word, form))
    return out


def word_match(
    reference: str,
    hypothesis: str,
    *,
    max_distance: int = 1,
    case_sensitive: bool = False,
    ignore_punctuation: bool = True,
    max_comparisons: int | None = None,
) -> WordMatch:
    """Match words exactly, then fuzzily; report precision / recall / F1 (exact only) and the recognition rate.

    Words are ``text.split()``, NFC-normalized; ``ignore_punctuation`` strips punctuation (Unicode P*) from each word
    and drops words left empty; without ``case_sensitive`` words are casefolded. Then:

    1. exact: equal words pair up as multisets; the k-th occurrence in the reference pairs with the k-th in the
       hypothesis;
    2. fuzzy: every remaining (reference, hypothesis) pair with ``1 <= lev <= max_distance`` is a candidate; the
       candidates are taken greedily by increasing distance, ties by reference position, then hypothesis position,
       skipping words already paired. ``max_distance=0`` disables this stage; above :data:`MAX_DISTANCE` (5, the top
       of document 002's threshold range) is refused.

    Distances and lengths are in code points. Only words within ``max_distance`` in length can pair, so the fuzzy
    stage compares each distinct word with a few length buckets in C (rapidfuzz), not every word with every word,
    and pairs words without listing every candidate pair. By default the search is exact, whatever it costs (the
    definition above). ``max_comparisons`` (e.g. :data:`FUZZY_COMPARISONS`, what ``ocrmetrics serve`` passes, so one
    request cannot tie the server up) bounds it: an input that would need more edit distances (megabytes of short
    unmatched words at a large ``max_distance``) compares each word with the nearest part of each length bucket
    only, and the result says so (``bounded=True``; its pairs may then differ from the exact search's).

    Args:
        reference: the ground truth.
        hypothesis: the OCR output.
        max_distance: character edits a fuzzy pair may differ by (0 to 5).
        case_sensitive: distinguish case.
        ignore_punctuation: strip punctuation from each word.
        max_comparisons: bound on the edit distances computed (default: 10 million).

    Returns:
        A :class:`WordMatch`.

    >>> word_match("quick", "quik").crr
    0.8
    """
    reference = check_text(reference, "reference")
    hypothesis = check_text(hypothesis, "hypothesis")
    if isinstance(max_distance, bool) or not isinstance(max_distance, int):
        raise TypeError(f"max_distance must be an int >= 0, not {type(max_distance).__name__}")
    if not 0 <= max_distance <= MAX_DISTANCE:
        raise ValueError(distance_out_of_range("max_distance", max_distance))
    ref = _tokens(reference, case_sensitive, ignore_punctuation)
    hyp = _tokens(hypothesis, case_sensitive, ignore_punctuation)

    # 1. exact matches, k-th occurrence with k-th occurrence
    hyp_positions: dict[str, list[int]] = defaultdict(list)
    for k, (_, _, form) in enumerate(hyp):
        hyp_positions[form].append(k)
    used_ref = [False] * len(ref)
    used_hyp = [False] * len(hyp)
    exact: list[WordPair] = []
    taken: dict[str, int] = defaultdict(int)
    for r, (ri, rword, form) in enumerate(ref):
        positions = hyp_positions.get(form)
        if positions and taken[form] < len(positions):
            h = positions[taken[form]]
            taken[form] += 1
            used_ref[r] = used_hyp[h] = True
            exact.append(WordPair(rword, hyp[h][1], ri, hyp[h][0], 0, 1.0))

    # 2. fuzzy matches among the rest, greedy by (distance, ref pos, hyp pos)
    fuzzy: list[WordPair] = []
    bounded = False
    if max_distance > 0:
        pairs, bounded = _fuzzy_pairs(ref, hyp, used_ref, used_hyp, max_distance, max_comparisons)
        for distance, r, h in pairs:
            fuzzy.append(WordPair(ref[r][1], hyp[h][1], ref[r][0], hyp[h][0], distance,
                                  1.0 - normalized_distance(distance, len(ref[r][2]), len(hyp[h][2]))))
        fuzzy.sort(key=lambda p: p.reference_index)

    return WordMatch(
        exact=tuple(exact),
        fuzzy=tuple(fuzzy),
        unmatched_reference=tuple(ref[r][1] for r in range(len(ref)) if not used_ref[r]),
        unmatched_hypothesis=tuple(hyp[h][1] for h in range(len(hyp)) if not used_hyp[h]),
        unmatched_reference_indices=tuple(ref[r][0] for r in range(len(ref)) if not used_ref[r]),
        unmatched_hypothesis_indices=tuple(hyp[h][0] for h in range(len(hyp)) if not used_hyp[h]),
        reference_words=len(ref),
        hypothesis_words=len(hyp),
        max_distance=max_distance,
        case_sensitive=case_sensitive,
        ignore_punctuation=ignore_punctuation,
        bounded=bounded,
    )


#: A bound on the edit distances the fuzzy stage computes between leftover word forms (about a second in rapidfuzz),
#: for callers that must answer in bounded time (``ocrmetrics serve``). An OCR page needs a few thousand; only very
#: large or adversarial inputs (a megabyte of short random words at distance 5) need more: with the bound, each
#: reference form is then compared with the hypothesis forms nearest to it in the text.
FUZZY_COMPARISONS = 10_000_000


def _candidate_forms(rest_ref: dict[str, list[int]], rest_hyp: dict[str, list[int]], max_distance: int,
                     ref_words: int, hyp_words: int, budget: int | None) -> tuple[dict[str, list[list[str]]], bool]:
    """For each leftover reference form, the leftover hypothesis forms at each distance 1..max_distance.

    Only forms within ``max_distance`` in length can be that close, so each reference form is compared with a few
    length buckets in C (rapidfuzz). When that would take more than ``budget`` comparisons (``None``: no bound), each
    reference form is compared with at most ``budget / forms`` hypothesis forms per length: those whose first
    leftover occurrence is nearest to where the form first occurs (hypothesis positions scaled to the reference's
    length); the second value says whether that happened.
    """
    by_length: dict[int, list[str]] = defaultdict(list)  # hypothesis forms in order of their first leftover position
    for form in rest_hyp:
        by_length[len(form)].append(form)
    widths = range(-max_distance, max_distance + 1)
    needed = sum(len(by_length.get(len(form) + k, ())) for form in rest_ref for k in widths)
    per_bucket = None
    if budget is not None and needed > budget:
        per_bucket = max(1, budget // (len(rest_ref) * len(widths)))
        starts = {n: [rest_hyp[form][0] for form in forms] for n, forms in by_length.items()}
        scale = hyp_words / max(ref_words, 1)
    out: dict[str, list[list[str]]] = {}
    for form, ref_slots in rest_ref.items():
        pool: list[str] = []
        for k in widths:
            bucket = by_length.get(len(form) + k)
            if not bucket:
                continue
            if per_bucket is not None and len(bucket) > per_bucket:  # the forms nearest in the text
                at = bisect_left(starts[len(form) + k], ref_slots[0] * scale)
                low = min(max(0, at - per_bucket // 2), len(bucket) - per_bucket)
                bucket = bucket[low:low + per_bucket]
            pool.extend(bucket)
        if not pool:
            continue
        levels: list[list[str]] = [[] for _ in range(max_distance + 1)]
        for other, distance, _ in process.extract(form, pool, scorer=Levenshtein.distance, score_cutoff=max_distance,
                                                  limit=None):
            levels[distance].append(other)
        out[form] = levels
    return out, per_bucket is not None


def _fuzzy_pairs(ref: list[tuple[int, str, str]], hyp: list[tuple[int, str, str]], used_ref: list[bool],
                 used_hyp: list[bool], max_distance: int,
                 budget: int | None = None) -> tuple[list[tuple[int, int, int]], bool]:
    """The greedy fuzzy pairs ``(distance, r, h)``: candidates by increasing distance, then reference position, then
    hypothesis position, skipping words already paired (``used_ref`` / ``used_hyp`` are updated).

    The same pairs as sorting every candidate pair, without listing them (a word repeated k times on each side would
    give k * k): within one distance, each reference word in order takes the earliest free hypothesis word at that
    distance, and the free words of one hypothesis form are always the last ones, so one pointer per form and one
    heap of (next free position, form) per reference form and distance find it.
    """
    rest_hyp: dict[str, list[int]] = defaultdict(list)
    for h, (_, _, form) in enumerate(hyp):
        if not used_hyp[h]:
            rest_hyp[form].append(h)
    rest_ref: dict[str, list[int]] = defaultdict(list)
    for r, (_, _, form) in enumerate(ref):
        if not used_ref[r]:
            rest_ref[form].append(r)
    if not rest_ref or not rest_hyp:
        return [], False
    candidates, bounded = _candidate_forms(rest_ref, rest_hyp, max_distance, len(ref), len(hyp), budget)
    taken = dict.fromkeys(rest_hyp, 0)  # per hypothesis form, how many of its leftover positions are paired
    pairs: list[tuple[int, int, int]] = []
    for distance in range(1, max_distance + 1):
        heaps: dict[str, list[tuple[int, str]]] = {}
        for r in [r for r in range(len(ref)) if not used_ref[r]]:
            form = ref[r][2]
            heap = heaps.get(form)
            if heap is None:
                levels = candidates.get(form)
                heap = heaps[form] = [(rest_hyp[other][taken[other]], other) for other in levels[distance]
                                      if taken[other] < len(rest_hyp[other])] if levels else []
                heapify(heap)
            while heap:
                h, other = heap[0]
                slots, k = rest_hyp[other], taken[other]
                if k == len(slots):
                    heappop(heap)
                elif slots[k] != h:  # another reference form took it: the form's next free position
                    heapreplace(heap, (slots[k], other))
                else:
                    taken[other] = k + 1
                    used_ref[r] = used_hyp[h] = True
                    pairs.append((distance, r, h))
                    break
    return pairs, bounded
