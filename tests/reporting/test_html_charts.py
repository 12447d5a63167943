"""The HTML report's charts section and its side-by-side view of several engines reading one dataset."""

from __future__ import annotations

import re
from typing import Any

from ocr_run_factory import make_doc, make_run, validate

from pytest_ocrmetrics.gating import compare_runs
from pytest_ocrmetrics.reporting.html import engine_order, render_html
from tests.helpers.html import Page

XSS = "<script>alert(1)</script>"


def _tagged_run() -> dict[str, Any]:
    docs = []
    for i in range(12):
        doc = make_doc(f"r{i:02d}.png", {"cer": 0.01 * i, "wer": 0.03 * i})
        doc["tags"] = ["faded"] if i % 3 == 0 else ["clean", XSS]
        docs.append(doc)
    run = make_run(docs)
    validate(run)
    return run


def _svgs(page_text: str) -> list[str]:
    return re.findall(r"<svg .*?</svg>", page_text, flags=re.S)


def test_histogram_per_engine_and_dataset_without_baseline() -> None:
    run = make_run([make_doc(f"a{i}", {"cer": 0.02 * i}) for i in range(5)]
                   + [make_doc(f"p{i}", {"cer": 0.1}, dataset="pages", engine="trocr") for i in range(3)])
    text = render_html(run)
    page = Page(text)
    assert page.find("section", id="charts")
    charts = page.text("charts")
    assert "tesseract / receipts" in charts and "trocr / pages" in charts
    svgs = page.find("svg")
    assert [s["class"] for s in svgs] == ["chart histogram", "chart histogram"]
    assert all(s["role"] == "img" and "Histogram of CER" in str(s["aria-label"]) for s in svgs)
    assert "CER over 5 documents" in charts and "CER over 3 documents" in charts
    assert "baseline" not in charts  # no scatter without a comparison
    assert "per tag" not in charts  # no tags, no bars
    assert not page.find("svg", class_="chart scatter") and not page.find("svg", class_="chart bars")
    # without charts: no section (the benchmark's switch)
    assert "<svg" not in render_html(run, with_charts=False)
    # a document whose value is missing (null) or that errored is left out of the distribution, not a crash
    run["documents"][0]["metrics"]["cer"] = None
    run["documents"][1]["outcome"] = "error"
    assert "tesseract / receipts: CER over 3 documents" in Page(render_html(run)).text("charts")


def test_baseline_scatter_and_tag_bars() -> None:
    run = _tagged_run()
    baseline = make_run([make_doc(d["id"], {"cer": d["metrics"]["cer"] - (0.05 if d["id"] == "r07.png" else 0)})
                         for d in run["documents"]])
    comparison = compare_runs(baseline, run, ["cer:0.01"], resamples=20)
    assert [r.document for r in comparison.regressions] == ["r07.png"]
    text = render_html(run, comparison=comparison)
    page = Page(text)
    kinds = [s["class"] for s in page.find("svg")]
    assert kinds == ["chart histogram", "chart scatter", "chart bars"]
    scatter = next(s for s in _svgs(text) if 'class="chart scatter"' in s)
    assert scatter.count("<circle") == 12 and scatter.count('class="pt worse"') == 1
    assert re.search(r'<circle class="pt worse"[^>]*><title>r07\.png: 2\.00% \u2192 7\.00%', scatter)
    bars = next(s for s in _svgs(text) if 'class="chart bars"' in s)
    assert bars.count('class="bar"') == 3  # faded, clean and the hostile tag
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in bars and XSS not in text.split("<main>")[1].split("</main>")[0]
    assert "CER per tag" in page.text("charts")
    # the tag values are the summary's: without summary_by_tag, the mean over the tagged documents
    faded = [0.01 * i for i in range(12) if i % 3 == 0]
    assert f"faded: CER {sum(faded) / len(faded) * 100:.2f}% over 4 documents" in bars


def test_tag_bars_read_summary_by_tag() -> None:
    run = _tagged_run()
    rows = [{**row, "tag": "faded"} for row in run["summary"]]
    rows[0]["metrics"] = {"cer": {**rows[0]["metrics"]["cer"], "micro": 0.4321}}
    run["summary_by_tag"] = rows
    bars = next(s for s in _svgs(render_html(run)) if 'class="chart bars"' in s)
    assert "43.21%" in bars and bars.count('class="bar"') == 1


