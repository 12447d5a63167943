"""Step 3 of a ``math`` fact: compare two equations by the layout of their rendered symbols, in a headless browser.

KaTeX (``pykatex``, in-process) writes each equation's HTML; Chromium, driven by Playwright, lays it out with KaTeX's
stylesheet (``katex.min.css``, KaTeX 0.16, MIT licence, as shipped with olmOCR-bench: no web fonts, like the
benchmark's page) in the benchmark's page (800x400, 24px, centred); the innermost spans with text and their boxes are
read back. The reference matches when every one of its characters can be given a distinct candidate character of
the same text whose nearest neighbours up, down, left and right (centres within 5px) correspond
(``olmocr/bench/katex/render.py::compare_rendered_equations``).

The browser is ``OCR_CHROMIUM``, else ``chromium`` on the PATH; without it (or without Playwright) the step is
skipped and the fact's explanation says so.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import re
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Span", "layout_available", "render_spans", "spans_match", "LayoutUnavailable"]

_CSS = Path(__file__).with_name("katex.min.css")
_SPACES = re.compile(r"[\s\u200a-\u200d\u2060\ufeff]+", flags=re.UNICODE)
_LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                "--no-first-run"]
_PAGE = """<!DOCTYPE html><html><head><style>
body { display: flex; justify-content: center; align-items: center; height: 100vh; margin: 0;
       background-color: white; color: black; }
#equation-container { padding: 0; font-size: 24px; }
</style><style>%s</style></head><body><div id="equation-container">%s</div></body></html>"""
_SPANS_JS = """() => Array.from(document.querySelectorAll('span'))
  .filter(s => s.children.length === 0 && /\\S/.test(s.textContent))
  .map(s => { const r = s.getBoundingClientRect();
              return [s.textContent.trim(), r.x, r.y, r.width, r.height]; })"""


class LayoutUnavailable(RuntimeError):
    """No browser (or no Playwright, or no KaTeX) for the layout step."""


@dataclass(frozen=True)
class Span:
    """One rendered character (or symbol) and its box in CSS pixels."""

    text: str
    x: float
    y: float
    width: float
    height: float


def _chromium() -> str | None:
    path = os.environ.get("OCR_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    return path if path and Path(path).is_file() else None


def layout_available() -> bool:
    """True when Playwright, a Chromium binary and pykatex are all present."""
    try:
        import playwright.sync_api  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
        import pykatex  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
    except ImportError:
        return False
    return _chromium() is not None


class _Browser:
    """One headless Chromium for the process, owned by one background thread.

    Playwright's sync API runs an event loop in the thread that starts it, and a second ``sync_playwright()`` in that
    thread fails ("using Playwright Sync API inside the asyncio loop"). Keeping ours in a thread of its own leaves the
    caller's thread free, so a test suite that drives its own browser still can.
    """

    def __init__(self) -> None:
        self.executor: Any = None
        self.lock = threading.Lock()
        self.playwright: Any = None
        self.browser: Any = None
        self.open_page: Any = None
        self.css = _CSS.read_text(encoding="utf-8")

    def run(self, html: str) -> Any:
        """The spans of ``html`` laid out in the browser's page (called from any thread)."""
        with self.lock:
            if self.executor is None:
                from concurrent.futures import ThreadPoolExecutor

                self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ocrmetrics-katex")
            executor = self.executor
        return executor.submit(self._evaluate, html).result()

    def _evaluate(self, html: str) -> Any:  # on the browser thread only
        try:
            page = self._page()
        except LayoutUnavailable:
            raise
        except Exception as exc:  # Playwright cannot start the browser
            raise LayoutUnavailable(f"cannot start chromium: {exc}") from None
        try:
            page.set_content(_PAGE % (self.css, html))
            return page.evaluate(_SPANS_JS)
        except Exception as exc:  # the browser went away: start afresh next time
            self._close_browser()
            raise LayoutUnavailable(f"chromium failed: {exc}") from None

    def _page(self) -> Any:
        if self.browser is None:
            from playwright.sync_api import sync_playwright  # type: ignore[import-not-found,unused-ignore]

            chromium = _chromium()
            if chromium is None:
                raise LayoutUnavailable("no chromium executable (set OCR_CHROMIUM)")
            self.playwright = sync_playwright().start()
            self.browser = self.playwright.chromium.launch(executable_path=chromium, args=_LAUNCH_ARGS)
            self.open_page = None
        if self.open_page is None or self.open_page.is_closed():  # one page, reused: a new page per equation is slow
            self.open_page = self.browser.new_page(viewport={"width": 800, "height": 400})
        return self.open_page

    def _close_browser(self) -> None:  # on the browser thread only
        try:
            if self.browser is not None:
                self.browser.close()
            if self.playwright is not None:
                self.playwright.stop()
        except Exception:  # the browser process may already be gone at exit
            pass
        self.browser = self.playwright = self.open_page = None

    def close(self) -> None:
        """Stop the browser and its thread (at exit)."""
        with self.lock:
            executor, self.executor = self.executor, None
        if executor is not None:
            try:
                executor.submit(self._close_browser).result(timeout=30)
            except Exception:  # noqa: BLE001 - nothing left to do at exit
                pass
            executor.shutdown(wait=False)


