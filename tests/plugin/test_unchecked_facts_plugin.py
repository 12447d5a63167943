"""A fact that could not be checked (issue 20, B1) in the plugin: its page's test errors with one sentence (under
``--ocr-fact-items`` the fact's own item), the run file keeps it with ``passed`` null and its reason, the headline
leaves it out and every report says how many and why; with and without xdist (the conftest below blocks the facts
extra in the workers too)."""

from __future__ import annotations

import pytest

from tests.helpers.facts import read_run_file as _run_file
from tests.helpers.facts import run_facts as _run
from tests.helpers.plugin import make_dataset

DOCS = {
    "p1.png": {"full_text": "Introduction then Conclusion", "facts": [
        {"id": "p1-intro", "type": "present", "text": "Introduction"},
        {"id": "p1-order", "type": "order", "before": "Introduction", "after": "Conclusion", "max_diffs": 1},
    ]},
    "p2.png": {"full_text": "Pythagoras", "facts": [{"id": "p2-math", "type": "math", "math": "a^{2}+b^{2}=c^{2}"}]},
    "p3.png": {"full_text": "Euler", "facts": [{"id": "p3-math", "type": "math", "math": "e^{i\\pi}+1=0"}]},
    "p4.png": {"full_text": "no facts here"},
}
PREDICTIONS = {"p1": "Introduction then Conclusion", "p2": "\\[a^2 + b^2 = c^2\\]",  # only KaTeX can accept p2's
               "p3": "\\[e^{i\\pi}+1=0\\]", "p4": "no facts here"}  # p3's is spelled as the reference: no KaTeX needed

# the facts extra is missing in this session and in every xdist worker (a monkeypatch would not reach the workers)
BLOCK_EXTRA = '''
import sys

BLOCKED = ("pykatex", "fuzzysearch")
saved = {}


def pytest_configure(config):
    from pytest_ocrmetrics.metrics.facts import equations, math_layout

    for name in BLOCKED:
        saved[name] = sys.modules.get(name)
        sys.modules[name] = None  # import raises ImportError
    equations.render_mathml.cache_clear()  # renderings cached by an earlier in-process run
    math_layout.render_spans.cache_clear()


def pytest_unconfigure(config):
    from pytest_ocrmetrics.metrics.facts import equations, math_layout

    for name, module in saved.items():
        if module is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = module
    equations.render_mathml.cache_clear()
    math_layout.render_spans.cache_clear()
'''
FUZZY = "an order fact with max_diffs > 0 needs fuzzysearch: install pytest-ocrmetrics[facts]"
KATEX = "the KaTeX MathML comparison needs pykatex: install pytest-ocrmetrics[facts]"


def _glob(text: str) -> str:
    """``text`` as an fnmatch pattern that matches itself (its brackets escaped)."""
    return "".join({"[": "[[]", "]": "[]]"}.get(char, char) for char in text)


def _setup(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path, DOCS, PREDICTIONS)
    pytester.makeconftest(BLOCK_EXTRA)


