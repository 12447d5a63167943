"""Step 3 of a ``math`` fact: compare two equations by the layout of their rendered symbols, in a headless browser.

KaTeX (``pykatex``, in-process) writes each equation's HTML; Chromium, driven by Playwright, lays it out with KaTeX's
stylesheet (``katex.min.css``, KaTeX 0.16, MIT licence, as shipped with olmOCR-bench: no web fonts, like the
benchmark's page) in the benchmark's page (800x400, 24px, centred); the innermost spans with text and their boxes are
read back. The reference matches when every one of its characters can be given a distinct candidate character of
the same text whose nearest neighbours up, down, left and right (centres within 5px) correspond
(``olmocr/bench/katex/render.py::compare_rendered_equations``).

The browser is ``OCR_CHROMIUM``, else ``chromium`` on the PATH; without it (or without Playwright) the step is
skipped and the fact's explanation says so.

Layouts are kept on disk by content (:class:`LayoutCache`, in ``math-layout/`` of the folder
:func:`pytest_ocrmetrics.metrics.result_cache.use_folder` sets: the plugin sets its output cache's folder): the key is
the equation, the KaTeX that renders it (:func:`katex_version`) and the stylesheet, so a second run lays out nothing
and starts no browser. Chromium starts, once per process, only for an equation the cache does not hold
(:func:`browser_launches` counts the starts). A corrupt entry, or one that is not a regular file (a FIFO left by a CI
cache restore), is never a hang or a crash: it warns (:class:`MathLayoutCacheWarning`), the layout is computed again
and the entry replaced. Step 2's MathML is kept the same way beside it (:class:`MathmlCache`, ``math-mathml/``), so a
warm run does not start KaTeX's JavaScript engine either. """

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import math
import os
import re
import shutil
import stat
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

from pytest_ocrmetrics.core.files import write_bytes_atomic

__all__ = ["Span", "layout_available", "render_spans", "spans_match", "LayoutUnavailable", "LayoutCache",
           "MathmlCache", "MathLayoutCacheWarning", "layout_cache", "mathml_cache", "katex_version",
           "browser_launches"]

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


class MathLayoutCacheWarning(UserWarning):
    """A stored equation layout could not be read or written; the layout is computed (again) instead."""


@dataclass(frozen=True)
class Span:
    """One rendered character (or symbol) and its box in CSS pixels."""

    text: str
    x: float
    y: float
    width: float
    height: float


#: What the layout step needs, as a sentence's parenthesis: the package that drives the browser, and the browser.
INSTALL_HINT = ("pip install 'pytest-ocrmetrics[facts]' for Playwright, and Chromium: apt-get install chromium, or "
                "set OCR_CHROMIUM to its executable")


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
        self.launches = 0  # Chromium starts in this process (browser_launches())
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
            self._launch()
            self.launches += 1
            self.open_page = None
        if self.open_page is None or self.open_page.is_closed():  # one page, reused: a new page per equation is slow
            self.open_page = self.browser.new_page(viewport={"width": 800, "height": 400})
        return self.open_page

    def _launch(self) -> None:  # on the browser thread only
        """Start Playwright and headless Chromium (``self.playwright``, ``self.browser``)."""
        try:
            from playwright.sync_api import sync_playwright  # type: ignore[import-not-found,unused-ignore]
        except ImportError:
            raise LayoutUnavailable(f"Playwright is not installed ({INSTALL_HINT})") from None
        chromium = _chromium()
        if chromium is None:
            raise LayoutUnavailable(f"no chromium executable ({INSTALL_HINT})")
        self.playwright = sync_playwright().start()
        self.browser = self.playwright.chromium.launch(executable_path=chromium, args=_LAUNCH_ARGS)

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


def browser_launches() -> int:
    """How many times this process started Chromium for the layout step (a count, for tests and benchmarks: a run
    whose equations are all in the :class:`LayoutCache` starts none)."""
    return _BROWSER.launches


_LAYOUT_FORMAT = 1  # bumped when an entry's layout or the key's meaning changes
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


