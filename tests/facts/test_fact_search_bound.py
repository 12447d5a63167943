"""The fuzzy search of ``present``/``absent`` facts is bounded (issue 20 A10): a long fact's text against a long
output searches only up to the threshold, and one beyond any reasonable time is not checked, with the sizes named."""

from __future__ import annotations

import random
import string

import pytest
from rapidfuzz import fuzz

from pytest_ocrmetrics.metrics.facts import check_fact, model, parse_fact

_WORDS = random.Random(7)
_VOCABULARY = ["".join(_WORDS.choice(string.ascii_lowercase) for _ in range(_WORDS.randint(2, 9)))
               for _ in range(3000)]


def _text(rng: random.Random, length: int) -> str:
    """Random words, ``length`` characters: text no fact's text occurs in by chance."""
    words: list[str] = []
    size = 0
    while size <= length:
        words.append(rng.choice(_VOCABULARY))
        size += len(words[-1]) + 1
    text = " ".join(words)[:length]
    return text[:-1] + "q" if text.endswith(" ") else text  # a fact's text is stripped: keep the length exact


def _edited(rng: random.Random, text: str, edits: int) -> str:
    """``text`` with ``edits`` single characters replaced."""
    chars = list(text)
    for _ in range(edits):
        chars[rng.randrange(len(chars))] = rng.choice(string.ascii_uppercase)
    return "".join(chars)


def _fact(kind: str, text: str, max_diffs: int) -> model.Fact:
    return parse_fact({"pdf": "a.pdf", "page": 1, "id": "a_00", "type": kind, "text": text, "max_diffs": max_diffs})


@pytest.mark.parametrize("kind", ["present", "absent"])
def test_the_bounded_search_gives_the_benchmarks_verdict(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the full search turned off, every verdict still equals the benchmark's ``partial_ratio`` rule."""
    monkeypatch.setattr(model, "FULL_SEARCH_WORK", 0)
    rng = random.Random(11)
    checked = 0
    for case in range(24):
        output = _text(rng, 4000)
        start = rng.randrange(0, 3600)
        wanted = output[start:start + 300] if case % 3 else _text(rng, 300)
        wanted = _edited(rng, wanted, rng.choice([0, 2, 8, 20]))
        max_diffs = rng.choice([0, 5, 15, 30])
        threshold = 1.0 - max_diffs / len(wanted)
        present = fuzz.partial_ratio(wanted, output) / 100.0 >= threshold  # the benchmark's rule
        verdict = check_fact(_fact(kind, wanted, max_diffs), output)
        assert verdict.passed is (present if kind == "present" else not present), (case, verdict.explanation)
        checked += 1
    assert checked == 24


def test_a_five_thousand_character_fact_against_100_kb_gets_a_verdict() -> None:
    rng = random.Random(3)
    output = _text(rng, 100_000)
    missing = check_fact(_fact("present", _text(rng, 5000), 0), output)
    assert missing.passed is False
    assert "not computed for a 5,000-character text against a 100,000-character output" in missing.explanation
    copied = _edited(rng, output[40_000:45_000], 20)
    assert check_fact(_fact("present", copied, 50), output).passed is True
    assert check_fact(_fact("absent", copied, 50), output).passed is False
    assert check_fact(_fact("absent", copied, 5), output).passed is True


def test_a_search_beyond_the_bound_is_not_checked_with_the_sizes() -> None:
    rng = random.Random(5)
    output = _text(rng, 1_000_000)
    verdict = check_fact(_fact("present", _text(rng, 5000), 500), output)
    assert verdict.passed is None
    assert verdict.reason.startswith("a present fact of 5,000 characters against a 1,000,000-character output "
                                     "with max_diffs 500 is beyond the fuzzy search's bound")
    verbatim = check_fact(_fact("present", output[500_000:505_000], 500), output)
    assert verbatim.passed is True  # occurring verbatim needs no fuzzy search: always checked
