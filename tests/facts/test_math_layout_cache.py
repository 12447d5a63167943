"""Math facts without a browser per run (issue 21, item 3): equation layouts are kept on disk by content, keyed by
the KaTeX version, so a second run starts no Chromium; a corrupt entry (or a FIFO) is recomputed with a warning.

Chromium starts are counted with ``math_layout.browser_launches()`` (a seam, not a timing). Most tests use a stand-in
browser (``_Browser._launch`` replaced), so they run without Chromium; one runs the real one when it is there.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.hang_guard import within

pytest.importorskip("pykatex", reason="the layout step renders with KaTeX: the facts extra")

from pytest_ocrmetrics.metrics import result_cache  # noqa: E402
from pytest_ocrmetrics.metrics.facts import math_layout  # noqa: E402
from pytest_ocrmetrics.metrics.facts.math_layout import MathLayoutCacheWarning  # noqa: E402

ROWS = [["x", 10.0, 20.0, 12.5, 30.0], ["2", 22.5, 12.0, 8.0, 20.0]]


class _Page:
    def __init__(self, browser: _StandInBrowser) -> None:
        self.browser = browser

    def set_content(self, html: str) -> None:
        self.browser.pages_laid_out += 1

    def evaluate(self, script: str) -> Any:
        return ROWS

    def is_closed(self) -> bool:
        return False


class _StandInBrowser:
    def __init__(self) -> None:
        self.pages_laid_out = 0

    def new_page(self, **kwargs: Any) -> _Page:
        return _Page(self)

    def close(self) -> None:
        pass


class _StandInPlaywright:
    def stop(self) -> None:
        pass


def _stand_in_launch(self: Any) -> None:
    self.playwright, self.browser = _StandInPlaywright(), _StandInBrowser()


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A fresh layout browser for this test whose Chromium is a stand-in (no process is started)."""
    fresh = math_layout._Browser()
    monkeypatch.setattr(fresh, "_launch", _stand_in_launch.__get__(fresh))
    monkeypatch.setattr(math_layout, "_BROWSER", fresh)
    math_layout.render_spans.cache_clear()
    yield fresh
    fresh.close()
    math_layout.render_spans.cache_clear()


@pytest.fixture
def cache_folder(tmp_path: Path) -> Iterator[Path]:
    result_cache.use_folder(tmp_path / "outputs")
    yield tmp_path / "outputs"
    result_cache.use_folder(None)


def _new_session(browser: Any) -> None:
    """What a second pytest run starts from: no layout in memory, no browser running."""
    math_layout.render_spans.cache_clear()
    browser.close()


def test_a_second_run_starts_no_browser(browser: Any, cache_folder: Path) -> None:
    first = math_layout.render_spans("x^{2}")
    assert math_layout.browser_launches() == 1
    assert first == tuple(math_layout.Span(*row) for row in ROWS)
    entries = list((cache_folder / "math-layout").glob("*/*.json"))
    assert len(entries) == 1 and json.loads(entries[0].read_text())["equation"] == "x^{2}"
    _new_session(browser)
    assert math_layout.render_spans("x^{2}") == first  # read back exactly
    assert math_layout.browser_launches() == 1  # no second start
    assert math_layout.layout_cache().hits == 1  # type: ignore[union-attr]
    math_layout.render_spans("y^{3}")  # an equation the cache does not hold: the browser starts, once
    math_layout.render_spans("z^{4}")
    assert math_layout.browser_launches() == 2


def test_without_a_cache_folder_every_run_starts_the_browser(browser: Any) -> None:
    result_cache.use_folder(None)
    math_layout.render_spans("x^{2}")
    _new_session(browser)
    math_layout.render_spans("x^{2}")
    assert math_layout.browser_launches() == 2


def test_the_key_includes_the_katex_version(browser: Any, cache_folder: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    cache = math_layout.layout_cache()
    assert cache is not None
    assert "pykatex " in math_layout.katex_version()
    key = cache.key("x^{2}")
    math_layout.render_spans("x^{2}")
    monkeypatch.setattr(math_layout, "katex_version", lambda: "pykatex 9.9.9; stylesheet sha256:0")
    assert cache.key("x^{2}") != key and cache.key("x^{2}") == cache.key("x^{2}")
    _new_session(browser)
    math_layout.render_spans("x^{2}")  # another KaTeX: laid out again, not read from the old KaTeX's entry
    assert math_layout.browser_launches() == 2
    assert len(list((cache_folder / "math-layout").glob("*/*.json"))) == 2


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe", b'{"format": 1, "key": "KEY", "spans": [["x", 1]]}',
                                     b'{"format": 1, "key": "KEY", "spans": [["x", NaN, 0, 1, 1]]}', b"[]",
                                     b'{"format": 1, "key": "another", "spans": []}', "folder", "fifo"],
                         ids=["not-json", "not-utf8", "short-span", "nan", "list", "wrong-key", "folder", "fifo"])
def test_a_bad_entry_is_recomputed_with_a_warning(browser: Any, cache_folder: Path, content: Any) -> None:
    cache = math_layout.layout_cache()
    assert cache is not None
    key = cache.key("x^{2}")
    path = cache.path_for(key)
    path.parent.mkdir(parents=True)
    if content == "folder":
        path.mkdir()
    elif content == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs on this platform")
        os.mkfifo(path)
    else:
        path.write_bytes(content.replace(b"KEY", key.encode()))
    with pytest.warns(MathLayoutCacheWarning, match=f"math layout cache entry {path}") as warned:
        # the read alone, bounded (KaTeX itself must run in this thread): a FIFO is never waited on
        assert within(lambda: cache.get("x^{2}"), fifos=[path] if content == "fifo" else []) is None
    assert len(warned) == 1 and "laid out again" in str(warned[0].message)
    with pytest.warns(MathLayoutCacheWarning, match=f"math layout cache entry {path}"):
        spans = math_layout.render_spans("x^{2}")
    assert spans == tuple(math_layout.Span(*row) for row in ROWS)
    assert math_layout.browser_launches() == 1 and cache.corrupt == 2
    if content != "folder":  # the entry was replaced by a good one (a folder cannot be renamed over)
        assert path.is_file() and cache.get("x^{2}") == spans


