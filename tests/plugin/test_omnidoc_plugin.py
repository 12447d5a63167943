"""OmniDocBench pages through whole pytest runs: one test per page with the six page metrics, thresholds (command line
and marker) that leave pages without the element alone, a gate, a baseline regression, JUnit properties, the
terminal's OmniDocBench line, the HTML view of matched blocks, sharding merged equal to the unsharded run, with and
without xdist; and the demo ground truth with its own Markdown (``gt_md``) as the candidate.

Expected values come from :func:`pytest_ocrmetrics.metrics.omnidoc.score_page` itself (the metric core is tested on
its own), except where a prediction equals the ground truth: edit distance 0 and TEDS 1.0."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pytest_ocrmetrics.cli import main
from pytest_ocrmetrics.gating import validate_run
from pytest_ocrmetrics.metrics.omnidoc import OMNIDOC_METRICS, score_page
from pytest_ocrmetrics.runfile.sharding import shard_index

# The metric core's packages (numpy under scipy cannot be imported twice in one process) are imported here, before
# pytester's in-process runs snapshot sys.modules and drop what the inner run imported.
for _module in ("scipy.optimize", "lxml.html", "apted", "pylatexenc.latex2text"):
    pytest.importorskip(_module, reason="the omnidoc extra: pip install -e '.[omnidoc]'")

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / ".." / "shared" / "data" / "acceptance" / "omnidocbench"
BASE = ["--ocr-dataset=pages", "--ocr-engine=replay:preds", "--ocr-no-cache", "-p", "no:randomly"]

TABLE = "<table><tr><td>Year</td><td>Sales</td></tr><tr><td>2023</td><td>1200</td></tr></table>"


def _det(category: str, order: int | None, **content: Any) -> dict[str, Any]:
    return {"category_type": category, "order": order, "ignore": False, "poly": [0, 0, 1, 0, 1, 1, 0, 1], **content}


PAGES: dict[str, dict[str, Any]] = {
    "report.pdf_1.jpg": {"attributes": {"language": "english", "layout": "single_column"}, "dets": [
        _det("title", 1, text="Annual results"),
        _det("text_block", 2, text="Sales grew in every region during the year."),
        _det("table", 3, html=TABLE),
        _det("page_number", None, text="1"),
    ]},
    "letter_2.jpg": {"attributes": {"language": "english", "layout": "double_column"}, "dets": [
        _det("text_block", 1, text="Dear reader, thank you for your letter."),
        _det("text_block", 2, text="We will answer every question in the next issue."),
    ]},
    "notes_3.jpg": {"attributes": {"language": "simplified_chinese", "layout": "single_column"}, "dets": [
        _det("text_block", 1, text="能量与质量的关系如下。"),
        _det("equation_isolated", 2, latex="E = m c^{2}"),
    ]},
}
GOOD = {
    "report.pdf_1": f"# Annual results\n\nSales grew in every region during the year.\n\n{TABLE}",
    "letter_2": "Dear reader, thank you for your letter.\n\nWe will answer every question in the next issue.",
    "notes_3": "能量与质量的关系如下。\n\n$$\nE = m c^{2}\n$$",
}
BAD_LETTER = "Lorem ipsum dolor sit amet, consectetur adipiscing elit."


def page_object(image: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"layout_dets": spec["dets"], "extra": {"relation": []},
            "page_info": {"image_path": image, "page_no": 0, "width": 100, "height": 100,
                          "page_attribute": spec["attributes"]}}


def make_pages(root: Path, predictions: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """``root/pages/OmniDocBench.json`` (no images: replay needs none) and ``root/preds/<stem>.md``; the page
    objects by id."""
    objects = {image: page_object(image, spec) for image, spec in PAGES.items()}
    (root / "pages").mkdir(exist_ok=True)
    (root / "pages" / "OmniDocBench.json").write_text(json.dumps(list(objects.values()), ensure_ascii=False),
                                                      encoding="utf-8")
    write_predictions(root, GOOD if predictions is None else predictions)
    return objects


def write_predictions(root: Path, predictions: dict[str, str]) -> None:
    (root / "preds").mkdir(exist_ok=True)
    for stem, text in predictions.items():
        (root / "preds" / f"{stem}.md").write_text(text, encoding="utf-8")


def expected(objects: dict[str, dict[str, Any]], predictions: dict[str, str]) -> dict[str, dict[str, float]]:
    """Each page's metrics as the core scores them (None values left out: the page has no such element)."""
    result = {}
    for image, page in objects.items():
        values = score_page(page, predictions[Path(image).stem]).as_dict()
        result[image] = {name: value for name, value in values.items() if value is not None}
    return result