@functools.lru_cache(maxsize=1)
def katex_version() -> str:
    """The KaTeX that renders equations, as the layout cache keys it: ``pykatex`` and its version (each pykatex
    release bundles one KaTeX build: 0.1.1 holds KaTeX 0.16.22), with the digest of the stylesheet the page uses. A
    new pykatex, hence a new KaTeX, or another stylesheet makes new entries; "" without pykatex.

    >>> katex_version().startswith("pykatex ")  # doctest: +SKIP
    True
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        katex = f"pykatex {version('pykatex')}"
    except PackageNotFoundError:
        return ""
    return f"{katex}; stylesheet sha256:{hashlib.sha256(_CSS.read_bytes()).hexdigest()[:16]}"


_T = TypeVar("_T")


class _EquationStore:
    """Entries about equations stored by content in ``directory`` (see :class:`LayoutCache`, :class:`MathmlCache`):
    the file layout, the keys, the atomic writes, the counters and the handling of bad entries they share."""

    _NAME, _WHAT, _REDONE = "math layout cache", "layout", "laid out"  # how warnings name the cache and its entries

    def __init__(self, directory: Path | str, *, refresh: bool = False) -> None:
        self.directory = Path(directory)
        self.refresh = refresh
        self.hits = self.misses = self.writes = self.corrupt = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.directory)!r}, hits={self.hits}, misses={self.misses})"

    #: extra key material of a subclass's entries (none for layouts, so their keys are what they always were)
    _KIND: dict[str, str] = {}

    def key(self, equation: str) -> str:
        """The entry key of ``equation``: it changes with the equation's text, the KaTeX version and the format."""
        material = json.dumps({"format": _LAYOUT_FORMAT, "katex": katex_version(), "equation": equation, **self._KIND},
                              sort_keys=True, ensure_ascii=True)
        return hashlib.sha256(material.encode("ascii")).hexdigest()

    def path_for(self, key: str) -> Path:
        """Where the entry for ``key`` lives."""
        return self.directory / key[:2] / f"{key}.json"

    def _get(self, equation: str, decode: Callable[[Any, str], _T]) -> _T | None:
        """The stored entry of ``equation`` decoded by ``decode(entry, key)`` (``ValueError`` for a bad entry), or
        None: a miss, a refresh, or a bad entry (warned)."""
        if self.refresh:
            self._count("misses")
            return None
        key = self.key(equation)
        path = self.path_for(key)
        try:
            descriptor = os.open(path, _OPEN_FLAGS)  # O_NONBLOCK: a FIFO is not waited on
        except (FileNotFoundError, NotADirectoryError):
            self._count("misses")
            return None
        except OSError as exc:
            self._bad(path, f"cannot be read ({exc})")
            return None
        try:
            mode = os.fstat(descriptor).st_mode
            if not stat.S_ISREG(mode):
                self._bad(path, f"is not a regular file (mode {stat.filemode(mode)})")
                return None
            with os.fdopen(descriptor, "rb", closefd=False) as handle:
                data = handle.read()
        except OSError as exc:
            self._bad(path, f"cannot be read ({exc})")
            return None
        finally:
            os.close(descriptor)
        try:
            value = decode(json.loads(data.decode("utf-8")), key)
        except (UnicodeDecodeError, ValueError, TypeError, RecursionError) as exc:
            self._bad(path, f"is not a {self._WHAT} entry ({type(exc).__name__}: {exc})")
            return None
        self._count("hits")
        return value

    def _put(self, equation: str, payload: dict[str, Any]) -> None:
        key = self.key(equation)
        path = self.path_for(key)
        data = json.dumps({"format": _LAYOUT_FORMAT, "key": key, "katex": katex_version(), "equation": equation,
                           **payload}, ensure_ascii=True, allow_nan=False).encode("ascii")
        try:
            write_bytes_atomic(path, data, prefix=f".{key[:16]}-")
        except OSError as exc:
            warnings.warn(f"could not write the {self._NAME} entry {path}: {exc}; the {self._WHAT} is used but not "
                          "stored", MathLayoutCacheWarning, stacklevel=3)
            return
        self._count("writes")

    def _count(self, counter: str) -> None:
        with self._lock:
            setattr(self, counter, getattr(self, counter) + 1)

    def _bad(self, path: Path, problem: str) -> None:
        with self._lock:
            self.corrupt += 1
            self.misses += 1
        warnings.warn(f"{self._NAME} entry {path} {problem}; ignoring it, the equation is {self._REDONE} again and "
                      "the entry replaced", MathLayoutCacheWarning, stacklevel=4)


_Store = TypeVar("_Store", bound="_EquationStore")


class LayoutCache(_EquationStore):
    """Equation layouts (the :class:`Span` boxes Chromium gave them) stored by content in ``directory``.

    Layout: ``<directory>/<key[:2]>/<key>.json``, ``key`` the SHA-256 of the equation, :func:`katex_version` and the
    entry format; each entry written atomically (a temporary file, then :func:`os.replace`), so xdist workers can
    write at once. An entry that cannot be read, is not a regular file (never opened for a blocking read), is not
    JSON or not a layout of that key warns with :class:`MathLayoutCacheWarning` naming it and counts as a miss: the
    layout is computed again and the entry replaced. ``refresh=True`` reads nothing but still writes. ``hits``,
    ``misses``, ``writes`` and ``corrupt`` count what happened.

    Example::

        >>> from pytest_ocrmetrics.metrics import result_cache
        >>> result_cache.use_folder(tmp_path)  # layouts in tmp_path / "math-layout"  # doctest: +SKIP
        >>> render_spans("x^{2}")  # the first run: Chromium lays it out, the entry is written  # doctest: +SKIP
    """

    def get(self, equation: str) -> tuple[Span, ...] | None:
        """The stored layout of ``equation``, or None (a miss, a refresh, or a bad entry: warned)."""
        return self._get(equation, _spans_from_entry)

    def put(self, equation: str, spans: tuple[Span, ...]) -> None:
        """Store the layout of ``equation`` atomically; a failed write warns and is otherwise ignored."""
        self._put(equation, {"spans": [[s.text, s.x, s.y, s.width, s.height] for s in spans]})


