"""Progress lines on long runs (``--ocr-progress``): pages done / total, pages per second and an ETA.

A run that recognises pages live (not from the output cache, not replayed) prints, at most every
:data:`INTERVAL_S` seconds, one line such as ::

    [ocr] 120/320 pages · 40 cached · 2.7 pages/s · ETA 1m14s (tesseract)

and one closing line after the tests (``[ocr] 320/320 pages in 1m58s · 2.7 pages/s``). Under xdist the controller
prints (each worker tells it, on its first report, how many pages it collected); workers print nothing.

What is counted:

- a *page* is one document through one engine (two test functions over one dataset, or the ``--ocr-fact-items`` of
  one page, count it once); the total is the number of pages collected, after deselection and ``--ocr-shard``;
- a page is *live* when an engine recognised it in this run: its output is not from the output cache and its engine
  does not read outputs made elsewhere (``replay``);
- the rate is live pages over the time since the first test started;
- the ETA assumes the remaining pages come from the cache (or replay) in the same share as the finished ones and that
  such a page costs nothing: remaining live pages (remaining × live share) / rate, which is elapsed × remaining / done.

The arithmetic and the wording are pure functions of numbers (tested with a fake clock, no sleeping); the
:class:`ProgressTracker` counts pages against an injectable clock; :class:`OcrProgressHooks` is the pytest glue.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Generator, Mapping

import pytest

__all__ = ["INTERVAL_S", "OcrProgressHooks", "ProgressTracker", "collected_pages", "eta_seconds", "final_line",
           "format_duration", "format_rate", "pages_per_second", "progress_line", "register_progress",
           "end_open_line", "write_between_results"]

INTERVAL_S = 10.0  # seconds between two progress lines: calm enough for CI logs (tests set it to 0)
REPLAYING_ENGINES = frozenset({"replay"})  # engines that read outputs made elsewhere: reading one is no recognition
_TOTAL_ATTR = "ocr_progress_total"  # on an xdist worker's first report: how many pages the worker collected


def pages_per_second(live_pages: int, elapsed_s: float) -> float | None:
    """Live pages per second, or None before there is a rate to tell (no live page yet, no time elapsed).

    >>> pages_per_second(27, 10.0), pages_per_second(0, 10.0), pages_per_second(3, 0.0)
    (2.7, None, None)
    """
    if live_pages <= 0 or elapsed_s <= 0:
        return None
    return live_pages / elapsed_s


def eta_seconds(done: int, total: int, live_pages: int, elapsed_s: float) -> float | None:
    """Seconds left: the remaining pages' expected live share (the finished pages' live share; cached pages count as
    instant) divided by the live rate, which reduces to ``elapsed × remaining / done``; 0 when nothing remains, None
    when there is no rate yet.

    >>> eta_seconds(120, 320, 120, 60.0)  # 200 pages left at 2 pages/s
    100.0
    >>> eta_seconds(120, 320, 60, 60.0)  # half the pages came from the cache: 100 live ones left at 1 page/s
    100.0
    >>> eta_seconds(320, 320, 300, 60.0), eta_seconds(10, 320, 0, 60.0)
    (0.0, None)
    """
    remaining = max(total - done, 0)
    if remaining == 0:
        return 0.0
    rate = pages_per_second(live_pages, elapsed_s)
    if rate is None or done <= 0:
        return None
    return remaining * (live_pages / done) / rate


def format_duration(seconds: float) -> str:
    """A short duration: ``45s``, ``1m14s``, ``2h05m``.

    >>> format_duration(0.4), format_duration(45), format_duration(74), format_duration(7500)
    ('0s', '45s', '1m14s', '2h05m')
    """
    whole = int(round(max(seconds, 0.0)))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def format_rate(rate: float) -> str:
    """Pages per second with the digits that matter: ``12 pages/s``, ``2.7 pages/s``, ``0.05 pages/s``.

    >>> format_rate(12.34), format_rate(2.66), format_rate(0.0512), format_rate(1.0)
    ('12 pages/s', '2.7 pages/s', '0.05 pages/s', '1.0 pages/s')
    """
    digits = 0 if rate >= 10 else 1 if rate >= 1 else 2 if rate >= 0.01 else 4
    return f"{rate:.{digits}f} pages/s"


def _not_live(cached: int, replayed: int) -> list[str]:
    return [f"{count} {what}" for count, what in ((cached, "cached"), (replayed, "replayed")) if count > 0]


def progress_line(done: int, total: int, live_pages: int, elapsed_s: float, engines: tuple[str, ...] = (), *,
                  cached: int = 0, replayed: int = 0) -> str:
    """The line printed while the run goes on (``engines``: those recognising pages live).

    >>> progress_line(120, 320, 120, 44.4, ("tesseract",))
    '[ocr] 120/320 pages · 2.7 pages/s · ETA 1m14s (tesseract)'
    >>> progress_line(12, 320, 0, 3.0, cached=12)
    '[ocr] 12/320 pages · 12 cached'
    """
    parts = [f"[ocr] {done}/{total} pages", *_not_live(cached, replayed)]
    rate = pages_per_second(live_pages, elapsed_s)
    if rate is not None:
        parts.append(format_rate(rate))
        eta = eta_seconds(done, total, live_pages, elapsed_s)
        if eta is not None and done < total:
            parts.append(f"ETA {format_duration(eta)}")
    line = " · ".join(parts)
    return f"{line} ({', '.join(engines)})" if engines else line


def final_line(done: int, total: int, live_pages: int, elapsed_s: float, *, cached: int = 0, replayed: int = 0) -> str:
    """The closing line after the tests.

    >>> final_line(320, 320, 320, 118.0)
    '[ocr] 320/320 pages in 1m58s · 2.7 pages/s'
    >>> final_line(320, 320, 20, 10.0, cached=300)
    '[ocr] 320/320 pages in 10s · 300 cached · 2.0 pages/s'
    """
    parts = [f"[ocr] {done}/{total} pages in {format_duration(elapsed_s)}", *_not_live(cached, replayed)]
    rate = pages_per_second(live_pages, elapsed_s)
    if rate is not None:
        parts.append(format_rate(rate))
    return " · ".join(parts)


@dataclass
class ProgressTracker:
    """Counts pages as their reports arrive and says when the next line is due, against ``clock`` (seconds, any
    origin; ``time.monotonic`` in a run, a fake one in tests).

    >>> now = [0.0]
    >>> tracker = ProgressTracker(total=4, interval_s=10.0, clock=lambda: now[0])
    >>> tracker.start()
    >>> now[0] = 4.0; tracker.add(("tesseract", "d", "a"), live=True, engine="tesseract")
    True
    >>> tracker.due()  # 4 s since the start: not yet
    False
    >>> now[0] = 10.0; tracker.add(("tesseract", "d", "b"), live=True, engine="tesseract"); tracker.due()
    True
    True
    >>> tracker.line()
    '[ocr] 2/4 pages · 0.20 pages/s · ETA 10s (tesseract)'
    >>> tracker.due()  # just printed
    False
    """

    total: int = 0
    interval_s: float = INTERVAL_S
    clock: Callable[[], float] = time.monotonic
    started: float | None = None
    live: int = 0
    cached: int = 0  # pages whose output came from the output cache
    replayed: int = 0  # pages read from outputs made elsewhere (replay)
    engines: dict[str, None] = field(default_factory=dict)  # engines with live pages, in order of appearance
    _seen: set[tuple[str, str, str]] = field(default_factory=set)
    _last_line: float | None = None
    _last_page: float | None = None  # when the last page finished: the closing line's time ends there

    @property
    def done(self) -> int:
        return len(self._seen)

    def start(self) -> None:
        """The first test started: the rate's time counts from here."""
        if self.started is None:
            self.started = self.clock()
            self._last_line = self.started

    def elapsed(self) -> float:
        return 0.0 if self.started is None else max(self.clock() - self.started, 0.0)

    def add(self, page: tuple[str, str, str], *, live: bool, engine: str, cached: bool = False,
            replayed: bool = False) -> bool:
        """Count a finished page (engine label, dataset, document id) once; whether it was new. A page that is none
        of live, cached or replayed got no output (its engine failed): it is done, and counts for no rate."""
        if page in self._seen:
            return False
        self.start()  # a page reported before any test start was seen: its time counts from here
        self._seen.add(page)
        self._last_page = self.clock()
        self.total = max(self.total, self.done)  # never "5/3 pages", even if a worker's total was missed
        if live:
            self.live += 1
            self.engines.setdefault(engine, None)
        self.cached += cached
        self.replayed += replayed
        return True

    def due(self) -> bool:
        """Whether a progress line is due: ``interval_s`` since the last one (or the start) and pages left."""
        if self._last_line is None or self.done >= self.total:
            return False
        return self.clock() - self._last_line >= self.interval_s

    def line(self) -> str:
        """The progress line now (and the next one is due ``interval_s`` from now)."""
        self._last_line = self.clock()
        return progress_line(self.done, self.total, self.live, self.elapsed(), tuple(self.engines), cached=self.cached,
                             replayed=self.replayed)

    def final(self) -> str:
        """The closing line: the time from the first test's start to the last page (not the workers' shutdown)."""
        end = self.clock() if self._last_page is None else self._last_page
        elapsed = 0.0 if self.started is None else max(end - self.started, 0.0)
        return final_line(self.done, self.total, self.live, elapsed, cached=self.cached, replayed=self.replayed)


