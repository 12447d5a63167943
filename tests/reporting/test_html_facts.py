"""Page-level facts in the HTML report (the run's ``facts`` and ``facts_summary``), and the output excerpt each verdict
carries (``FactVerdict.excerpt``): where the check looked, bounded, for the HTML view and the run file."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from ocr_run_factory import make_doc, make_run

from pytest_ocrmetrics.core.safe_text import sanitize_run
from pytest_ocrmetrics.metrics.facts import check_fact, check_repeats, parse_fact
from pytest_ocrmetrics.metrics.facts.model import EXCERPT_CHARS, excerpt_of
from pytest_ocrmetrics.reporting.html import MAX_FACT_TEXT, render_html, write_html
from tests.helpers.html import Page
from tests.helpers.plugin import make_dataset

XSS = "</script><script>alert(1)</script>"


def fact(fact_id: str, kind: str = "present", *, passed: bool = True, document: str = "p1.png", engine: str = "olmocr",
         dataset: str = "bench", explanation: str = "", excerpt: str = "", repeats: list[bool] | None = None,
         group: str = "a.jsonl", **extra: Any) -> dict[str, Any]:
    """One entry of a run's top-level ``facts``, as the run file has it."""
    repeats = [passed] if repeats is None else repeats
    return {"id": fact_id, "type": kind, "document": document, "dataset": dataset, "engine": engine, "passed": passed,
            "flaky": 0 < sum(repeats) < len(repeats), "explanation": explanation, "excerpt": excerpt,
            "repeats": [{"passed": p, "explanation": "" if p else explanation, "excerpt": excerpt} for p in repeats],
            "group": group, "source": f"{group}:1", **extra}


