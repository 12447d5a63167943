"""The evaluator page in a real headless browser (the system's chromium driven by Playwright for Python).

Against a real server on 127.0.0.1: type into the manual tab, press Analyze, read the figures and the computed colours
of specific words; upload files in the batch tab, sort by F1, hide a column, expand a row, export CSV and parse the
download; open a run's document; use the tabs from the keyboard. Every page also checks that nothing was fetched
from anywhere but the server and that the console stayed clean (the Content-Security-Policy lets the page's own
script run). Screenshots go to ``$OCR_SCREENSHOTS`` when it is set. Skips when chromium or Playwright is missing.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_ocrmetrics.evaluator.serve.server import EvaluatorServer

SCREENSHOTS = os.environ.get("OCR_SCREENSHOTS")

TRANSPARENT = "rgba(0, 0, 0, 0)"
FUZZY_BACKGROUND = "rgb(228, 212, 252)"  # --fuzzy-bg, purple
UNMATCHED_BACKGROUND = "rgb(255, 206, 203)"  # --bad-bg, red



class Page:
    """A browser page on the server, recording every request and every console problem."""

    def __init__(self, browser: Any, server: EvaluatorServer, width: int = 1280) -> None:
        self.context = browser.new_context(viewport={"width": width, "height": 900}, accept_downloads=True)
        self.page = self.context.new_page()
        self.origin = server.url
        self.requests: list[str] = []
        self.problems: list[str] = []

        def route(route: Any) -> None:
            self.requests.append(route.request.url)
            if route.request.url.startswith(self.origin):
                route.continue_()
            else:
                route.abort()

        self.page.route("**/*", route)
        self.page.on("console", lambda m: self.problems.append(f"console {m.type}: {m.text}")
                     if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        self.page.on("dialog", lambda d: (self.problems.append(f"dialog: {d.message}"), d.dismiss()))
        self.page.goto(self.origin)

    def screenshot(self, name: str) -> None:
        if SCREENSHOTS:
            Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
            self.page.screenshot(path=str(Path(SCREENSHOTS) / name), full_page=True)

    def close(self) -> None:
        self.context.close()
        assert [u for u in self.requests if not u.startswith(self.origin)] == []
        assert self.problems == []


def word(page: Any, side: str, index: int) -> Any:
    return page.locator(f".words[data-side={side}] span.w[data-index='{index}']").first


def expect_text(locator: Any, text: str) -> None:
    """Wait until ``locator`` contains ``text`` (not ``wait_for_function``: its string is an eval the page's CSP
    forbids)."""
    from playwright.sync_api import expect

    expect(locator).to_contain_text(text)


def background(locator: Any) -> str:
    return locator.evaluate("e => getComputedStyle(e).backgroundColor")


@pytest.mark.parametrize("width", [1280, 420])
def test_manual_tab_figures_and_colours(browser: Any, server: EvaluatorServer, width: int) -> None:
    view = Page(browser, server, width)
    page = view.page
    try:
        # empty input: a message, no request
        page.click("#analyze")
        assert page.inner_text("#manual-message").startswith("Enter a ground truth and an OCR output")
        assert not [u for u in view.requests if "/api/" in u]

        page.fill("#ground-truth", "The quick brown fox jumps over the lazy dog")
        page.fill("#ocr-output", "The quik brown fox jumps over lazy dog <img src=x onerror=alert(1)>")
        page.focus("#analyze")
        page.keyboard.press("Enter")  # the button works from the keyboard
        page.wait_for_selector(".metric[data-metric=crr] .value")
        figures = {m: page.inner_text(f"#manual-result .metric[data-metric={m}] .value")
                   for m in ("precision", "recall", "f1", "crr")}
        # 7 exact of 11 OCR words (the <img ...> tag is three words), 7 of 9 reference words
        assert figures == {"precision": "63.64%", "recall": "77.78%", "f1": "70.00%", "crr": "97.50%"}
        assert not page.is_visible("#manual-message")

        assert word(page, "ground_truth", 0).inner_text() == "The"
        assert background(word(page, "ground_truth", 0)) == TRANSPARENT  # exact: no colour
        assert word(page, "ground_truth", 1).inner_text() == "quick"
        assert background(word(page, "ground_truth", 1)) == FUZZY_BACKGROUND
        assert "quik" in (word(page, "ground_truth", 1).get_attribute("title") or "")
        assert background(word(page, "ocr_output", 1)) == FUZZY_BACKGROUND
        assert word(page, "ground_truth", 6).inner_text() == "the"
        assert background(word(page, "ground_truth", 6)) == UNMATCHED_BACKGROUND
        assert word(page, "ocr_output", 8).inner_text() == "<img"  # shown as text, never as an element
        assert background(word(page, "ocr_output", 8)) == UNMATCHED_BACKGROUND
        assert page.locator("#manual-result img").count() == 0
        # the legend uses the same colours
        assert background(page.locator(".legend .w.fuzzy")) == FUZZY_BACKGROUND
        assert background(page.locator(".legend .w.unmatched")) == UNMATCHED_BACKGROUND

        view.screenshot(f"serve-manual-{width}.png")
        # a setting change re-analyzes what is shown: threshold 0, no fuzzy match, CRR of exact pairs only
        page.select_option("#threshold", "0")
        expect_text(page.locator("#manual-result .metric[data-metric=crr] .value"), "100.00%")
        assert background(word(page, "ground_truth", 1)) == UNMATCHED_BACKGROUND
        if width < 600:  # narrow window: the text boxes stack, and nothing is wider than the window
            boxes = page.eval_on_selector_all(".inputs textarea", "ts => ts.map(t => t.getBoundingClientRect().top)")
            assert boxes[0] < boxes[1]
            assert page.evaluate("document.documentElement.scrollWidth") <= width
    finally:
        view.close()


def test_tabs_work_from_the_keyboard(browser: Any, server: EvaluatorServer) -> None:
    view = Page(browser, server)
    page = view.page
    try:
        assert page.get_attribute("#tab-manual", "aria-selected") == "true" and not page.is_visible("#tab-run")
        page.focus("#tab-manual")
        page.keyboard.press("ArrowRight")
        assert page.get_attribute("#tab-batch", "aria-selected") == "true"
        assert page.evaluate("document.activeElement.id") == "tab-batch"
        assert page.is_visible("#panel-batch") and not page.is_visible("#panel-manual")
        page.keyboard.press("ArrowRight")  # wraps around
        assert page.get_attribute("#tab-manual", "aria-selected") == "true"
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("Enter")
        assert page.get_attribute("#tab-manual", "aria-selected") == "true" and page.is_visible("#panel-manual")
        # Ctrl+Enter in a text box analyzes
        page.fill("#ground-truth", "a b")
        page.fill("#ocr-output", "a c")
        page.focus("#ocr-output")
        page.keyboard.press("Control+Enter")
        page.wait_for_selector("#manual-result .metric[data-metric=precision]")
        assert page.inner_text("#manual-result .metric[data-metric=precision] .value") == "50.00%"
    finally:
        view.close()


FILES = [
    ("gt.txt", "Hello world from Python\nsecond line"),
    ("tesseract_out.txt", "Hello world from Python\nsecond line"),
    ("google_vision_out.txt", "Helo world from Python\nsecond"),
    ("aws_textract_out.txt", "Hello wrld from Python\nsecond line extra"),
    ("notes.txt", "not an output"),
]


def _column(page: Any, key: str) -> list[str]:
    return page.eval_on_selector_all(f"#batch-table tbody tr[data-model] td[data-col={key}]",
                                     "cells => cells.map(c => c.textContent)")


@pytest.mark.parametrize("width", [1280, 420])
def test_batch_tab_sort_hide_expand_export(browser: Any, server: EvaluatorServer, tmp_path: Path, width: int) -> None:
    view = Page(browser, server, width)
    page = view.page
    try:
        page.click("#tab-batch")
        page.set_input_files("#file-input", [{"name": name, "mimeType": "text/plain", "buffer": text.encode("utf-8")}
                                             for name, text in FILES])
        assert page.locator("#file-list li").count() == len(FILES)
        assert page.locator("#file-list li.bad").count() == 1  # notes.txt is marked before the upload
        page.click("#analyze-all")
        page.wait_for_selector("#batch-table tbody tr[data-model]")
        assert _column(page, "model") == ["tesseract", "google_vision", "aws_textract"]
        assert "notes.txt is not named gt.txt or <model>_out.txt" in page.inner_text("#batch-errors")

        # sort by F1: ascending, then descending
        page.click("#batch-table th[data-col=f1] button.sort")
        ascending = _column(page, "f1")
        assert [float(v.rstrip("%")) for v in ascending] == sorted(float(v.rstrip("%")) for v in ascending)
        assert page.get_attribute("#batch-table th[data-col=f1]", "aria-sort") == "ascending"
        page.click("#batch-table th[data-col=f1] button.sort")
        assert _column(page, "f1") == ascending[::-1] and _column(page, "model")[0] == "tesseract"
        assert page.get_attribute("#batch-table th[data-col=f1]", "aria-sort") == "descending"

        # hide Avg CRR
        page.uncheck("input.col-toggle[data-col=crr]")
        assert not page.is_visible("#batch-table th[data-col=crr]")
        assert not page.is_visible("#batch-table td[data-col=crr] >> nth=0")

        # expand google_vision: its coloured texts, "Helo" purple
        row = page.locator("#batch-table tr[data-model=google_vision]")
        row.locator("button.expand").click()
        details = page.locator("#batch-table tr[data-details-for=google_vision]")
        assert details.is_visible()
        assert row.locator("button.expand").get_attribute("aria-expanded") == "true"
        helo = details.locator(".words[data-side=ocr_output] span.w", has_text="Helo")
        assert background(helo) == FUZZY_BACKGROUND
        line = details.locator(".words[data-side=ground_truth] span.w", has_text="line")
        assert background(line) == UNMATCHED_BACKGROUND
        assert details.locator(".words[data-side=ground_truth] br").count() == 1  # the line break is kept
        assert details.locator(".metric[data-metric=crr] .value").inner_text() == "96.00%"  # (4 + 0.8) / 5
        view.screenshot(f"serve-batch-{width}.png")

        # export what is shown: the sorted rows, without the hidden column
        with page.expect_download() as download_info:
            page.click("#export-csv")
        download = download_info.value
        assert download.suggested_filename == "ocr-metrics-comparison.csv"
        target = tmp_path / "comparison.csv"
        download.save_as(target)
        rows = list(csv.DictReader(io.StringIO(target.read_text(encoding="utf-8"))))
        assert list(rows[0]) == ["Model", "Precision", "Recall", "F1 Score", "Exact", "Fuzzy", "OCR words"]
        assert [r["Model"] for r in rows] == _column(page, "model")
        scores = {r["Model"]: float(r["F1 Score"]) for r in rows}
        assert scores["tesseract"] == 1.0 and scores["google_vision"] == pytest.approx(2 * 4 / 11, abs=1e-6)
        if width < 600:  # the table scrolls sideways in its box; the expanded texts stay within the window
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            assert details.locator(".detail-inner").evaluate("e => e.getBoundingClientRect().right") <= width
    finally:
        view.close()


def test_batch_tab_takes_dropped_files(browser: Any, server: EvaluatorServer) -> None:
    view = Page(browser, server)
    page = view.page
    try:
        page.click("#tab-batch")
        transfer = page.evaluate_handle("""() => {
            const transfer = new DataTransfer();
            transfer.items.add(new File(['Hello world'], 'gt.txt', { type: 'text/plain' }));
            transfer.items.add(new File(['Hello wrld'], 'm_out.txt', { type: 'text/plain' }));
            return transfer; }""")
        page.dispatch_event("#drop-zone", "dragover", {"dataTransfer": transfer})
        assert "over" in (page.get_attribute("#drop-zone", "class") or "")
        page.dispatch_event("#drop-zone", "drop", {"dataTransfer": transfer})
        assert page.locator("#file-list li").all_inner_texts() == ["gt.txt (11 B)\n\u00d7", "m_out.txt (10 B)\n\u00d7"]
        page.focus("#analyze-all")
        page.keyboard.press("Enter")
        page.wait_for_selector("#batch-table tbody tr[data-model=m]")
        assert _column(page, "f1") == ["50.00%"]
    finally:
        view.close()


def test_batch_tab_refuses_too_much_before_sending(browser: Any, server: EvaluatorServer) -> None:
    view = Page(browser, server)
    page = view.page
    try:
        page.click("#tab-batch")
        page.set_input_files("#file-input", [{"name": "gt.txt", "mimeType": "text/plain", "buffer": b"x"},
                                             {"name": "big_out.txt", "mimeType": "text/plain",
                                              "buffer": b"a " * (5 * 1024 * 1024 + 10)}])
        page.click("#analyze-all")
        assert "over the 10 MB limit" in page.inner_text("#batch-message")
        assert not [u for u in view.requests if "/api/" in u]
    finally:
        view.close()


def test_run_tab_shows_a_document_coloured(browser: Any, run_server: EvaluatorServer) -> None:
    view = Page(browser, run_server)
    page = view.page
    try:
        assert page.get_attribute("#tab-run", "aria-selected") == "true" and page.is_visible("#panel-run")
        page.wait_for_selector("#run-table tbody tr")
        assert page.locator("#run-table tbody tr").count() == 4
        assert page.inner_text("#run-table tbody tr[data-index='3'] td >> nth=0") == "r4\u27e8RLO\u27e9gnp.exe"
        page.click("#run-table tbody tr[data-index='0'] button")
        page.wait_for_selector("#run-detail-result .words")
        assert "CER 25.00% above 5.00%" in page.inner_text("#run-detail-message")
        total = page.locator("#run-detail-result .words[data-side=ground_truth] span.w", has_text="TOTAL")
        assert background(total) == FUZZY_BACKGROUND  # T0TAL
        assert page.locator("#run-detail-result b").count() == 0  # "<b>20.00</b>" is text
        view.screenshot("serve-run-1280.png")
        # a document without output: says so instead of colouring
        page.click("#run-table tbody tr[data-index='2'] button")
        expect_text(page.locator("#run-detail-message"), "no OCR output")
        assert page.locator("#run-detail-result .words").count() == 0
        # control characters are shown as marks, never raw
        page.click("#run-table tbody tr[data-index='3'] button")
        expect_text(page.locator("#run-detail-title"), "r4\u27e8RLO\u27e9gnp.exe")
        shown = page.inner_text("#run-detail-result .words[data-side=ground_truth]")
        assert "esc\u241b[31m" in shown and "nul\u2400" in shown and "sur\ufffd" in shown
        assert not any(ch in page.inner_text("body") for ch in "\x00\x1b\u202e")
        page.fill("#run-filter", "r2")
        visible = page.eval_on_selector_all("#run-table tbody tr", "rs => rs.filter(r => !r.hidden).length")
        assert visible == 1
    finally:
        view.close()


def test_the_page_waits_and_retries_when_the_server_is_busy(browser: Any, server: EvaluatorServer,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Two requests hold both computation slots: the page's own request gets 503, waits its Retry-After and is
    answered once a slot is free. The browser's request carries its Origin, the server's own: it is not refused."""
    import json
    import threading

    from serve_helpers import Client

    import pytest_ocrmetrics.evaluator.serve.server as server_module

    entered, release = threading.Semaphore(0), threading.Event()
    original = server_module.analyze

    def held(data: Any) -> Any:
        if not release.is_set():
            entered.release()
            assert release.wait(30)
        return original(data)

    monkeypatch.setattr(server_module, "analyze", held)
    client = Client(server)
    body = json.dumps({"ground_truth": "a b", "ocr_output": "a b"}).encode()
    holders = [threading.Thread(target=client.request, args=("POST", "/api/analyze", body,
                                                             {"Content-Type": "application/json"}))
               for _ in range(server.max_computations)]
    view = Page(browser, server)
    page = view.page
    try:
        for holder in holders:
            holder.start()
        for _ in holders:
            assert entered.acquire(timeout=30)
        page.fill("#ground-truth", "The quick brown fox")
        page.fill("#ocr-output", "The quik brown")
        with page.expect_response(lambda r: "/api/analyze" in r.url) as busy:
            page.click("#analyze")
        response = busy.value
        assert response.status == 503 and response.headers["retry-after"] == "1"
        assert response.request.all_headers()["origin"] == server.url.rstrip("/")
        release.set()
        expect_text(page.locator("#manual-result .metric[data-metric=precision] .value"), "66.67%")
        assert len([u for u in view.requests if u.endswith("/api/analyze")]) == 2  # the first try and one retry
        # chromium logs every non-2xx answer; the 503 was expected, nothing else may be there
        assert [p for p in view.problems if "status of 503" in p] == [view.problems[0]]
        view.problems[:1] = []
    finally:
        release.set()
        for holder in holders:
            holder.join(timeout=30)
        view.close()