def _page_of(record: Mapping[str, Any]) -> tuple[str, str, str]:
    return (str(record.get("engine")), str(record.get("dataset")), str(record.get("id")))


def _test_case_verbosity(config: pytest.Config) -> int:
    """The verbosity pytest writes results with (dots at 0 or less, one line per test above)."""
    kind = getattr(pytest.Config, "VERBOSITY_TEST_CASES", None)  # pytest >= 8
    if kind is not None:
        return int(config.get_verbosity(kind))
    return int(config.getoption("verbose", 0) or 0)


def _column(terminal: Any) -> int | None:
    """Where the cursor is on the current line (pytest's terminal writer knows; None if it ever stops telling)."""
    return getattr(getattr(terminal, "_tw", None), "width_of_current_line", None)


def end_open_line(terminal: Any) -> bool:
    """End the line pytest left open (a line of dots, a result line); whether pytest had marked it as its own (it
    then starts its next result with a file name or a newline of its own)."""
    if terminal.currentfspath:
        terminal.ensure_newline()
        return True
    if _column(terminal):  # under xdist the dots have no file name: nothing marks their line as open
        terminal.write("\n")
    return False


def write_between_results(terminal: Any, text: str) -> None:
    """Write ``text`` as a line of its own without breaking pytest's lines of results.

    Dots (no ``-v``): right after pytest wrapped a line of dots (the cursor at the start of a line) the text goes in
    between and the dots go on below; else the line of dots is ended first (without xdist the next dot starts a new
    line with its file name, as after a file change). ``-v``: the text follows the last result line, and pytest ends
    it before its next line.
    """
    verbose = _test_case_verbosity(terminal.config) > 0
    if not verbose and _column(terminal) == 0:
        terminal.write(text + "\n", flush=True)
        return
    marked = end_open_line(terminal)
    if verbose:
        terminal.write(text, flush=True)
        terminal.currentfspath = -2  # pytest's own mark for "a line is open": its next line starts with a newline
    elif marked:
        terminal.write(text, flush=True)  # the next result ends this line, then writes its file name
    else:
        terminal.write(text + "\n", flush=True)


