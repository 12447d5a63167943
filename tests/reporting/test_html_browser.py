"""The HTML report in a real headless browser (Debian's chromium driven by Playwright for Python).

Checks what only a browser can: sorting by a header click, hiding a column, switching the statistic, exporting CSV,
expanding a document, that the hash-based Content-Security-Policy lets the report's own script run, and that the
page makes no network request at all. Skips when chromium or Playwright is not installed (``.ci/run`` installs both).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
from ocr_run_factory import make_doc, make_run

from pytest_ocrmetrics.gating import compare_runs
from pytest_ocrmetrics.reporting.html import write_html


@pytest.fixture
def report(tmp_path: Path) -> Path:
    Image = pytest.importorskip("PIL.Image")
    Image.new("L", (300, 500), 235).save(tmp_path / "receipt.png")
    docs = [
        make_doc("r1.png", {"cer": 0.02, "wer": 0.10}, image="receipt.png", reference="TOTAL 12.50",
                 hypothesis="TOTAL 12.S0 <script>alert(1)</script>", confusions=[("5", "S", 1)]),
        make_doc("r2.png", {"cer": 0.30, "wer": 0.40}, outcome="failed", message="CER 30.00% above 5.00%"),
        make_doc("r3.png", {"cer": 0.05, "wer": 0.20}),
        make_doc("p1.tif", {"cer": 0.10, "wer": 0.90}, dataset="pages", engine="trocr"),
        make_doc("p2.tif", {"cer": 0.00, "wer": 0.00}, dataset="pages", engine="tesseract"),
    ]
    run = make_run(docs)
    baseline = make_run([make_doc(d["id"], {k: v / 2 for k, v in d["metrics"].items()}, dataset=d["dataset"],
                                  engine=d["engine"]) for d in docs])
    comparison = compare_runs(baseline, run, ["cer:0.005"], resamples=50)
    return write_html(run, tmp_path / "report.html", comparison=comparison, gates=["cer<=0.05"], image_root=tmp_path)


def _open(browser: Any, path: Path) -> tuple[Any, Any, list[str], list[str]]:
    context = browser.new_context(viewport={"width": 1300, "height": 900}, accept_downloads=True)
    page = context.new_page()
    requests: list[str] = []
    problems: list[str] = []

    def route(route: Any) -> None:
        requests.append(route.request.url)
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            route.abort()

    page.route("**/*", route)
    page.on("console", lambda message: problems.append(f"console {message.type}: {message.text}")
            if message.type in ("error", "warning") else None)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    page.goto(path.as_uri())
    return context, page, requests, problems


def _rgba(css: str) -> tuple[float, ...]:
    """``rgb(1, 2, 3)`` / ``rgba(1, 2, 3, 0.5)`` as (red, green, blue, alpha)."""
    parts = [float(p) for p in css[css.index("(") + 1:css.index(")")].split(",")]
    return tuple(parts + [1.0] * (4 - len(parts)))


def _column(page: Any, table: str, index: int) -> list[str]:
    return page.eval_on_selector_all(f"#{table} tbody tr", f"rows => rows.map(r => r.cells[{index}].textContent.trim())")


def test_sort_hide_switch_export_expand_offline(browser: Any, report: Path, tmp_path: Path) -> None:
    context, page, requests, problems = _open(browser, report)
    try:
        # summary: engine x dataset rows; click "CER" (micro) to sort ascending, again for descending
        headers = page.eval_on_selector_all("#summary-table thead th", "hs => hs.map(h => h.getAttribute('data-label'))")
        cer = headers.index("cer (micro)")
        page.click(f"#summary-table thead th:nth-child({cer + 1}) button.sort")
        ascending = _column(page, "summary-table", cer)
        assert ascending == sorted(ascending, key=lambda s: float(s.split("%")[0]))
        assert page.get_attribute(f"#summary-table thead th:nth-child({cer + 1})", "aria-sort") == "ascending"
        page.click(f"#summary-table thead th:nth-child({cer + 1}) button.sort")
        descending = _column(page, "summary-table", cer)
        assert descending == ascending[::-1] and descending[0] != descending[-1]
        # sort by a text column
        page.click("#summary-table thead th:nth-child(1) button.sort")
        assert _column(page, "summary-table", 0) == sorted(_column(page, "summary-table", 0))

        # switch the statistic: the cells show the mean and the header says so
        micro_values = _column(page, "summary-table", cer)
        page.select_option("select.stat-select", "max")
        max_values = _column(page, "summary-table", cer)
        assert max_values != micro_values and "max" in page.inner_text(f"#summary-table thead th:nth-child({cer + 1})")

        # hide a column, then export CSV of what is visible
        wer = headers.index("wer (micro)")
        page.uncheck(f"input.col-toggle[data-table=summary-table][data-col='{wer}']")
        assert not page.is_visible(f"#summary-table thead th:nth-child({wer + 1})")
        with page.expect_download() as download_info:
            page.click("button[data-action=export][data-table=summary-table]")
        download = download_info.value
        assert download.suggested_filename == "ocr-summary.csv"
        csv_path = tmp_path / "summary.csv"
        download.save_as(csv_path)
        lines = csv_path.read_text(encoding="utf-8").splitlines()
        assert lines[0].split(",")[:2] == ["engine", "dataset"] and "cer (max)" in lines[0]
        assert "wer (micro)" not in lines[0] and "wer (max)" not in lines[0]
        assert len(lines) == 1 + 3  # header + tesseract/receipts, tesseract/pages, trocr/pages

        # documents: a detail view is closed, opens on click and shows both texts and the thumbnail
        first = page.locator("details.doc").first
        assert first.get_attribute("open") is None
        assert not page.is_visible("details.doc >> nth=0 >> pre.text")
        first.locator("summary").click()
        assert first.get_attribute("open") is not None
        assert page.is_visible("details.doc >> nth=0 >> .pair")
        # the document link in the table opens its detail view
        link = page.locator("#documents-table a.doc-link", has_text="r1.png")
        target = (link.get_attribute("href") or "#")[1:]
        link.click()
        assert page.get_attribute(f"#{target}", "open") is not None
        assert page.is_visible(f"#{target} img.thumb")
        assert "<script>alert(1)</script>" in page.inner_text(f"#{target} .pair")
        # the evaluator's legend: exact words uncoloured, fuzzy ones purple, unmatched ones red
        colours = page.eval_on_selector_all(
            f"#{target} .pair span[class^=w-]",
            "ss => ss.map(s => [s.className, s.textContent, getComputedStyle(s).backgroundColor])")
        by_word = {(kind, text): _rgba(colour) for kind, text, colour in colours}
        assert by_word[("w-exact", "TOTAL")][3] == 0  # transparent: normal text
        red, green, blue, alpha = by_word[("w-fuzzy", "12.S0")]
        assert alpha > 0 and blue > green and red > green  # purple
        red, green, blue, alpha = by_word[("w-unmatched", "<script>alert(1)</script>")]
        assert alpha > 0 and red > green and red > blue  # red
        # filter the documents table
        page.fill("input.row-filter", "trocr")
        visible = page.eval_on_selector_all("#documents-table tbody tr", "rs => rs.filter(r => !r.hidden).length")
        assert visible == 1
        with page.expect_download() as download_info:
            page.click("button[data-action=export][data-table=documents-table]")
        download_info.value.save_as(tmp_path / "documents.csv")
        exported = (tmp_path / "documents.csv").read_text(encoding="utf-8").splitlines()
        assert len(exported) == 2 and ",p1.tif,trocr," in exported[1]  # only the rows left by the filter
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    finally:
        context.close()
    assert requests == [report.as_uri()], f"the report fetched {requests[1:]}"
    assert problems == []


def test_hostile_text_page_loads_with_every_document_and_image(browser: Any, tmp_path: Path) -> None:
    """Lone surrogates, NUL, ESC, U+FFFE, bidi controls, formula-like ids and a 2 MB text: the page loads without a
    console error, lists every document, shows marks instead of raw controls and one embedded image for two engines
    (both engines' readings of a document in one side-by-side view)."""
    from pytest_ocrmetrics.gating.verdict import Verdict
    from pytest_ocrmetrics.reporting.files import write_reports

    Image = pytest.importorskip("PIL.Image")
    Image.new("L", (200, 300), 200).save(tmp_path / "page.png")
    big = "word " * 400_000
    ids = ["sur\ud800rogate.png", "nul\x00esc\x1b[31m.png", "bidi\u202egnp.exe.png", "=HYPERLINK(\"x\").png", "+1.png",
           "non\ufffechar.png", "big.png"]
    docs = [make_doc(doc_id, {"cer": 0.1 * n}, reference=f"ref {doc_id} \u05e9\u200f" if doc_id != "big.png" else big,
                     hypothesis=f"hyp\x00 {doc_id}\udc80", outcome="failed" if n == 1 else "passed",
                     message=f"boom \x1b[0m {doc_id}", image="page.png", engine=engine)
            for n, doc_id in enumerate(ids) for engine in ("tesseract", "trocr")]
    write_reports(make_run(docs), Verdict(), html=tmp_path / "report.html", html_options={"image_root": tmp_path})
    report = tmp_path / "report.html"
    assert report.read_text(encoding="utf-8").count("data:image/") == 1  # one page image, seven views of it
    context, page, requests, problems = _open(browser, report)
    try:
        shown = _column(page, "documents-table", 1)
        assert len(shown) == 2 * len(ids)
        assert "nul\u2400esc\u241b[31m.png" in shown and "bidi\u27e8RLO\u27e9gnp.exe.png" in shown
        assert "sur\ufffdrogate.png" in shown and "non\ufffdchar.png" in shown and '=HYPERLINK("x").png' in shown
        text = page.inner_text("body")
        assert not any(ch in text for ch in "\x00\x1b\u202e")
        with page.expect_download() as download_info:  # the page's own CSV export is formula-safe too
            page.click("button[data-action=export][data-table=documents-table]")
        download_info.value.save_as(tmp_path / "documents.csv")
        with (tmp_path / "documents.csv").open(encoding="utf-8", newline="") as handle:
            exported = list(csv.reader(handle))
        assert len(exported) == 1 + 2 * len(ids)
        exported_ids = [row[1] for row in exported[1:]]
        assert "'=HYPERLINK(\"x\").png" in exported_ids and "'+1.png" in exported_ids
        assert all(not cell.startswith(("=", "+", "@")) for row in exported for cell in row)
        page.click("button[data-action=expand]")
        thumbs = page.eval_on_selector_all("img.thumb", "imgs => imgs.map(i => [i.complete, i.naturalWidth > 0])")
        # two engines on one dataset: one side-by-side view per document, with both engines' outputs
        assert len(thumbs) == len(ids) and all(done and drawn for done, drawn in thumbs)
        assert page.locator("details.doc.paired").count() == len(ids)
        assert page.locator("details.doc.paired .readings .pane").count() == 3 * len(ids)
    finally:
        context.close()
    assert requests == [report.as_uri()], f"the report fetched {requests[1:]}"
    assert problems == []


def _chart_run(n: int, *, engines: tuple[str, ...], seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A synthetic run of ``n`` documents per engine (tags, skewed CER as real OCR has) and its baseline, against
    which every 40th document got 8 points worse (a regression)."""
    import random

    rng = random.Random(seed)
    docs, old = [], []
    for i in range(n):
        quality = rng.betavariate(1.2, 12)
        for k, engine in enumerate(engines):
            before = max(0.0, quality + 0.02 * k + rng.gauss(0, 0.01))
            cer = before + 0.08 if i % 40 == 0 else max(0.0, before + rng.uniform(-0.004, 0.004))
            doc = make_doc(f"doc{i:05d}<b>.png", {"cer": cer, "wer": min(1.0, 3 * cer)}, engine=engine,
                           reference="TOTAL 12.50 RM", hypothesis=f"TOTAL 12.{'S0' if k else '50'} RM")
            doc["tags"] = [("receipt", "invoice", "faded <scan>")[i % 3]]
            docs.append(doc)
            old.append(make_doc(doc["id"], {"cer": before, "wer": min(1.0, 3 * before)}, engine=engine))
    return make_run(docs), make_run(old)


def _check_charts(browser: Any, report: Path, screenshot: Path) -> list[dict[str, Any]]:
    """Open ``report``: every chart is visible with a non-zero size, nothing is fetched, no console error; a
    screenshot of the charts section is saved (to look at). Returns each chart's class, size and drawn element counts."""
    context, page, requests, problems = _open(browser, report)
    try:
        charts = page.eval_on_selector_all("svg.chart", """svgs => svgs.map(s => {
            const box = s.getBoundingClientRect();
            return {cls: s.getAttribute('class'), label: s.getAttribute('aria-label'), width: box.width,
                    height: box.height, nodes: s.querySelectorAll('*').length,
                    points: s.querySelectorAll('circle').length, bars: s.querySelectorAll('rect.bar').length,
                    visible: getComputedStyle(s).visibility === 'visible' && s.checkVisibility()};
        })""")
        page.locator("#charts").screenshot(path=str(screenshot))
    finally:
        context.close()
    assert requests == [report.as_uri()], f"the report fetched {requests[1:]}"
    assert problems == []
    assert charts and all(c["visible"] and c["width"] > 100 and c["height"] > 100 for c in charts), charts
    return charts


def test_charts_and_side_by_side_render_at_20_documents(browser: Any, tmp_path: Path) -> None:
    run, old = _chart_run(20, engines=("tesseract", "trocr"), seed=1)
    comparison = compare_runs(old, run, ["cer:0.01"], resamples=50)
    report = write_html(run, tmp_path / "report.html", comparison=comparison)
    charts = _check_charts(browser, report, tmp_path / "charts-20.png")
    # per engine: histogram, baseline scatter (every document a point), per-tag bars
    assert [c["cls"] for c in charts] == ["chart histogram", "chart scatter", "chart bars"] * 2
    assert [c["points"] for c in charts if c["cls"] == "chart scatter"] == [20, 20]
    assert [c["bars"] for c in charts if c["cls"] == "chart bars"] == [3, 3]
    context, page, _, problems = _open(browser, report)
    try:  # the two engines' readings of a document side by side: panes in one row, left to right in engine order
        block = page.locator("details.doc.paired").first
        block.locator("summary").click()
        panes = block.locator(".readings .pane")
        boxes = [panes.nth(i).bounding_box() for i in range(panes.count())]
        titles = [panes.nth(i).locator("h4").inner_text() for i in range(panes.count())]
        assert [t.lower() for t in titles] == ["reference (ground truth)", "output (tesseract)", "output (trocr)"]
        assert all(b is not None and b["width"] > 150 for b in boxes)
        assert len({round(b["y"]) for b in boxes if b}) == 1  # one row
        assert [b["x"] for b in boxes if b] == sorted(b["x"] for b in boxes if b)
        assert block.locator("table.paired-metrics tbody tr").count() == 2
        block.screenshot(path=str(tmp_path / "side-by-side.png"))
    finally:
        context.close()
    assert problems == []


def test_charts_render_at_20000_documents(browser: Any, tmp_path: Path) -> None:
    run, old = _chart_run(20_000, engines=("tesseract",), seed=2)
    comparison = compare_runs(old, run, ["cer:0.01"], resamples=0)
    regressions = len([r for r in comparison.regressions if r.metric == "cer"])
    assert regressions == 500  # more than the scatter draws: it must choose
    report = write_html(run, tmp_path / "report.html", comparison=comparison, max_rows=200)
    charts = _check_charts(browser, report, tmp_path / "charts-20000.png")
    assert [c["cls"] for c in charts] == ["chart histogram", "chart scatter", "chart bars"]
    histogram, scatter, bars = charts
    assert histogram["bars"] <= 20 and scatter["points"] == 400 and bars["bars"] == 3
    assert all(c["nodes"] < 2_000 for c in charts)  # bounded: never one node per document
    assert "20000 documents" in scatter["label"]
