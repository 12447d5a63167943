"""A fact that could not be checked is not a failed fact (issue 20, B1): without the ``facts`` extra (pykatex,
fuzzysearch), without a browser, or when the check itself breaks, the verdict is ``passed`` None with the reason,
and the summary leaves it out of the headline and says how many and why."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Iterator

import pytest

from pytest_ocrmetrics.metrics.facts import check_fact, model, parse_fact
from pytest_ocrmetrics.metrics.facts.model import FactVerdict
from pytest_ocrmetrics.metrics.facts.summary import facts_summary, headline_text, run_facts

EXPECTED = json.loads((Path(__file__).parent / "expected_verdicts.json").read_text(encoding="utf-8"))


@pytest.fixture
def without_facts_extra(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """pykatex and fuzzysearch cannot be imported (as without ``pytest-ocrmetrics[facts]``); KaTeX renderings
    cached by earlier tests are forgotten."""
    from pytest_ocrmetrics.metrics.facts import equations, math_layout

    monkeypatch.setitem(sys.modules, "pykatex", None)
    monkeypatch.setitem(sys.modules, "fuzzysearch", None)
    equations.render_mathml.cache_clear()
    math_layout.render_spans.cache_clear()
    yield
    equations.render_mathml.cache_clear()
    math_layout.render_spans.cache_clear()


def _fact(**data: object) -> model.Fact:
    return parse_fact({"id": "f", **data}, require_location=False)


def test_an_order_fact_with_max_diffs_without_fuzzysearch_is_not_checked(without_facts_extra: None) -> None:
    verdict = check_fact(_fact(type="order", before="Introduction", after="Conclusion", max_diffs=1),
                         "Introduction ... Conclusion")
    assert verdict.passed is None
    assert verdict.reason == "an order fact with max_diffs > 0 needs fuzzysearch: install pytest-ocrmetrics[facts]"
    assert verdict.explanation == "not checked: " + verdict.reason
    # max_diffs 0 needs no package: a verdict either way
    assert check_fact(_fact(type="order", before="Conclusion", after="Introduction"),
                      "Introduction ... Conclusion").passed is False


def test_a_math_fact_without_pykatex_is_not_checked_unless_the_equation_is_spelled_the_same(
        without_facts_extra: None) -> None:
    fact = _fact(type="math", math="a^{2}+b^{2}=c^{2}")
    assert check_fact(fact, "\\[a^{2}+b^{2}=c^{2}\\]").passed is True  # step 1, exact: no KaTeX needed
    verdict = check_fact(fact, "\\[a^2 + b^2 = c^2\\]")  # only KaTeX can say it is the same equation
    assert verdict.passed is None
    assert verdict.reason == "the KaTeX MathML comparison needs pykatex: install pytest-ocrmetrics[facts]"
    assert verdict.excerpt == "a^2 + b^2 = c^2"  # the closest candidate is still shown
    assert check_fact(fact, "no equation at all").passed is False  # nothing to compare: a verdict


def test_a_check_that_breaks_is_not_checked_not_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(fact: model.Fact, text: str) -> FactVerdict:
        raise KeyError("cell")

    monkeypatch.setitem(model._CHECKS, "table", broken)
    verdict = check_fact(_fact(type="table", cell="5.00"), "| a |\n|---|\n| 5.00 |")
    assert verdict.passed is None and verdict.reason == "the table check raised KeyError: 'cell'"


@pytest.mark.parametrize(("repeats", "passed", "flaky"), [
    ((True, True, None), True, False),  # a majority whatever the third would give
    ((False, False, None), False, False),
    ((True, None, None), None, False),  # the missing two decide
    ((True, False, None), None, True),
    ((None,), None, False),
])
def test_repeats_have_a_verdict_only_when_the_unchecked_ones_cannot_change_it(
        repeats: tuple[bool | None, ...], passed: bool | None, flaky: bool) -> None:
    fact = _fact(type="present", text="x")
    result = model.FactResult(fact, tuple(FactVerdict(p, "" if p else ("not checked: r" if p is None else "no"),
                                                      reason="r" if p is None else "") for p in repeats))
    assert (result.passed, result.flaky) == (passed, flaky)
    record = result.to_dict()
    assert record["passed"] is passed
    assert ("reason" in record, record.get("unchecked", False)) == ((True, True) if passed is None else (False, False))
    if passed is None:
        assert record["reason"] == "r" and "not checked: r" in record["explanation"]


def _facts(verdicts: list[bool | None], reason: str = "install pytest-ocrmetrics[facts]") -> list[dict]:
    return [{"id": f"f{i}", "type": "present", "engine": "e", "dataset": "d", "group": "a.jsonl", "passed": passed,
             **({"unchecked": True, "reason": reason} if passed is None else {})}
            for i, passed in enumerate(verdicts)]


def test_the_headline_leaves_out_what_was_not_checked_and_says_how_many_and_why() -> None:
    [row] = facts_summary(_facts([True] * 104 + [False] * 6 + [None] * 6), resamples=50)
    assert (row["passed"], row["checked"], row["total"], row["unchecked"]) == (104, 110, 116, 6)
    assert row["headline"] == pytest.approx(104 / 110) and row["by_type"] == {"present": pytest.approx(104 / 110)}
    assert row["not_checked"] == {"install pytest-ocrmetrics[facts]": 6}
    assert headline_text(row) == "94.5% over 110 of 116 facts; 6 not checked: install pytest-ocrmetrics[facts]"


def test_a_row_with_nothing_checked_has_no_headline() -> None:
    [row] = facts_summary(_facts([None, None]))
    assert (row["headline"], row["interval"], row["checked"], row["total"]) == (None, None, 0, 2)
    assert headline_text(row) == "no score over 0 of 2 facts; 2 not checked: install pytest-ocrmetrics[facts]"
    from pytest_ocrmetrics.reporting.terminal import facts_lines

    assert facts_lines([row])[0] == ("facts e / d: 0/0 passed; olmOCR-bench score none (mean of per-file pass rates) "
                                     "over 0 of 2 facts; 2 not checked: install pytest-ocrmetrics[facts]")


def test_every_fact_of_the_sample_is_the_benchmarks_verdict_or_not_checked(
        shared_data: Path, without_facts_extra: None) -> None:
    """The olmOCR pipeline's outputs on the olmOCR-bench sample, scored without the facts extra: no verdict differs
    from the benchmark's own scorer's (a fact we could not check is None, never a failure), and the headline is the
    benchmark's over the facts we checked."""
    from pytest_ocrmetrics.datasets import load_dataset
    from pytest_ocrmetrics.engines.replay import ReplayEngine
    from pytest_ocrmetrics.scoring.document import score_document

    root = shared_data / "olmocr_bench_sample"
    if not root.is_dir():
        pytest.skip(f"olmOCR-bench sample not found at {root}")
    engine = ReplayEngine(root / "olmocr_pipeline")
    documents = []
    for document in load_dataset(root):
        score = score_document(document, engine.recognize(document), engine="replay")
        documents.append({"id": document.id, "dataset": "sample", "engine": "replay", "outcome": "passed",
                          "details": score.details})
        checked = [f for f in score.details["facts"] if f["passed"] is not None]
        if checked:
            assert score.metrics["fact_pass_rate"] == sum(f["passed"] for f in checked) / len(checked)
    facts = list(run_facts(documents))
    expected = {e["id"]: e["passed"] for e in EXPECTED["sample"]}
    unchecked = [f for f in facts if f["passed"] is None]
    assert unchecked, "the sample has math facts only KaTeX decides"
    assert all(f["reason"].endswith("install pytest-ocrmetrics[facts]") for f in unchecked)
    assert [f["id"] for f in facts if f["passed"] is not None and f["passed"] != expected[f["id"]]] == []
    [row] = facts_summary(facts, resamples=0)
    assert (row["checked"], row["total"]) == (len(facts) - len(unchecked), len(facts))
    groups: dict[str, list[bool]] = {}
    for f in facts:
        if f["passed"] is not None:
            groups.setdefault(f["group"], []).append(expected[f["id"]])
    assert row["headline"] == pytest.approx(sum(sum(v) / len(v) for v in groups.values()) / len(groups))


