"""Page-level facts in the plugin: every fact is checked in its document's test (relaxed by a threshold), one test
item per fact with ``--ocr-fact-items`` (``-k FACT_ID``), the run file's ``facts`` and ``facts_summary`` (also after
``ocrmetrics merge``), the terminal's facts lines, and facts that passed in the baseline and fail now."""

from __future__ import annotations

import json
import shutil

import pytest

from pytest_ocrmetrics.metrics.facts.summary import summarize_facts
from pytest_ocrmetrics.runfile.merge import merge_runs
from tests.helpers.facts import read_run_file as _run_file
from tests.helpers.facts import run_facts as _run
from tests.helpers.plugin import make_dataset

DOCS = {
    "p1.png": {"full_text": "ACME Invoice\nTotal 5.00", "facts": [
        {"id": "p1-total", "type": "present", "text": "Total 5.00"},
        {"id": "p1-no-header", "type": "absent", "text": "Page 1 of 2"},
    ]},
    "p2.png": {"full_text": "Second page", "facts": [
        {"id": "p2-order", "type": "order", "before": "Second", "after": "page"},
    ]},
    "p3.png": {"full_text": "no facts here"},
}
GOOD = {"p1": "ACME Invoice\nTotal 5.00", "p2": "Second page", "p3": "no facts here"}
BAD = {**GOOD, "p1": "ACME Invoice\nTotal 5.00\nPage 1 of 2"}  # the running footer leaked into the text






def test_a_failing_fact_fails_its_documents_test_by_default(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    make_dataset(pytester.path, DOCS, BAD)
    result = _run(pytester, "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*fact_pass_rate = 0.5, must be >= 1 (from the page's facts, each of which must pass); document 'p1.png'*",
        "*- fact 'p1-no-header' (absent) failed: *Page 1 of 2*",
        "facts replay / invoices: 2/3 passed; olmOCR-bench score 66.7% * (mean of per-file pass rates)",
        "  by type: absent 0.0%, order 100.0%, present 100.0%",
    ])
    run = _run_file(pytester.path / "run.json")
    checks = {d["id"]: d["checks"] for d in run["documents"]}
    assert [c["source"] for c in checks["p1.png"]] == ["page's facts, each of which must pass"]
    assert checks["p3.png"] == []  # no facts, no check


def test_a_threshold_relaxes_the_facts(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path, DOCS, BAD)
    _run(pytester, "--ocr-min=fact_pass_rate:0.5").assert_outcomes(passed=3)
    _run(pytester, "--ocr-min=fact_pass_rate:0.6").assert_outcomes(passed=2, failed=1)


@pytest.mark.xdist_transport
def test_the_run_file_lists_every_fact_and_the_benchmarks_summary(pytester: pytest.Pytester,
                                                                  plugin_args: list[str]) -> None:
    make_dataset(pytester.path, DOCS, BAD)
    _run(pytester, "--ocr-json=run.json", *plugin_args).assert_outcomes(passed=2, failed=1)
    run = _run_file(pytester.path / "run.json")
    facts = {f["id"]: f for f in run["facts"]}
    assert list(facts) == ["p1-total", "p1-no-header", "p2-order"]  # the run's document order, then the page's
    assert {k: facts["p1-no-header"][k] for k in ("type", "document", "dataset", "engine", "passed", "flaky")} == {
        "type": "absent", "document": "p1.png", "dataset": "invoices", "engine": "replay", "passed": False,
        "flaky": False}
    assert facts["p1-no-header"]["repeats"] == [{"passed": False, "explanation": facts["p1-no-header"]["explanation"],
                                                 **({"excerpt": facts["p1-no-header"]["repeats"][0]["excerpt"]}
                                                    if "excerpt" in facts["p1-no-header"]["repeats"][0] else {})}]
    [row] = run["facts_summary"]
    expected = summarize_facts([("facts", "present", True), ("facts", "absent", False), ("facts", "order", True)])
    assert (row["engine"], row["dataset"], row["passed"], row["total"]) == ("replay", "invoices", 2, 3)
    assert row["headline"] == pytest.approx(expected.headline) and row["interval"] == list(expected.interval)
    assert row["by_type"] == {"absent": 0.0, "order": 1.0, "present": 1.0}
    text = (pytester.path / "run.json").read_text(encoding="utf-8")
    assert text.count('\n{"id": "p1-') == 2  # one line per fact (diff-friendly), as documents


def test_no_facts_no_facts_keys(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path)
    _run(pytester, "--ocr-json=run.json")
    run = _run_file(pytester.path / "run.json")
    assert "facts" not in run and "facts_summary" not in run


