"""The fuzzy stage of word_match does bounded work on adversarial input, and the same pairing on normal input."""

from __future__ import annotations

import importlib
import random
from typing import Any

import pytest

from pytest_ocrmetrics.metrics.word_match import word_match

word_match_module = importlib.import_module("pytest_ocrmetrics.metrics.word_match")


def _random_words(count: int, alphabet: str, shortest: int, longest: int, seed: int) -> str:
    rng = random.Random(seed)
    return " ".join("".join(rng.choice(alphabet) for _ in range(rng.randint(shortest, longest))) for _ in range(count))


def _count_comparisons(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Patch the fuzzy stage's rapidfuzz call so it records how many comparisons each call makes."""
    counted: list[int] = []
    extract = word_match_module.process.extract

    class CountingProcess:
        @staticmethod
        def extract(query: str, choices: list[str], **kwargs: Any) -> Any:
            counted.append(len(choices))
            return extract(query, choices, **kwargs)

    monkeypatch.setattr(word_match_module, "process", CountingProcess)
    return counted


def test_a_megabyte_of_short_random_words_at_distance_5_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # every leftover word is within distance 5 of every other: unbounded, that is 10^10 comparisons and as many pairs
    reference = _random_words(210_000, "abcdefghijklmnopqrstuvwxyz", 2, 6, seed=1)
    hypothesis = _random_words(210_000, "abcdefghijklmnopqrstuvwxyz", 2, 6, seed=2)
    assert len(reference) > 1_000_000
    counted = _count_comparisons(monkeypatch)
    r = word_match(reference, hypothesis, max_distance=5, max_comparisons=word_match_module.FUZZY_COMPARISONS)
    assert sum(counted) <= word_match_module.FUZZY_COMPARISONS
    assert r.bounded and r.to_dict()["bounded"] is True  # the result says its search was bounded
    assert r.exact_count + r.fuzzy_count + len(r.unmatched_reference) == r.reference_words
    assert r.fuzzy_count > 50_000  # still pairs most words


def test_budget_limits_comparisons_and_keeps_nearby_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    noise = _random_words(2_000, "0123456789", 3, 5, seed=3)
    other = _random_words(2_000, "0123456789", 3, 5, seed=4)
    counted = _count_comparisons(monkeypatch)
    r = word_match(f"{noise} zebra", f"{other} zebrs", max_distance=5, max_comparisons=20_000)
    assert sum(counted) <= 20_000 and r.bounded
    # the capped search compares a word with the forms nearest to it in the text: the last word still finds its twin
    assert ("zebra", "zebrs", 1) in {(p.reference, p.hypothesis, p.distance) for p in r.fuzzy}


def test_within_budget_the_pairs_equal_the_unbounded_greedy(monkeypatch: pytest.MonkeyPatch) -> None:
    reference = _random_words(300, "abcdef", 1, 4, seed=5)
    hypothesis = _random_words(300, "abcdef", 1, 4, seed=6)
    bounded = word_match(reference, hypothesis, max_distance=3)
    counted = _count_comparisons(monkeypatch)
    word_match(reference, hypothesis, max_distance=3)
    assert sum(counted) <= word_match_module.FUZZY_COMPARISONS  # no cap was needed

    # the definition: every candidate pair, sorted by (distance, reference position, hypothesis position), greedy
    from rapidfuzz.distance import Levenshtein

    ref = [(i, w.casefold()) for i, w in enumerate(reference.split())]
    hyp = [(i, w.casefold()) for i, w in enumerate(hypothesis.split())]
    used_r = {p.reference_index for p in bounded.exact}
    used_h = {p.hypothesis_index for p in bounded.exact}
    candidates = sorted((d, r, h) for r, rw in ref if r not in used_r for h, hw in hyp if h not in used_h
                        if 1 <= (d := Levenshtein.distance(rw, hw)) <= 3)
    expected = []
    for d, r, h in candidates:
        if r not in used_r and h not in used_h:
            used_r.add(r)
            used_h.add(h)
            expected.append((r, h, d))
    assert sorted((p.reference_index, p.hypothesis_index, p.distance) for p in bounded.fuzzy) == sorted(expected)


def test_repeated_words_do_not_multiply_candidates() -> None:
    # 20,000 copies on each side: listing candidate pairs would be 4 * 10^8 tuples; pairing takes one pass
    r = word_match("colour " * 20_000, "color " * 20_000)
    assert r.fuzzy_count == 20_000
    assert [(p.reference_index, p.hypothesis_index) for p in r.fuzzy[:3]] == [(0, 0), (1, 1), (2, 2)]


def test_hostile_words_pair_like_any_other() -> None:
    r = word_match("\ud800x \x00ab c\u0301d", "\ud800y \x00ac cd", ignore_punctuation=False)
    assert {(p.reference, p.hypothesis) for p in r.fuzzy} == {("\ud800x", "\ud800y"), ("\x00ab", "\x00ac"),
                                                              ("c\u0301d", "cd")}


def test_without_a_bound_the_search_is_exact_whatever_it_costs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The library's, the plugin's and ``ocrmetrics score``'s word matching is the definition: no silent bound."""
    noise = _random_words(2_000, "0123456789", 3, 5, seed=3)
    other = _random_words(2_000, "0123456789", 3, 5, seed=4)
    counted = _count_comparisons(monkeypatch)
    exact = word_match(f"{noise} zebra", f"{other} zebrs", max_distance=5)
    assert sum(counted) > 20_000 and not exact.bounded and "bounded" not in exact.to_dict()
    bounded = word_match(f"{noise} zebra", f"{other} zebrs", max_distance=5, max_comparisons=20_000)
    assert bounded.bounded and bounded.reference_words == exact.reference_words


def test_the_evaluator_page_says_when_its_search_was_bounded() -> None:
    from pytest_ocrmetrics.evaluator.serve.api import analyze_texts

    small = analyze_texts("the quick brown fox", "the quik brown fox")
    assert "bounded" not in small and small["message"] is None
    reference = _random_words(60_000, "abcdefghijklmnopqrstuvwxyz", 2, 6, seed=1)
    hypothesis = _random_words(60_000, "abcdefghijklmnopqrstuvwxyz", 2, 6, seed=2)
    from pytest_ocrmetrics.evaluator.serve.api import MatchOptions

    big = analyze_texts(reference, hypothesis, MatchOptions(threshold=5))
    assert big["bounded"] is True and "too large to compare every pair" in big["message"]