def _paired_run() -> dict[str, Any]:
    docs = []
    for i in range(3):
        docs.append(make_doc(f"d{i}.png", {"cer": 0.1 * i, "wer": 0.2}, engine="tesseract",
                             hypothesis=f"tesseract read {i}"))
        docs.append(make_doc(f"d{i}.png", {"cer": 0.1 * i + 0.05, "wer": 0.1}, engine="trocr",
                             hypothesis=f"trocr read {XSS}"))
    docs.append(make_doc("only-tesseract.png", {"cer": 0.9}, engine="tesseract", outcome="failed", message="boom"))
    docs.append(make_doc("single.png", {"cer": 0.3}, dataset="pages", engine="trocr"))
    run = make_run(docs)
    validate(run)
    return run


def test_two_engines_on_one_dataset_side_by_side() -> None:
    run = _paired_run()
    assert engine_order(run) == ["tesseract", "trocr"]
    text = render_html(run)
    page = Page(text)
    paired = page.find("details", class_="doc paired")
    single = page.find("details", class_="doc")
    # receipts (two engines): one block per document (4), pages (one engine): the single layout, unchanged
    assert len(paired) == 4 and len(single) == 1
    assert {p["data-dataset"] for p in paired} == {"receipts"}
    # worst first: the failed document, then by the worst reading's CER
    order = [re.search(r"#\d+(\S+?\.png)", page.text(p["id"] or "")).group(1) for p in paired]  # type: ignore[union-attr]
    assert order == ["only-tesseract.png", "d2.png", "d1.png", "d0.png"]
    block = page.text(next(p["id"] for p in paired if "d2.png" in page.text(p["id"] or "")) or "")
    # one reference, then each engine's output next to it, in engine order; metrics per engine, deltas vs the first
    assert block.index("Reference (ground truth)") < block.index("Output (tesseract)") < block.index("Output (trocr)")
    assert block.count("Reference (ground truth)") == 1 and "tesseract read 2" in block and f"trocr read {XSS}" in block
    assert "+5.00 pp vs tesseract" in block and "-10.00 pp vs tesseract" in block
    assert "vs trocr" not in block
    # an engine without a record of the document says so
    missing = page.text(paired[0]["id"] or "")
    assert "no record of this document for this engine" in missing and "tesseract: boom" in missing
    # every row of the documents table links to its document's block; both readings to the same one
    links = {a["href"] for a in page.find("a", class_="doc-link")}
    assert links == {f"#{p['id']}" for p in paired} | {f"#{single[0]['id']}"}
    rows = re.findall(r'<a class="doc-link" href="#(doc-\d+)">d2\.png</a>', text)
    assert len(rows) == 2 and len(set(rows)) == 1
    assert "Read by several engines: receipts (against tesseract)" in page.text("details")
    # the single-engine dataset keeps the one-reading layout
    single_text = page.text(single[0]["id"] or "")
    assert "Output (trocr)" in single_text and "this run" in single_text


def test_single_engine_run_layout_unchanged() -> None:
    run = make_run([make_doc(f"a{i}", {"cer": 0.1 * i}) for i in range(3)])
    page = Page(render_html(run))
    assert not page.find("details", class_="doc paired") and len(page.find("details", class_="doc")) == 3
    assert [a["href"] for a in page.find("a", class_="doc-link")] == ["#doc-1", "#doc-2", "#doc-3"]
    assert "Read by several engines" not in page.text("details")


def test_paired_view_with_baseline_deltas_and_max_details() -> None:
    run = _paired_run()
    baseline = make_run([make_doc(d["id"], {"cer": d["metrics"]["cer"] / 2}, engine=d["engine"],
                                  dataset=d["dataset"]) for d in run["documents"]])
    comparison = compare_runs(baseline, run, ["cer:0.01"], resamples=20)
    page = Page(render_html(run, comparison=comparison, max_details=3))
    # worst first: the failed document, then the regressed readings by CER (single.png 30 %, then d2.png's trocr)
    paired = page.find("details", class_="doc paired")
    assert len(page.find("details", class_="doc")) == 1 and len(paired) == 2
    d2 = page.text(paired[1]["id"] or "")
    assert "d2.png" in d2 and "+12.50 pp vs baseline" in d2 and "+10.00 pp vs baseline" in d2
    assert "more documents have no detail view" in page.text("details")
    # rows whose block was cut have no link: only-tesseract, single, d2 (two readings)
    assert len(page.find("a", class_="doc-link")) == 4