def test_refresh_reads_nothing_but_writes(browser: Any, tmp_path: Path) -> None:
    result_cache.use_folder(tmp_path, refresh=True)
    try:
        math_layout.render_spans("x^{2}")
        _new_session(browser)
        math_layout.render_spans("x^{2}")
        assert math_layout.browser_launches() == 2
        assert len(list((tmp_path / "math-layout").glob("*/*.json"))) == 1
    finally:
        result_cache.use_folder(None)


def test_with_the_real_browser_a_second_run_starts_none(tmp_path: Path) -> None:
    if not math_layout.layout_available():
        pytest.skip("the layout step needs Playwright, pykatex and chromium (OCR_CHROMIUM)")
    result_cache.use_folder(tmp_path)
    try:
        math_layout.render_spans.cache_clear()
        math_layout._BROWSER.close()
        before = math_layout.browser_launches()
        first = math_layout.render_spans("\\frac{a}{b}+c_{1}")
        assert math_layout.browser_launches() == before + 1
        math_layout.render_spans.cache_clear()
        math_layout._BROWSER.close()
        assert math_layout.render_spans("\\frac{a}{b}+c_{1}") == first
        assert math_layout.browser_launches() == before + 1
    finally:
        result_cache.use_folder(None)
        math_layout.render_spans.cache_clear()


@pytest.fixture
def counted_katex(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """pykatex's renderToString, each equation it renders recorded (the MathML step's KaTeX calls)."""
    import pykatex

    from pytest_ocrmetrics.metrics.facts import equations

    rendered: list[str] = []
    real = pykatex.renderToString

    def counting(equation: str, **options: Any) -> Any:
        rendered.append(equation)
        return real(equation, **options)

    monkeypatch.setattr(pykatex, "renderToString", counting)
    equations.render_mathml.cache_clear()
    yield rendered
    equations.render_mathml.cache_clear()


def test_mathml_is_kept_on_disk_so_a_second_run_renders_nothing(counted_katex: list[str],
                                                                 cache_folder: Path) -> None:
    from pytest_ocrmetrics.metrics.facts import equations

    first = equations.render_mathml("x^{2}")
    with pytest.raises(equations.MathRenderError, match="KaTeX cannot render") as rejected:
        equations.render_mathml("\\frac{")
    assert counted_katex == ["x^{2}", "\\frac{"]
    assert len(list((cache_folder / "math-mathml").glob("*/*.json"))) == 2
    equations.render_mathml.cache_clear()  # a second run: nothing in memory
    assert equations.render_mathml("x^{2}") == first
    with pytest.raises(equations.MathRenderError) as again:  # the rejection too, with KaTeX's own message
        equations.render_mathml("\\frac{")
    assert str(again.value) == str(rejected.value)
    assert counted_katex == ["x^{2}", "\\frac{"]  # no KaTeX call in the second run
    cache = math_layout.mathml_cache()
    assert cache is not None and cache.hits == 2 and cache.key("x^{2}") != math_layout.LayoutCache(
        cache_folder / "math-layout").key("x^{2}")  # its own keys, beside the layouts


@pytest.mark.parametrize("content", [b"{not json", b'{"format": 1, "key": "KEY", "mathml": 3}',
                                     b'{"format": 1, "key": "KEY", "mathml": "", "error": 1}', "fifo"],
                         ids=["not-json", "mathml-not-text", "error-not-text", "fifo"])
def test_a_bad_mathml_entry_is_rendered_again_with_a_warning(counted_katex: list[str], cache_folder: Path,
                                                             content: Any) -> None:
    from pytest_ocrmetrics.metrics.facts import equations

    cache = math_layout.mathml_cache()
    assert cache is not None
    path = cache.path_for(cache.key("x^{2}"))
    path.parent.mkdir(parents=True)
    if content == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs on this platform")
        os.mkfifo(path)
    else:
        path.write_bytes(content.replace(b"KEY", cache.key("x^{2}").encode()))
    with pytest.warns(MathLayoutCacheWarning, match=f"math MathML cache entry {path}.*rendered again"):
        # the read alone, bounded (KaTeX itself must run in this thread): a FIFO is never waited on
        assert within(lambda: cache.get("x^{2}"), fifos=[path] if content == "fifo" else []) is None
    with pytest.warns(MathLayoutCacheWarning, match=f"math MathML cache entry {path}"):
        mathml = equations.render_mathml("x^{2}")
    assert counted_katex == ["x^{2}"] and "<msup>" in mathml and cache.corrupt == 2
    assert path.is_file() and cache.get("x^{2}") == (mathml, None)  # replaced by a good entry


def test_without_a_cache_folder_mathml_is_rendered_each_run(counted_katex: list[str]) -> None:
    from pytest_ocrmetrics.metrics.facts import equations

    result_cache.use_folder(None)
    equations.render_mathml("x^{2}")
    equations.render_mathml.cache_clear()
    equations.render_mathml("x^{2}")
    assert counted_katex == ["x^{2}", "x^{2}"]