class _WorkerPages:
    """On an xdist worker: count the pages it collected and put that number on its first report, for the
    controller's total (every worker collects every test), then step aside."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.total = 0

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.total = collected_pages(session.items)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: Any) -> Generator[None, Any, Any]:
        report = yield
        setattr(report, _TOTAL_ATTR, self.total)
        self.config.pluginmanager.unregister(self)  # once: the other reports carry nothing more
        return report


def collected_pages(items: list[pytest.Item]) -> int:
    """Pages (document × engine) among the collected ``items``."""
    from pytest_ocrmetrics.plugin.items import case_of

    return len({(case.engine.label, case.document.dataset, case.document.id)
                for item in items if (case := case_of(item)) is not None})


class OcrProgressHooks:
    """The pytest side, on the process that writes the terminal (the xdist controller, or the only process): counts
    pages from the reports and prints progress lines while ``mode`` and the terminal allow."""

    def __init__(self, config: pytest.Config, mode: str, engine_names: Mapping[str, str],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.mode = mode
        self.engine_names = engine_names  # engine label -> registered name (replay:DIR's label -> replay)
        self.tracker = ProgressTracker(interval_s=INTERVAL_S, clock=clock)

    def _terminal(self) -> Any:
        return self.config.pluginmanager.get_plugin("terminalreporter")

    def _active(self) -> bool:
        """``on``: always; ``auto``: once a page was recognised live."""
        return self.mode == "on" or self.tracker.live > 0

    def _kind(self, record: Mapping[str, Any]) -> str:
        """``live``, ``cached``, ``replayed``, or ``none`` (no output: the engine failed or the test errored)."""
        if "hypothesis" not in record:
            return "none"
        if record.get("cached"):
            return "cached"
        label = str(record.get("engine"))
        return "replayed" if self.engine_names.get(label, label.split(":")[0]) in REPLAYING_ENGINES else "live"

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """``auto`` prints only on a terminal or with ``-v`` (known now: the terminal reporter exists)."""
        terminal = self._terminal()
        interactive = terminal is not None and bool(terminal.isatty())
        if terminal is None or (self.mode == "auto"
                                and not (interactive or int(self.config.getoption("verbose", 0) or 0) >= 1)):
            self.config.pluginmanager.unregister(self)

    def pytest_collection_finish(self, session: pytest.Session) -> None:  # not called on an xdist controller
        self.tracker.total = collected_pages(session.items)

    def pytest_runtest_logstart(self) -> None:
        if self.tracker.started is None:
            self.tracker.start()

    @pytest.hookimpl(tryfirst=True)  # before the session's hook takes the record off the report
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        total = getattr(report, _TOTAL_ATTR, None)
        if isinstance(total, int):  # from a worker: every worker collected the same pages
            self.tracker.total = max(self.tracker.total, total)
        sent = getattr(report, "ocr_envelope", None)
        record = sent.get("record") if isinstance(sent, dict) else None
        if isinstance(record, dict):
            kind = self._kind(record)
            self.tracker.add(_page_of(record), live=kind == "live", engine=str(record.get("engine")),
                             cached=kind == "cached", replayed=kind == "replayed")

    def pytest_runtest_logfinish(self) -> None:
        """A test's results are written (its teardown's too): the place for a line between them."""
        if self._active() and self.tracker.due():
            write_between_results(self._terminal(), self.tracker.line())

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """The closing line, after the results and before pytest's summary."""
        if self.tracker.done and self._active():
            terminal = self._terminal()
            end_open_line(terminal)  # pytest's [100%] under xdist
            terminal.write_line(self.tracker.final())


def register_progress(config: pytest.Config, mode: str, engine_names: Mapping[str, str]) -> None:
    """Register the progress hooks (never with ``off``): on an xdist worker the page count sent to the controller,
    elsewhere the counting and printing (which with ``auto`` steps aside at session start when no terminal is
    interactive and ``-v`` was not given)."""
    if mode == "off":
        return
    if hasattr(config, "workerinput"):
        config.pluginmanager.register(_WorkerPages(config), "ocrmetrics-progress")
    else:
        config.pluginmanager.register(OcrProgressHooks(config, mode, engine_names), "ocrmetrics-progress")