def test_a_fact_not_checked_on_either_side_is_no_regression_nor_fix() -> None:
    from pytest_ocrmetrics.gating.facts import fact_changes

    old_doc = {"details": {"facts": [{"id": "a", "type": "math", "passed": True},
                                     {"id": "b", "type": "math", "passed": None},
                                     {"id": "c", "type": "order", "passed": False}]}}
    new = [{"id": "a", "type": "math", "passed": None}, {"id": "b", "type": "math", "passed": False},
           {"id": "c", "type": "order", "passed": True}]
    regressed, fixed = fact_changes("d", "e", "doc", old_doc, new)
    assert regressed == [] and [change.fact for change in fixed] == ["c"]


def test_a_threshold_failure_lists_failed_facts_not_the_ones_not_checked(without_facts_extra: None) -> None:
    from pytest_ocrmetrics.core.documents import Document
    from pytest_ocrmetrics.engines.base import OcrOutput
    from pytest_ocrmetrics.metrics.thresholds import applicable_thresholds
    from pytest_ocrmetrics.scoring.document import score_document
    from pytest_ocrmetrics.scoring.messages import failure_message

    facts = (_fact(type="present", text="Total"), _fact(type="order", before="ab", after="cd", max_diffs=1))
    facts = (facts[0], model.Fact(**{**facts[1].__dict__, "id": "o"}))
    document = Document(id="p", dataset="d", image_path=None, reference_text="x", facts=facts)
    score = score_document(document, OcrOutput(text="nothing"), engine="e")
    assert [f["passed"] for f in score.details["facts"]] == [False, None]
    assert score.metrics["fact_pass_rate"] == 0.0 and score.counts["fact_pass_rate"] == {"passed": 0, "total": 1}
    [threshold] = [t for t in applicable_thresholds(document, {}, {}) if t.metric == "fact_pass_rate"]
    message = failure_message(score, threshold, 0.0)
    assert "fact 'f' (present) failed" in message and "'o'" not in message