def run_file(path: Path) -> dict[str, Any]:
    run = json.loads(path.read_text(encoding="utf-8"))
    validate_run(run, str(path))
    return run


def test_each_page_is_a_test_scored_with_the_page_metrics(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    objects = make_pages(pytester.path)
    result = pytester.runpytest(*BASE, "--ocr-json=run.json", "--junitxml=out.xml", "--ocr-markdown=run.md",
                                *plugin_args)
    result.assert_outcomes(passed=3)
    run = run_file(pytester.path / "run.json")
    assert "### OmniDocBench" in (pytester.path / "run.md").read_text(encoding="utf-8")
    want = expected(objects, GOOD)
    got = {doc["id"]: doc["metrics"] for doc in run["documents"]}
    assert got.keys() == want.keys() and all(got[k] == pytest.approx(want[k]) for k in want)
    assert "table_teds" not in got["letter_2.jpg"] and "formula_edit" not in got["report.pdf_1.jpg"]  # no value, not 0
    [row] = run["summary"]
    assert row["evaluated"] == 3 and row["metrics"]["table_teds"]["n"] == 1  # counted; the mean over pages with one
    assert row["metrics"]["text_block_edit"]["mean"] == pytest.approx(
        sum(v["text_block_edit"] for v in want.values()) / 3)
    tags = {tag["tag"] for tag in run["summary_by_tag"]}
    assert {"language:english", "language:simplified_chinese", "layout:double_column"} <= tags
    result.stdout.fnmatch_lines([("OmniDocBench replay / pages: text edit * (3 pages); reading order edit * (3); "
                                  "table TEDS *, TEDS-S *, edit * (1 page with tables); formula edit * (1 page with "
                                  "display formulas); 3 pages evaluated")])
    # JUnit: per page and per engine x dataset, named from the registry
    root = ET.parse(pytester.path / "out.xml").getroot()
    properties = {p.get("name") for p in root.iter("property")}
    assert {"ocr.replay.pages.table_teds", "ocr.replay.pages.text_block_edit"} <= properties
    letter = next(case for case in root.iter("testcase") if case.get("name") == "replay-letter_2.jpg")
    letter_properties = {p.get("name") for p in letter.iter("property")}
    assert "ocr.text_block_edit" in letter_properties and "ocr.table_teds" not in letter_properties


def test_a_threshold_fails_the_pages_past_it_and_leaves_pages_without_the_element_alone(
        pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    predictions = {**GOOD, "letter_2": BAD_LETTER}
    objects = make_pages(pytester.path, predictions)
    values = {image: v["text_block_edit"] for image, v in expected(objects, predictions).items()}
    assert values["letter_2.jpg"] > max(values["report.pdf_1.jpg"], values["notes_3.jpg"])
    limit = (values["letter_2.jpg"] + max(values["report.pdf_1.jpg"], values["notes_3.jpg"])) / 2
    result = pytester.runpytest(*BASE, f"--ocr-max=text_block_edit:{limit:.6f}", "--ocr-min=table_teds:0",
                                "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([f"*text_block_edit = *, must be <= {limit:.6g}*document 'letter_2.jpg'*"])
    assert "could not be checked" not in result.stdout.str()  # two pages have no table: not unchecked, not failed
    run = run_file(pytester.path / "run.json")
    assert "unchecked_thresholds" not in run
    checks = {doc["id"]: sorted(c["metric"] for c in doc["checks"]) for doc in run["documents"]}
    assert checks == {"letter_2.jpg": ["text_block_edit"], "notes_3.jpg": ["text_block_edit"],
                      "report.pdf_1.jpg": ["table_teds", "text_block_edit"]}


def test_a_marker_threshold_applies_to_the_pages(pytester: pytest.Pytester) -> None:
    predictions = {**GOOD, "letter_2": BAD_LETTER}
    objects = make_pages(pytester.path, predictions)
    values = {image: v["text_block_edit"] for image, v in expected(objects, predictions).items()}
    limit = (values["letter_2.jpg"] + max(values["report.pdf_1.jpg"], values["notes_3.jpg"])) / 2
    pytester.makepyfile(test_pages=f"""
        import pytest
        pytestmark = pytest.mark.ocr_dataset("pages")

        @pytest.mark.ocr_thresholds(text_block_edit={limit!r}, table_teds=0.0)
        def test_page(ocr_score):
            pass
        """)
    result = pytester.runpytest("--ocr-engine=replay:preds", "--ocr-no-cache", "-p", "no:randomly", "test_pages.py")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*FAILED test_pages.py::test_page*letter_2.jpg*"])


def test_a_gate_on_table_teds(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    objects = make_pages(pytester.path)
    without_table = {**GOOD, "report.pdf_1": "# Annual results\n\nSales grew in every region during the year."}
    good = expected(objects, GOOD)["report.pdf_1.jpg"]["table_teds"]
    bad = expected(objects, without_table)["report.pdf_1.jpg"]["table_teds"]
    assert bad < good
    gate = f"--ocr-gate=table_teds>={(good + bad) / 2:.6f}"
    assert pytester.runpytest(*BASE, gate, *plugin_args).ret == pytest.ExitCode.OK
    write_predictions(pytester.path, without_table)
    result = pytester.runpytest(*BASE, gate, *plugin_args)
    result.assert_outcomes(passed=3)  # the gate fails the session, not a page
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*gate table_teds>=* FAILED for replay / pages: micro table_teds = * (n=1)*"])


def test_a_wrong_way_gate_on_an_edit_distance_is_refused(pytester: pytest.Pytester) -> None:
    make_pages(pytester.path)
    assert pytester.runpytest(*BASE, "--ocr-gate=text_block_edit>=0.1").ret == pytest.ExitCode.USAGE_ERROR


def test_a_baseline_regression_on_a_page_metric_fails_that_page(pytester: pytest.Pytester,
                                                                 plugin_args: list[str]) -> None:
    objects = make_pages(pytester.path)
    assert pytester.runpytest(*BASE, "--ocr-json=base.json").ret == pytest.ExitCode.OK
    regressed = {**GOOD, "letter_2": BAD_LETTER}
    assert (expected(objects, regressed)["letter_2.jpg"]["text_block_edit"]
            > expected(objects, GOOD)["letter_2.jpg"]["text_block_edit"] + 0.01)
    write_predictions(pytester.path, regressed)
    result = pytester.runpytest(*BASE, "--ocr-baseline=base.json", "--ocr-max-regression=text_block_edit:0.01",
                                "--ocr-document-regressions=fail", *plugin_args)
    result.assert_outcomes(passed=2, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*text_block_edit regressed on document 'letter_2.jpg'*",
                                 "REGRESSION text_block_edit regressed for replay / pages:*"])


def test_two_shards_merged_equal_the_unsharded_run(pytester: pytest.Pytester) -> None:
    make_pages(pytester.path, {**GOOD, "letter_2": BAD_LETTER})
    settings = ["--ocr-seed=5", "--ocr-bootstrap=200", "--ocr-max=text_block_edit:0.3"]
    base = ["--ocr-dataset=bench=pages", *BASE[1:]]  # named so that both shards hold pages
    pytester.runpytest(*base, "--ocr-json=whole.json", *settings)
    whole = run_file(pytester.path / "whole.json")
    assert {shard_index("bench", image, 2) for image in PAGES} == {1, 2}  # both shards hold pages
    for index, xdist in ((1, ["-n", "2"]), (2, [])):
        pytester.runpytest(*base, f"--ocr-json=s{index}.json", f"--ocr-shard={index}/2", *settings, *xdist)
    assert main(["merge", str(pytester.path / "s1.json"), str(pytester.path / "s2.json"),
                 "-o", str(pytester.path / "merged.json")]) == 0
    merged = run_file(pytester.path / "merged.json")

    def comparable(run: dict[str, Any]) -> dict[str, Any]:
        return {**{k: v for k, v in run.items() if k != "created"},
                "documents": [{k: v for k, v in doc.items() if k != "elapsed_s"} for doc in run["documents"]]}

    assert merged["summary"] == whole["summary"] and merged["summary_by_tag"] == whole["summary_by_tag"]
    assert comparable(merged) == comparable(whole)


def test_the_html_report_shows_each_pages_matched_blocks(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    make_pages(pytester.path, {**GOOD, "letter_2": BAD_LETTER + " <script>alert(1)</script>"})
    pytester.runpytest(*BASE, "--ocr-json=run.json", "--ocr-html=report.html", *plugin_args)
    page = (pytester.path / "report.html").read_text(encoding="utf-8")
    run = run_file(pytester.path / "run.json")
    assert page.count('table class="data small omnidoc-blocks"') == 3  # one block table per page
    matches = [m for doc in run["documents"] for m in doc["details"]["omnidoc"]["matches"]]
    assert matches and all({"category", "ground_truth", "prediction", "edit"} <= set(m) for m in matches)
    assert any(m.get("teds") is not None for m in matches)  # the table's TEDS is recorded and shown
    assert "TEDS-S" in page and "This page has no table" in page
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_a_page_without_a_prediction_errors_alone(pytester: pytest.Pytester) -> None:
    make_pages(pytester.path)
    (pytester.path / "preds" / "notes_3.md").unlink()
    result = pytester.runpytest(*BASE)
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*no prediction for page 'notes_3.jpg': tried *notes_3.md*"])


def test_a_live_engine_errors_a_page_whose_image_is_absent(pytester: pytest.Pytester) -> None:
    make_pages(pytester.path)
    pytester.makeconftest("""
        from pytest_ocrmetrics.engines.base import EngineSpec, OcrOutput, read_image

        class Live:
            name = "live"
            def identity(self): return {"engine": "live", "version": 1}
            def recognize(self, document):
                read_image(document)
                return OcrOutput(text="x", engine="live")
            def close(self): pass

        def pytest_ocrmetrics_register_engines(registry):
            registry.register(EngineSpec("live", lambda arg, options: Live(), description="reads the image"))
        """)
    result = pytester.runpytest("--ocr-dataset=pages", "--ocr-engine=live", "--ocr-no-cache", "-p", "no:randomly")
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines(["*image '*pages/images/letter_2.jpg' of document 'letter_2.jpg' * does not exist*"])


needs_demo = pytest.mark.skipif(not (DEMO / "gt" / "OmniDocBench_demo.json").is_file(),
                                reason="the OmniDocBench demo data (../shared/data/acceptance/omnidocbench) is absent")


@needs_demo
def test_the_demo_with_its_own_markdown_scores_as_the_core_does(pytester: pytest.Pytester,
                                                                 plugin_args: list[str]) -> None:
    """``gt_md``, the benchmark's own Markdown of the pages, as the candidate: every page's numbers are the core's,
    and (once the real core is in) 0 edit distance and TEDS 1.0 everywhere."""
    from pytest_ocrmetrics.datasets import load_dataset
    from pytest_ocrmetrics.engines.replay import ReplayEngine

    gt, candidate = (DEMO / "gt").resolve(), (DEMO / "candidates" / "gt_md").resolve()
    result = pytester.runpytest(f"--ocr-dataset=demo={gt}", f"--ocr-engine=replay:{candidate}", "--ocr-no-cache",
                                "-p", "no:randomly", "--ocr-json=run.json", *plugin_args)
    assert result.ret == pytest.ExitCode.OK
    run = run_file(pytester.path / "run.json")
    engine = ReplayEngine(candidate)
    pages = {d.id: d for d in load_dataset(gt)}
    assert len(run["documents"]) == 18 and all(doc["outcome"] == "passed" for doc in run["documents"])
    for doc in run["documents"]:
        document = pages[doc["id"]]
        want = score_page(document.omnidoc_page, engine.recognize(document).text).as_dict()
        assert doc["metrics"] == pytest.approx({k: v for k, v in want.items() if v is not None}), doc["id"]
    # the benchmark itself scores one page's display formulas above 0 (see tests/omnidoc/test_parity.py)
    formula_exception = "jiaocaineedrop_Evans_PDE_Solution_Chapter_6_Second-Order_Elliptic_Equations.pdf_5.jpg"
    for doc in run["documents"]:
        for name in OMNIDOC_METRICS:
            if name in doc["metrics"] and not (name == "formula_edit" and doc["id"] == formula_exception):
                assert doc["metrics"][name] == pytest.approx(1.0 if "teds" in name else 0.0, abs=1e-9), (doc["id"], name)


def test_deepseek_with_the_grounding_prompt_scores_pages_whose_images_are_there(pytester: pytest.Pytester) -> None:
    """A live engine end to end: DeepSeek-OCR served (a fake chat-completions server), the grounding prompt, the
    page images in ``images/``; the grounding tags are gone from what is scored, the Markdown (HTML table) stays."""
    from tests.helpers.plugin import PNG_1X1
    from tests.helpers.servers import load_fake_server

    objects = make_pages(pytester.path)
    images = pytester.path / "pages" / "images"
    images.mkdir()
    grounded = ("<|ref|>title<|/ref|><|det|>[[10, 10, 500, 40]]<|/det|>\n# Annual results\n\n"
                "<|ref|>text<|/ref|><|det|>[[10, 50, 900, 90]]<|/det|>\nSales grew in every region during the year.\n\n"
                f"<|ref|>table<|/ref|><|det|>[[10, 100, 900, 300]]<|/det|>\n{TABLE}<｜end▁of▁sentence｜>")
    with load_fake_server().FakeChatServer() as server:
        for image in PAGES:
            data = PNG_1X1 + image.encode()
            (images / image).write_bytes(data)
            server.answer(data, grounded if image == "report.pdf_1.jpg" else GOOD[Path(image).stem])
        result = pytester.runpytest(
            "--ocr-dataset=pages", "--ocr-engine=deepseek", f"--ocr-engine-option=deepseek.base_url={server.base_url}",
            "--ocr-engine-option=deepseek.prompt=<|grounding|>Convert the document to markdown.",
            "--ocr-engine-option=deepseek.max_tokens=8192", "--ocr-engine-option=deepseek.retries=0",
            "--ocr-no-cache", "--ocr-json=run.json", "-p", "no:randomly")
        prompts = {r.body["messages"][0]["content"][1]["text"] for r in server.chat_requests}
    result.assert_outcomes(passed=3)
    assert prompts == {"<|grounding|>Convert the document to markdown."}
    run = run_file(pytester.path / "run.json")
    report = next(doc for doc in run["documents"] if doc["id"] == "report.pdf_1.jpg")
    assert "<|ref|>" not in report["hypothesis"] and TABLE in report["hypothesis"]
    assert report["metrics"] == pytest.approx(expected(objects, GOOD)["report.pdf_1.jpg"])  # as if given clean