class MathmlCache(_EquationStore):
    """KaTeX's reduced MathML of equations (step 2 of a ``math`` fact, :func:`~pytest_ocrmetrics.metrics.facts.
    equations.render_mathml`) stored by content like :class:`LayoutCache`'s layouts, with its key (the KaTeX version
    included) and its handling of bad entries: a run whose equations are all stored renders none, so KaTeX's
    JavaScript engine is never started. An equation KaTeX rejects is stored with KaTeX's message."""

    _KIND = {"kind": "mathml"}
    _NAME, _WHAT, _REDONE = "math MathML cache", "MathML", "rendered"

    def get(self, equation: str) -> tuple[str, str | None] | None:
        """``(mathml, None)`` or ``("", error)`` stored for ``equation``, or None (a miss, a refresh, a bad entry)."""
        return self._get(equation, _mathml_from_entry)

    def put(self, equation: str, mathml: str, error: str | None = None) -> None:
        """Store ``equation``'s reduced MathML, or the error KaTeX raised; a failed write warns."""
        self._put(equation, {"mathml": mathml, "error": error})


def _mathml_from_entry(entry: Any, key: str) -> tuple[str, str | None]:
    """The (mathml, error) of a decoded MathML entry, checked (``ValueError`` for anything ``put`` does not write)."""
    if not isinstance(entry, dict) or entry.get("format") != _LAYOUT_FORMAT or entry.get("key") != key:
        raise ValueError("another format or key")
    mathml, error = entry.get("mathml"), entry.get("error")
    if not isinstance(mathml, str) or not (error is None or isinstance(error, str)):
        raise ValueError("mathml is not a string or error is neither null nor a string")
    return mathml, error


def _spans_from_entry(entry: Any, key: str) -> tuple[Span, ...]:
    """The spans of a decoded entry, checked (``ValueError`` for anything :meth:`LayoutCache.put` does not write)."""
    if not isinstance(entry, dict) or entry.get("format") != _LAYOUT_FORMAT or entry.get("key") != key:
        raise ValueError("another format or key")
    rows = entry.get("spans")
    if not isinstance(rows, list):
        raise ValueError("spans is not a list")
    spans = []
    for row in rows:
        if (not isinstance(row, list) or len(row) != 5 or not isinstance(row[0], str)
                or not all(type(v) in (int, float) and math.isfinite(v) for v in row[1:])):
            raise ValueError(f"a span is not [text, x, y, width, height]: {str(row)[:60]}")
        spans.append(Span(row[0], float(row[1]), float(row[2]), float(row[3]), float(row[4])))
    return tuple(spans)


# the store in use per subfolder of the output cache's folder, remade when that folder or its refresh changes
_STORES: dict[str, _EquationStore] = {}


def _store_in(subfolder: str, kind: type[_Store]) -> _Store | None:
    """The ``kind`` store in ``subfolder`` of :func:`pytest_ocrmetrics.metrics.result_cache.use_folder`'s folder (the
    plugin sets it to its output cache's folder at the start of each session), or None when there is none."""
    from pytest_ocrmetrics.metrics.result_cache import folder

    base, refresh = folder()
    if base is None:
        return None
    directory = base / subfolder
    cache = _STORES.get(subfolder)
    if not isinstance(cache, kind) or cache.directory != directory or cache.refresh != refresh:
        cache = _STORES[subfolder] = kind(directory, refresh=refresh)
    return cache


def mathml_cache() -> MathmlCache | None:
    """The :class:`MathmlCache` in use: ``math-mathml/`` beside :func:`layout_cache`'s ``math-layout/``, or None
    (MathML kept in memory only)."""
    return _store_in("math-mathml", MathmlCache)


def layout_cache() -> LayoutCache | None:
    """The :class:`LayoutCache` in use: ``math-layout/`` in the output cache's folder, or None (layouts kept in
    memory only)."""
    return _store_in("math-layout", LayoutCache)


@functools.lru_cache(maxsize=4096)
def render_spans(equation: str) -> tuple[Span, ...]:
    """The innermost text spans of ``equation`` rendered by KaTeX in display mode and laid out by Chromium.

    Read from the :class:`LayoutCache` when one is in use (:func:`layout_cache`) and it holds the equation: no
    browser then; a layout computed is stored there. Raises :class:`LayoutUnavailable` without a browser,
    ``ValueError`` when KaTeX rejects the equation.
    """
    cache = layout_cache()
    if cache is not None:
        stored = cache.get(equation)
        if stored is not None:
            return stored
    try:
        import pykatex  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise LayoutUnavailable("pykatex is not installed") from None
    try:
        html = pykatex.renderToString(equation, displayMode=True, output=pykatex.OUTPUT_HTML_AND_MATHML)
    except Exception as exc:
        raise ValueError(f"KaTeX cannot render {equation!r}: {exc}") from None
    rows = _BROWSER.run(html)
    spans = tuple(Span(str(text), float(x), float(y), float(w), float(h)) for text, x, y, w, h in json.loads(
        json.dumps(rows)))
    if cache is not None:
        cache.put(equation, spans)
    return spans


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