_BROWSER = _Browser()
atexit.register(_BROWSER.close)


@functools.lru_cache(maxsize=4096)
def render_spans(equation: str) -> tuple[Span, ...]:
    """The innermost text spans of ``equation`` rendered by KaTeX in display mode and laid out by Chromium.

    Raises :class:`LayoutUnavailable` without a browser, ``ValueError`` when KaTeX rejects the equation.
    """
    try:
        import pykatex  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise LayoutUnavailable("pykatex is not installed") from None
    try:
        html = pykatex.renderToString(equation, displayMode=True, output=pykatex.OUTPUT_HTML_AND_MATHML)
    except Exception as exc:
        raise ValueError(f"KaTeX cannot render {equation!r}: {exc}") from None
    rows = _BROWSER.run(html)
    return tuple(Span(str(text), float(x), float(y), float(w), float(h)) for text, x, y, w, h in json.loads(
        json.dumps(rows)))


def _characters(spans: tuple[Span, ...]) -> list[Span]:
    """Whitespace removed, each span split into equal-width characters (the benchmark's ``expand_span_info``)."""
    out = []
    for span in spans:
        text = _SPACES.sub("", span.text)
        for index, char in enumerate(text):
            out.append(Span(char, span.x + span.width * index / len(text), span.y, span.width / len(text),
                            span.height))
    return out


def _neighbours(spans: list[Span], tol: float = 5) -> list[dict[str, int | None]]:
    result = []
    for i, span in enumerate(spans):
        cx, cy = span.x + span.width / 2, span.y + span.height / 2
        best: dict[str, tuple[float, int] | None] = {"up": None, "down": None, "left": None, "right": None}
        for j, other in enumerate(spans):
            if i == j:
                continue
            ox, oy = other.x + other.width / 2, other.y + other.height / 2
            for direction, ok, dist in (("up", oy < cy and abs(ox - cx) <= tol, cy - oy),
                                        ("down", oy > cy and abs(ox - cx) <= tol, oy - cy),
                                        ("left", ox < cx and abs(oy - cy) <= tol, cx - ox),
                                        ("right", ox > cx and abs(oy - cy) <= tol, ox - cx)):
                current = best[direction]
                if ok and (current is None or dist < current[0]):
                    best[direction] = (dist, j)
        result.append({d: (v[1] if v is not None else None) for d, v in best.items()})
    return result


def spans_match(reference: tuple[Span, ...], candidate: tuple[Span, ...]) -> bool:
    """Whether every reference character maps to a distinct candidate character with corresponding neighbours."""
    ref, cand = _characters(reference), _characters(candidate)
    options = [[j for j, c in enumerate(cand) if c.text == r.text] for r in ref]
    if any(not o for o in options):
        return False
    ref_nb, cand_nb = _neighbours(ref), _neighbours(cand)
    used = [False] * len(cand)
    assignment: dict[int, int] = {}

    def backtrack(i: int) -> bool:
        if i == len(ref):
            return True
        for j in options[i]:
            if used[j]:
                continue
            assignment[i] = j
            used[j] = True
            valid = True
            for direction in ("up", "down", "left", "right"):
                r_nb, c_nb = ref_nb[i][direction], cand_nb[j][direction]
                if r_nb is None:
                    continue
                if c_nb is None:
                    valid = False
                    break
                if (assignment[r_nb] != c_nb) if r_nb in assignment else (cand[c_nb].text != ref[r_nb].text):
                    valid = False
                    break
            if valid and backtrack(i + 1):
                return True
            used[j] = False
            del assignment[i]
        return False

    return backtrack(0)