@pytest.mark.xdist_transport
def test_a_page_with_a_fact_not_checked_errors_and_the_headline_leaves_it_out(pytester: pytest.Pytester,
                                                                            plugin_args: list[str]) -> None:
    _setup(pytester)
    result = _run(pytester, "--ocr-json=run.json", "--junitxml=out.xml", "--ocr-markdown=run.md",
                  "--ocr-html=run.html", *plugin_args)
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines([
        f"1 of 2 facts of 'p1.png' (replay) could not be checked, so this test has no verdict: fact 'p1-order' "
        f"(order): {_glob(FUZZY)}",
        f"fact 'p2-math' (math) of 'p2.png' (replay) could not be checked, so this test has no verdict: {_glob(KATEX)}",
        "facts replay / invoices: 2/2 passed; olmOCR-bench score 100.0% * (mean of per-file pass rates) over 2 of 4 "
        f"facts; 2 not checked: {_glob(FUZZY)} (1); {_glob(KATEX)} (1)",
    ])
    run = _run_file(pytester.path / "run.json")
    documents = {d["id"]: d for d in run["documents"]}
    assert {k: d["outcome"] for k, d in documents.items()} == {
        "p1.png": "error", "p2.png": "error", "p3.png": "passed", "p4.png": "passed"}
    assert "could not be checked, so this test has no verdict" in documents["p2.png"]["message"]
    facts = {f["id"]: f for f in run["facts"]}
    assert {k: f["passed"] for k, f in facts.items()} == {
        "p1-intro": True, "p1-order": None, "p2-math": None, "p3-math": True}
    assert (facts["p1-order"]["reason"], facts["p2-math"]["reason"]) == (FUZZY, KATEX)
    assert facts["p2-math"]["explanation"] == f"not checked: {KATEX}" and facts["p2-math"]["unchecked"] is True
    [row] = run["facts_summary"]
    assert (row["passed"], row["checked"], row["total"], row["headline"]) == (2, 2, 4, 1.0)
    assert row["not_checked"] == {FUZZY: 1, KATEX: 1}
    junit = (pytester.path / "out.xml").read_text(encoding="utf-8")
    assert '"ocr.replay.invoices.facts.checked" value="2"' in junit
    assert '"ocr.replay.invoices.facts.total" value="4"' in junit
    assert '"ocr.replay.invoices.facts.score" value="1.0"' in junit
    markdown = (pytester.path / "run.md").read_text(encoding="utf-8")
    assert "over 2 of 4 facts; 2 not checked" in markdown and "failing fact" not in markdown
    page = (pytester.path / "run.html").read_text(encoding="utf-8")
    assert "over 2 of 4 facts; 2 not checked" in page
    assert '<span class="badge unchecked">not checked</span>' in page and "(4: 2 passed, 0 failed, 2 not checked)" \
        in page


def test_under_fact_items_the_facts_own_item_errors(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    _setup(pytester)
    result = _run(pytester, "--ocr-fact-items", "--ocr-json=run.json", "-rE", *plugin_args)
    # page items: p1..p4 pass (their facts are judged by the fact items); fact items: p1-intro and p3-math pass
    result.assert_outcomes(passed=6, errors=2)
    result.stdout.fnmatch_lines([f"fact 'p1-order' (order) of 'p1.png' (replay) could not be checked, so this test has "
                                 f"no verdict: {_glob(FUZZY)}"])
    for line in ("ERROR *p1.png?p1-order?*", "ERROR *p2.png?p2-math?*"):  # in any order: xdist finishes either first
        result.stdout.fnmatch_lines([line])
    run = _run_file(pytester.path / "run.json")
    assert {f["id"]: f["passed"] for f in run["facts"]} == {
        "p1-intro": True, "p1-order": None, "p2-math": None, "p3-math": True}


def test_a_test_function_whose_page_has_a_fact_not_checked_errors(pytester: pytest.Pytester) -> None:
    _setup(pytester)
    pytester.makepyfile(test_pages="""
        import pytest

        @pytest.mark.ocr_dataset("invoices")
        def test_page(ocr_score):
            pass
    """)
    result = pytester.runpytest("--ocr-engine=replay:preds", "-p", "no:randomly", "-rE")
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines(["*fact 'p2-math' (math) of 'p2.png' (replay) could not be checked, so this test has "
                                 f"no verdict: {_glob(KATEX)}", "ERROR *p2.png*"])


def test_with_the_facts_extra_the_same_pages_get_verdicts(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pykatex")
    pytest.importorskip("fuzzysearch")
    make_dataset(pytester.path, DOCS, PREDICTIONS)
    _run(pytester, "--ocr-json=run.json").assert_outcomes(passed=4)
    run = _run_file(pytester.path / "run.json")
    assert all(f["passed"] is True for f in run["facts"]) and "not_checked" not in run["facts_summary"][0]