def test_facts_of_a_document_without_output_count_as_failed(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path, DOCS, {k: v for k, v in GOOD.items() if k != "p2"})  # p2's prediction is missing
    _run(pytester, "--ocr-json=run.json").assert_outcomes(passed=2, errors=1)
    run = _run_file(pytester.path / "run.json")
    unchecked = [f for f in run["facts"] if f.get("unchecked")]
    assert [(f["id"], f["passed"]) for f in unchecked] == [("p2-order", False)]
    assert "no output" in unchecked[0]["explanation"]
    assert run["facts_summary"][0]["passed"] == 2 and run["facts_summary"][0]["unchecked"] == 1


def test_fact_items_select_one_fact_with_k(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    make_dataset(pytester.path, DOCS, BAD)
    result = _run(pytester, "--ocr-fact-items", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["invoices::replay-p1.png", "invoices::replay-p1.png[[]p1-total[]]",
                                 "invoices::replay-p1.png[[]p1-no-header[]]", "invoices::replay-p2.png",
                                 "invoices::replay-p2.png[[]p2-order[]]", "invoices::replay-p3.png"])
    # three document items (the facts are not judged again there) and three fact items: one fact fails
    result = _run(pytester, "--ocr-fact-items", "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(["*fact 'p1-no-header' (absent) failed: *; document 'p1.png' (dataset invoices), "
                                 "engine 'replay'*"])
    run = _run_file(pytester.path / "run.json")
    p1 = next(d for d in run["documents"] if d["id"] == "p1.png")
    assert p1["outcome"] == "failed" and len(p1["tests"]) == 3  # one record per document, every item's node id
    assert p1["counts"]["fact_pass_rate"] == {"passed": 1, "total": 2}
    assert len(run["facts"]) == 3
    result = _run(pytester, "--ocr-fact-items", "-k", "p1-no-header", *plugin_args)
    result.assert_outcomes(failed=1)


def test_fact_items_recognise_each_page_once(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path, DOCS, GOOD)
    pytester.makeconftest("""
        from pytest_ocrmetrics.engines.base import EngineSpec, OcrOutput

        CALLS = []

        class Counting:
            name = "counting"
            cacheable = False
            def identity(self):
                return {"name": "counting"}
            def recognize(self, document):
                CALLS.append(document.id)
                return OcrOutput(text=document.reference_text or "", engine="counting")
            def close(self):
                pass

        def pytest_ocrmetrics_register_engines(registry):
            registry.register(EngineSpec("counting", lambda arg, options: Counting()))

        def pytest_sessionfinish(session):
            print("CALLS", sorted(CALLS))
        """)
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=counting", "--ocr-fact-items", "-s")
    result.assert_outcomes(passed=6)
    assert "CALLS ['p1.png', 'p2.png', 'p3.png']" in result.stdout.str()


@pytest.mark.xdist_transport
def test_a_fact_that_passed_in_the_baseline_and_fails_now_is_a_regression(pytester: pytest.Pytester,
                                                                          plugin_args: list[str]) -> None:
    make_dataset(pytester.path, DOCS, GOOD)
    _run(pytester, "--ocr-json=base.json").assert_outcomes(passed=3)
    shutil.rmtree(pytester.path / "preds")
    make_dataset(pytester.path, DOCS, BAD)
    relaxed = "--ocr-min=fact_pass_rate:0"  # only the baseline judges here
    # with a tolerance on fact_pass_rate and --ocr-document-regressions=fail: the flipped fact fails its document
    # and the session
    result = _run(pytester, "--ocr-baseline=base.json", "--ocr-max-regression=fact_pass_rate:0.6", relaxed,
                  "--ocr-document-regressions=fail", *plugin_args)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*fact 'p1-no-header' (absent) regressed on document 'p1.png' (replay / invoices): passed in the baseline, "
        "fails now: *",
        "1 fact(s) passed in the baseline and fail now, on 1 document(s):",
    ])
    assert result.ret == 1
    # under warn (the default) it is listed; the aggregate (1.0 -> 0.67, within 0.6) decides: passed
    result = _run(pytester, "--ocr-baseline=base.json", "--ocr-max-regression=fact_pass_rate:0.6", relaxed,
                  *plugin_args)
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["1 fact(s) passed in the baseline and fail now, on 1 document(s) "
                                 "(--ocr-document-regressions=warn: listed, not failed):",
                                 "*fact 'p1-no-header' (absent) regressed on document 'p1.png'*"])
    assert result.ret == 0
    # without one: listed, nothing fails
    result = _run(pytester, "--ocr-baseline=base.json", "--ocr-max-regression=cer:1", relaxed, *plugin_args)
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["1 fact(s) passed in the baseline and fail now, on 1 document(s) (no tolerance on "
                                 "fact_pass_rate: shown, not failed):"])
    assert result.ret == 0