def facts_run(facts: list[dict[str, Any]], summary: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    run = make_run([make_doc("p1.png", {"cer": 0.1}, dataset="bench", engine="olmocr"),
                    make_doc("p2.png", {"cer": 0.4}, dataset="bench", engine="olmocr", outcome="failed")])
    run["facts"] = facts
    run["facts_summary"] = summary if summary is not None else [{
        "engine": "olmocr", "dataset": "bench", "headline": 0.828, "interval": [0.778, 0.879],
        "by_type": {"present": 0.75, "order": 0.5}, "by_group": {"a.jsonl": 0.6667, "baseline": 1.0},
        "passed": 3, "total": 5, "flaky": 1}]
    return run


FACTS = [
    fact("hdr-gone", "absent", passed=True, excerpt="body text"),
    fact("total", "present", passed=False, document="p2.png", explanation="Expected 'Total 12.50...' best 0.900",
         excerpt="…Subtotal 10.00 Total 12.S0 Thank you…"),
    fact("flaky-one", "present", passed=True, repeats=[True, False, True], explanation="Expected 'x'"),
    fact("reading-order", "order", passed=False, explanation="Could not find a location", excerpt="B then A"),
    fact("p1_baseline", "baseline", passed=True, group="baseline"),
]


def _rows(page: str) -> list[tuple[str, str, str]]:
    """(fact id, data-verdict, data-type) of each row of the facts table, in order."""
    table = page.split('id="facts-table"', 1)[1]
    pattern = r'<tr data-type="([^"]*)" data-verdict="([^"]*)">.*?<td class="fact-id"[^>]*>([^<]*)</td>'
    return [(fact_id, verdict, kind) for kind, verdict, fact_id in re.findall(pattern, table, re.DOTALL)]


# -- the excerpt of a verdict ----------------------------------------------------------------------------------------
def _fact(**data: Any) -> Any:
    return parse_fact({"id": "f", **data}, require_location=False)


def test_present_failure_excerpt_is_the_best_matching_window_with_context() -> None:
    output = "filler " * 200 + "Subtotal 10.00 Total 12.S0 Thank you " + "more filler " * 200
    verdict = check_fact(_fact(type="present", text="Total 12.50"), output)
    assert not verdict.passed
    assert "Subtotal 10.00 Total 12.S0 Thank you" in verdict.excerpt  # the best match, with context either side
    assert verdict.excerpt.startswith("…") and verdict.excerpt.endswith("…")
    assert len(verdict.excerpt) <= EXCERPT_CHARS + 2
    passing = check_fact(_fact(type="present", text="Total 12.S0"), output)
    assert passing.passed and "Total 12.S0" in passing.excerpt  # where it was found


def test_absent_failure_excerpt_shows_the_text_that_should_not_be_there() -> None:
    output = "Body of the page.\n\nPage 3 of 9\n\nMore body."
    verdict = check_fact(_fact(type="absent", text="Page 3 of 9"), output)
    assert not verdict.passed
    assert verdict.excerpt == "Body of the page. Page 3 of 9 More body."  # normalized, as searched; short: whole


def test_case_insensitive_excerpt_keeps_the_outputs_case() -> None:
    verdict = check_fact(_fact(type="absent", text="page 3 OF 9", case_sensitive=False), "Body. PAGE 3 of 9. End")
    assert not verdict.passed and "PAGE 3 of 9" in verdict.excerpt


def test_empty_output_has_no_excerpt() -> None:
    assert check_fact(_fact(type="present", text="x"), "").excerpt == ""
    assert check_fact(_fact(type="present", text="x"), "  \n").excerpt == ""


def test_order_failure_excerpt_is_the_region_of_both_matches() -> None:
    verdict = check_fact(_fact(type="order", before="Chapter One", after="Chapter Two"),
                         "Intro. Chapter Two starts here. Chapter One ends. Outro.")
    assert not verdict.passed
    assert "Chapter Two starts here. Chapter One" in verdict.excerpt
    far = check_fact(_fact(type="order", before="Chapter One", after="Chapter Two"),
                     "Chapter Two" + " words" * 500 + " Chapter One" + " tail" * 100)
    assert not far.passed  # far apart: each match with its context, joined by an ellipsis, still bounded
    assert far.excerpt.startswith("Chapter Two") and " … " in far.excerpt and "Chapter One" in far.excerpt
    assert len(far.excerpt) <= EXCERPT_CHARS + 4
    missing = check_fact(_fact(type="order", before="Alpha", after="Omega"), "Alpha and beta")
    assert not missing.passed and "Alpha" in missing.excerpt  # 'after' not found: where 'before' is


def test_table_math_and_baseline_excerpts() -> None:
    table = "| Year | Sales |\n|---|---|\n| 2023 | 1,136 |\n| 2024 | 1,200 |"
    verdict = check_fact(_fact(type="table", cell="1,136", left="2024"), table)
    assert not verdict.passed
    assert verdict.excerpt == "| Year | Sales |\n| 2023 | 1,136 |\n| 2024 | 1,200 |"  # the cell and its neighbour rows
    assert check_fact(_fact(type="table", cell="x"), "no table here").excerpt == ""
    math = check_fact(_fact(type="math", math="a^{2}+b^{2}=c^{2}"), r"Text \(x+y\) and \(a^{2}+b^{2}=d^{2}\)")
    assert not math.passed and math.excerpt == "a^{2}+b^{2}=d^{2}"  # the closest candidate equation
    repeated = check_fact(_fact(type="baseline"), "Intro " + "la " * 400)
    assert not repeated.passed and repeated.excerpt.endswith("la ") and repeated.excerpt.startswith("…")
    assert check_fact(_fact(type="baseline"), "A normal page.").excerpt == ""
    bold = check_fact(_fact(type="format", text="Net income", format="bold"), "**Gross income** and Net income")
    assert not bold.passed and bold.excerpt == "Gross income"  # the closest bold text
    footnote = check_fact(_fact(type="footnote", marker="1", appears_after_marker="See the annex"),
                          "Body text[^1] continues. [^1]: Another note")
    assert not footnote.passed and footnote.excerpt == "Body text[^1] continues. [^1]: Another note"


def test_a_fact_result_reports_the_first_failing_repeats_excerpt() -> None:
    present = _fact(type="present", text="Total 12.50")
    result = check_repeats(present, ["Total 12.50", "Total 99.99 due", "Total 12.S0"])
    data = result.to_dict()
    assert data["passed"] is False and data["flaky"] is True
    assert "Total 99.99" in data["excerpt"]  # the first failing repeat's, the one the explanation speaks of
    assert [r["excerpt"] for r in data["repeats"]] == ["Total 12.50", "Total 99.99 due", "Total 12.S0"]
    assert check_repeats(present, ["x Total 12.50 y"]).to_dict()["excerpt"] == "x Total 12.50 y"


def test_excerpt_of_a_huge_hostile_output_is_bounded() -> None:
    output = "\x00\ud800" * 300_000 + " Total 12.50 " + "\u202e" * 300_000
    verdict = check_fact(_fact(type="present", text="Total 12.50"), output)
    assert verdict.passed and "Total 12.50" in verdict.excerpt and len(verdict.excerpt) <= EXCERPT_CHARS + 2
    assert excerpt_of("abc", 5, 1) == "abc"  # out-of-range offsets are clamped


# -- the HTML view ---------------------------------------------------------------------------------------------------
def test_no_facts_no_section() -> None:
    page = render_html(make_run([make_doc("a.png", {"cer": 0.1})]))
    assert 'id="facts"' not in page and "facts-table" not in page


def test_the_section_shows_the_headline_rates_and_counts() -> None:
    text = render_html(facts_run(FACTS))
    page = Page(text)
    assert page.text("facts").startswith("Facts (5: 3 passed, 2 failed, 1 flaky)")
    summary = page.text("facts-summary-table")
    assert "82.8%" in summary and "77.8% .. 87.9%" in summary
    assert re.search(r"olmocr.*bench.*82\.8%.*77\.8% \.\. 87\.9%.*3.*5.*1", summary)
    by_type = page.text("facts-by-type-table")
    assert "order50.0%" in by_type and "present75.0%" in by_type
    by_group = page.text("facts-by-group-table")
    assert "a.jsonl66.7%" in by_group and "baseline100.0%" in by_group


def test_every_fact_is_listed_failing_first_with_its_explanation_and_excerpt() -> None:
    text = render_html(facts_run(FACTS))
    rows = _rows(text)
    assert rows == [("total", "failed", "present"), ("reading-order", "failed", "order"),
                    ("flaky-one", "passed flaky", "present"), ("hdr-gone", "passed", "absent"),
                    ("p1_baseline", "passed", "baseline")]
    table = Page(text).text("facts-table")
    assert "Expected 'Total 12.50...' best 0.900" in table and "…Subtotal 10.00 Total 12.S0 Thank you…" in table
    assert "flaky 2/3" in table
    assert 'title="repeat 1: passed · repeat 2: failed · repeat 3: passed"' in text
    assert 'hidden' not in text.split('id="facts-table"', 1)[1].split("</table>", 1)[0]  # no JS: everything visible
    # the document links to its detail view (p2 is the worst document: #doc-1)
    assert '<a class="doc-link" href="#doc-1">p2.png</a>' in text


def test_the_fact_table_is_bounded_with_a_note() -> None:
    many = [fact(f"f{i:04d}", passed=i % 2 == 0, explanation="x") for i in range(25)]
    text = render_html(facts_run(many), max_fact_rows=10)
    rows = _rows(text)
    assert len(rows) == 10 and all(verdict == "failed" for _, verdict, _ in rows)  # failing first
    assert "Only the first 10 of 25 facts are listed here (failing first); 15 more are in the JSON run file" in text


def test_hostile_fact_text_is_escaped_and_bounded(tmp_path: Path) -> None:
    huge = "A" * 1_000_000
    hostile = [
        fact(XSS, XSS, passed=False, document=XSS, engine=XSS, dataset=XSS, explanation=XSS + "\x00\x1b[31m\u202e",
             excerpt="\x07" + XSS + "\ud800", group=XSS, notes=[XSS]),
        fact("huge", passed=False, explanation=huge, excerpt=huge),
    ]
    summary = [{"engine": XSS, "dataset": XSS, "headline": 0.5, "interval": [0.25, 0.75], "by_type": {XSS: 0.5},
                "by_group": {XSS: 0.5}, "passed": 1, "total": 2, "flaky": 0}]
    run = facts_run(hostile, summary)
    text = render_html(run)
    assert "<script>alert(1)" not in text and "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in text
    for raw in ("\x00", "\x1b", "\x07", "\u202e"):
        assert raw not in text
    assert "␀␛[31m⟨RLO⟩" in text and "␇" in text
    assert len(text) < 100_000  # a megabyte explanation and excerpt are cut
    assert f"({1_000_000 - MAX_FACT_TEXT} more characters)" in text
    page = Page(text)
    assert len(page.find("script")) == 1  # only the report's own
    written = write_html(sanitize_run(run), tmp_path / "report.html")  # lone surrogate: written as U+FFFD
    assert "\ufffd" in written.read_text(encoding="utf-8")


@pytest.mark.parametrize(("facts", "summary"), [
    ("not a list", "nor this"),
    ([1, None, "x", {"id": None}], [None, {"headline": "x", "interval": ["a"], "by_type": [], "by_group": None}]),
    ([{"id": "r", "type": "present", "passed": "yes", "repeats": "no", "notes": "n", "flaky": True}],
     [{"headline": float("nan"), "interval": None, "passed": True, "total": -1}]),
])
def test_malformed_facts_do_not_break_the_report(facts: Any, summary: Any) -> None:
    run = make_run([make_doc("a.png", {"cer": 0.1})])
    run["facts"], run["facts_summary"] = facts, summary
    page = render_html(run)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")


def test_empty_facts_and_summary_show_no_section() -> None:
    run = make_run([make_doc("a.png", {"cer": 0.1})])
    run["facts"], run["facts_summary"] = [], []
    assert 'id="facts"' not in render_html(run)


# -- in a browser ----------------------------------------------------------------------------------------------------
def _visible_ids(page: Any) -> list[str]:
    return page.eval_on_selector_all("#facts-table tbody tr", "rows => rows.filter(r => !r.hidden)"
                                     ".map(r => r.querySelector('td.fact-id').textContent)")


def test_filter_by_type_and_verdict_in_a_browser(browser: Any, tmp_path: Path) -> None:
    path = write_html(facts_run(FACTS), tmp_path / "report.html")
    context = browser.new_context()
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    try:
        page.goto(path.as_uri())
        every = ["total", "reading-order", "flaky-one", "hdr-gone", "p1_baseline"]
        assert _visible_ids(page) == every
        page.select_option('select.row-select[data-attr="verdict"]', "failed")
        assert _visible_ids(page) == ["total", "reading-order"]
        assert page.text_content('.row-count[data-table="facts-table"]') == "2 of 5 shown"
        page.select_option('select.row-select[data-attr="type"]', "present")
        assert _visible_ids(page) == ["total"]
        page.select_option('select.row-select[data-attr="verdict"]', "flaky")
        assert _visible_ids(page) == ["flaky-one"]
        page.select_option('select.row-select[data-attr="verdict"]', "passed")
        assert _visible_ids(page) == ["flaky-one"]  # flaky ones that passed are passed too
        page.select_option('select.row-select[data-attr="type"]', "")
        assert _visible_ids(page) == ["flaky-one", "hdr-gone", "p1_baseline"]
        page.fill('input.row-filter[data-table="facts-table"]', "baseline")  # text and selects together
        assert _visible_ids(page) == ["p1_baseline"]
        page.fill('input.row-filter[data-table="facts-table"]', "")
        page.select_option('select.row-select[data-attr="verdict"]', "")
        assert _visible_ids(page) == every and page.text_content('.row-count[data-table="facts-table"]') == ""
        assert not problems
    finally:
        context.close()
    no_script = browser.new_context(java_script_enabled=False)
    try:
        page = no_script.new_page()
        page.goto(path.as_uri())
        assert _visible_ids(page) == every  # without JavaScript every fact is shown
    finally:
        no_script.close()


# -- through the plugin ----------------------------------------------------------------------------------------------
@pytest.mark.xdist_transport
def test_facts_from_a_ground_truth_reach_the_run_file_and_the_html(pytester: pytest.Pytester,
                                                                    plugin_args: list[str]) -> None:
    docs = {
        "receipt.png": {"full_text": "Subtotal 10.00 Total 12.50", "facts": [
            {"id": "total", "type": "present", "text": "Total 12.50"},
            {"id": "no-header", "type": "absent", "text": "ACME Corp"},
            {"id": "subtotal-first", "type": "order", "before": "Subtotal", "after": "Total"}]},
        "plain.png": {"full_text": "Hello world"},
    }
    make_dataset(pytester.path, docs, {"receipt": "ACME Corp\nSubtotal 10.00 Total 12.S0 Thanks",
                                       "plain": "Hello world"})
    pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-json=run.json",
                       "--ocr-html=report.html", "-p", "no:randomly", *plugin_args)
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    record = next(d for d in run["documents"] if d["id"] == "receipt.png")
    by_id = {f["id"]: f for f in record["details"]["facts"]}
    assert by_id["total"]["passed"] is False and "Total 12.S0" in by_id["total"]["excerpt"]
    assert by_id["no-header"]["passed"] is False and "ACME Corp" in by_id["no-header"]["excerpt"]
    assert by_id["subtotal-first"]["passed"] is True
    # the run's top-level facts (one per fact per engine) and the HTML facts view made from them
    assert sorted((f["id"], f["passed"]) for f in run["facts"]) == [
        ("no-header", False), ("subtotal-first", True), ("total", False)]
    assert {f["document"] for f in run["facts"]} == {"receipt.png"}
    assert [(r["passed"], r["total"]) for r in run["facts_summary"]] == [(1, 3)]
    text = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert [(fact_id, verdict) for fact_id, verdict, _ in _rows(text)] == [
        ("total", "failed"), ("no-header", "failed"), ("subtotal-first", "passed")]
    assert "Facts (3: 1 passed, 2 failed)" in Page(text).text("facts")
    assert "Subtotal 10.00 Total 12.S0 Thanks" in Page(text).text("facts-table")
