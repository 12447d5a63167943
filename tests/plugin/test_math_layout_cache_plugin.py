"""Math facts without a browser per run, in the plugin (issue 21, item 3): the equation layouts live in the output
cache's folder (``math-layout/``), so a second run starts no browser; without an output cache (``--ocr-no-cache``)
nothing is stored. The runs are in-process with a stand-in Chromium counted by ``math_layout.browser_launches()``;
under ``-n 2`` (real Chromium, when there) the workers write the entries and the second run gives the same verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.helpers.plugin import make_dataset

pytest.importorskip("pykatex", reason="the layout step renders with KaTeX: the facts extra")

from pytest_ocrmetrics.metrics.facts import math_layout  # noqa: E402

# "\," adds an <mspace> to the MathML: only the layout step (step 3) can accept this spelling
REFERENCE = "\\int_{a}^{b} f(x) d x=F(b)-F(a)"
DOCS = {"p1.png": {"full_text": "an integral", "facts": [{"id": "p1-math", "type": "math", "math": REFERENCE}]}}
PREDICTIONS = {"p1": "$\\int_{a}^{b} f(x) \\, dx = F(b) - F(a)$"}


class _Page:
    def set_content(self, html: str) -> None:
        pass

    def evaluate(self, script: str) -> Any:
        return [["x", 0.0, 0.0, 10.0, 10.0]]  # every equation laid out alike: the layouts match

    def is_closed(self) -> bool:
        return False


class _StandIn:
    def new_page(self, **kwargs: Any) -> _Page:
        return _Page()

    def close(self) -> None:
        pass

    def stop(self) -> None:
        pass


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    fresh = math_layout._Browser()

    def launch() -> None:
        fresh.playwright = fresh.browser = _StandIn()

    monkeypatch.setattr(fresh, "_launch", launch)
    monkeypatch.setattr(math_layout, "_BROWSER", fresh)
    math_layout.render_spans.cache_clear()
    yield fresh
    fresh.close()
    math_layout.render_spans.cache_clear()


def _fact(path: Path) -> dict[str, Any]:
    [fact] = json.loads(path.read_text(encoding="utf-8"))["facts"]
    return fact


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-json=run.json", *args)


def test_a_second_run_starts_no_browser(pytester: pytest.Pytester, browser: Any) -> None:
    make_dataset(pytester.path, DOCS, PREDICTIONS)
    _run(pytester, "--ocr-cache-dir=cache").assert_outcomes(passed=1)
    assert _fact(pytester.path / "run.json")["passed"] is True
    assert math_layout.browser_launches() == 1
    assert len(list((pytester.path / "cache" / "math-layout").glob("*/*.json"))) == 2  # reference and candidate
    math_layout.render_spans.cache_clear()  # a new process would start with nothing in memory
    browser.close()
    _run(pytester, "--ocr-cache-dir=cache").assert_outcomes(passed=1)
    assert _fact(pytester.path / "run.json")["passed"] is True
    assert math_layout.browser_launches() == 1  # every layout read from the cache


def test_without_an_output_cache_layouts_are_not_stored(pytester: pytest.Pytester, browser: Any) -> None:
    make_dataset(pytester.path, DOCS, PREDICTIONS)
    _run(pytester, "--ocr-cache-dir=cache", "--ocr-no-cache").assert_outcomes(passed=1)
    assert math_layout.browser_launches() == 1
    assert not (pytester.path / "cache").exists()
    math_layout.render_spans.cache_clear()
    browser.close()
    _run(pytester, "--ocr-no-cache").assert_outcomes(passed=1)
    assert math_layout.browser_launches() == 2


def test_xdist_workers_store_the_layouts(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    if not math_layout.layout_available():
        pytest.skip("the layout step needs Playwright, pykatex and chromium (OCR_CHROMIUM)")
    make_dataset(pytester.path, DOCS, PREDICTIONS)
    _run(pytester, "--ocr-cache-dir=cache", "-n", "2").assert_outcomes(passed=1)
    first = _fact(pytester.path / "run.json")
    entries = sorted((pytester.path / "cache" / "math-layout").glob("*/*.json"))
    assert len(entries) == 2 and first["passed"] is True
    stamps = [entry.stat().st_mtime_ns for entry in entries]
    _run(pytester, "--ocr-cache-dir=cache", "-n", "2").assert_outcomes(passed=1)
    assert _fact(pytester.path / "run.json")["passed"] is True
    assert [entry.stat().st_mtime_ns for entry in entries] == stamps  # read, not written again