def test_fact_items_carry_their_own_regression(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path, DOCS, GOOD)
    _run(pytester, "--ocr-json=base.json").assert_outcomes(passed=3)
    shutil.rmtree(pytester.path / "preds")
    make_dataset(pytester.path, DOCS, BAD)
    result = _run(pytester, "--ocr-fact-items", "--ocr-baseline=base.json", "--ocr-max-regression=fact_pass_rate:0")
    result.assert_outcomes(passed=5, failed=1)  # the fact's item only: the document item leaves facts to them
    result.stdout.fnmatch_lines(["*p1-no-header*regressed on document 'p1.png'*"])


def test_merged_shards_give_the_unsharded_facts(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path, DOCS, BAD)
    _run(pytester, "--ocr-json=all.json")
    for k in (1, 2):
        _run(pytester, f"--ocr-shard={k}/2", f"--ocr-json=shard{k}.json")
    whole = _run_file(pytester.path / "all.json")
    merged = merge_runs([(name, _run_file(pytester.path / name)) for name in ("shard1.json", "shard2.json")])
    assert merged["facts"] == whole["facts"]
    assert merged["facts_summary"] == whole["facts_summary"]


def test_junit_and_markdown_carry_the_facts(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    import xml.etree.ElementTree as ET

    make_dataset(pytester.path, DOCS, GOOD)
    _run(pytester, "--ocr-json=base.json").assert_outcomes(passed=3)
    shutil.rmtree(pytester.path / "preds")
    make_dataset(pytester.path, DOCS, BAD)
    _run(pytester, "--junitxml=out.xml", "--ocr-markdown=summary.md", "--ocr-baseline=base.json",
         "--ocr-max-regression=fact_pass_rate:0", *plugin_args)
    suite = ET.parse(pytester.path / "out.xml").getroot().find("testsuite")
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["ocr.replay.invoices.facts.passed"] == "2" and props["ocr.replay.invoices.facts.total"] == "3"
    assert float(props["ocr.replay.invoices.facts.score"]) == pytest.approx(2 / 3)
    assert props["ocr.replay.invoices.evaluated"] == "3"
    assert props["ocr.baseline.fact_regressions"] == "1" and props["ocr.baseline.fact_fixes"] == "0"
    markdown = (pytester.path / "summary.md").read_text(encoding="utf-8")
    assert "### Page-level facts" in markdown and "| replay / invoices |" in markdown
    assert "`p1-no-header` (absent) on p1.png" in markdown
    assert "**1 fact(s) passed in the baseline and fail now** (listed, not failed):" in markdown


def test_fact_items_with_a_test_function_say_they_do_not_apply(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path, DOCS, GOOD)
    pytester.makepyfile(test_pages="""
        import pytest
        pytestmark = pytest.mark.ocr_dataset("invoices")

        def test_page(ocr_score):
            pass
        """)
    result = pytester.runpytest("--ocr-engine=replay:preds", "--ocr-fact-items", "-p", "no:randomly")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*OcrFactItemsWarning: --ocr-fact-items: test_pages.py::test_page is a test function*"])


def test_hostile_fact_ids_make_printable_items_and_valid_reports(pytester: pytest.Pytester,
                                                                 plugin_args: list[str]) -> None:
    import xml.etree.ElementTree as ET

    hostile = "t\ud800\x1b[31m::\u202eid\n2"
    docs = {"p1.png": {"full_text": "Total 5", "facts": [{"id": hostile, "type": "absent", "text": "Total 5"}]}}
    make_dataset(pytester.path, {"p1.png": {"full_text": "Total 5"}}, {"p1": "Total 5"})
    # the lone surrogate as a JSON escape (as a ground truth written by another tool may hold it)
    (pytester.path / "invoices" / "ground_truth.json").write_text(json.dumps(docs), encoding="utf-8")
    result = _run(pytester, "--ocr-fact-items", "--ocr-json=run.json", "--junitxml=out.xml", "-rf", *plugin_args)
    result.assert_outcomes(passed=1, failed=1)
    output = result.stdout.str()
    assert "\x1b[31m" not in output and "\u202e" not in output
    assert "p1.png[t\\ud800\\x1b[31m::\\u202eid\\n2]" in output  # the item's name, every character visible
    run = _run_file(pytester.path / "run.json")
    assert len(run["facts"]) == 1 and run["facts"][0]["passed"] is False
    cases = ET.parse(pytester.path / "out.xml").getroot().iter("testcase")
    assert sum(1 for case in cases if case.find("failure") is not None) == 1
