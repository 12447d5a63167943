"""``--ocr-progress``: the arithmetic and wording with a fake clock, the lines between pytest's results, and whole
runs (with and without xdist) that print progress only when pages are recognised live."""

from __future__ import annotations

import io

import pytest
from _pytest.terminal import TerminalReporter

from pytest_ocrmetrics.plugin import progress
from pytest_ocrmetrics.plugin.progress import (
    ProgressTracker,
    eta_seconds,
    final_line,
    format_duration,
    format_rate,
    pages_per_second,
    progress_line,
    write_between_results,
)
from tests.helpers.plugin import make_dataset

LIVE_ENGINE = """
from pytest_ocrmetrics.engines.base import EngineSpec, OcrOutput

class Echo:
    name = "echo"
    def identity(self):
        return {"engine": "echo"}
    def recognize(self, document):
        return OcrOutput(text=document.reference_text, engine="echo")
    def close(self):
        pass

def pytest_ocrmetrics_register_engines(registry):
    registry.register(EngineSpec("echo", lambda arg, options: Echo()))
"""


class FakeClock:
    """Seconds that move only when the test says so."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


# -- arithmetic and wording ------------------------------------------------------------------------------------------

def test_rate_counts_live_pages_over_elapsed_time() -> None:
    assert pages_per_second(27, 10.0) == pytest.approx(2.7)
    assert pages_per_second(0, 10.0) is None  # nothing recognised yet: no rate, not 0 pages/s
    assert pages_per_second(5, 0.0) is None


def test_eta_assumes_the_remaining_pages_are_cached_like_the_finished_ones() -> None:
    # all live: 200 pages left at 2 pages/s
    assert eta_seconds(120, 320, 120, 60.0) == pytest.approx(100.0)
    # a quarter came from the cache (instant): 150 of the 200 left are expected live, at 1.5 pages/s
    assert eta_seconds(120, 320, 90, 60.0) == pytest.approx(100.0)
    # the same live pages and time, more cached ones done: fewer live pages expected, a shorter ETA
    assert eta_seconds(200, 320, 90, 60.0) == pytest.approx(36.0)
    assert eta_seconds(320, 320, 320, 60.0) == 0.0
    assert eta_seconds(10, 320, 0, 60.0) is None


def test_durations_and_rates_read_short() -> None:
    assert [format_duration(s) for s in (0, 9.6, 59, 60, 74, 3599, 3600, 7500)] == \
        ["0s", "10s", "59s", "1m00s", "1m14s", "59m59s", "1h00m", "2h05m"]
    assert [format_rate(r) for r in (250.0, 12.4, 2.66, 0.5, 0.004)] == \
        ["250 pages/s", "12 pages/s", "2.7 pages/s", "0.50 pages/s", "0.0040 pages/s"]


def test_lines_name_counts_rate_eta_and_engines() -> None:
    assert progress_line(120, 320, 120, 44.4, ("tesseract",)) == \
        "[ocr] 120/320 pages · 2.7 pages/s · ETA 1m14s (tesseract)"
    assert progress_line(150, 320, 100, 50.0, ("a", "b"), cached=40, replayed=10) == \
        "[ocr] 150/320 pages · 40 cached · 10 replayed · 2.0 pages/s · ETA 57s (a, b)"
    assert progress_line(12, 320, 0, 3.0, cached=12) == "[ocr] 12/320 pages · 12 cached"
    assert final_line(320, 320, 320, 118.0) == "[ocr] 320/320 pages in 1m58s · 2.7 pages/s"
    assert final_line(120, 320, 0, 5.0, replayed=120) == "[ocr] 120/320 pages in 5s · 120 replayed"


def test_tracker_with_a_fake_clock() -> None:
    clock = FakeClock()
    tracker = ProgressTracker(total=5, interval_s=10.0, clock=clock)
    assert not tracker.due()  # nothing started
    tracker.start()
    clock.now += 4
    assert tracker.add(("e", "d", "1"), live=True, engine="e")
    assert not tracker.add(("e", "d", "1"), live=True, engine="e")  # a page's second test: counted once
    assert tracker.add(("e", "d", "2"), live=False, engine="e", cached=True)
    assert (tracker.done, tracker.live, tracker.cached) == (2, 1, 1)
    assert not tracker.due()  # 4 s since the start
    clock.now += 6
    assert tracker.due()
    assert tracker.line() == "[ocr] 2/5 pages · 1 cached · 0.10 pages/s · ETA 15s (e)"
    assert not tracker.due()  # the next one in 10 s
    clock.now += 9.9
    assert not tracker.due()
    clock.now += 0.1
    assert tracker.due()
    for page in ("3", "4", "5"):
        tracker.add(("e", "d", page), live=True, engine="e")
    assert not tracker.due()  # every page done: only the closing line is left
    clock.now += 30  # workers shutting down: not part of the run's time
    assert tracker.final() == "[ocr] 5/5 pages in 20s · 1 cached · 0.20 pages/s"


def test_tracker_total_never_below_done() -> None:
    tracker = ProgressTracker(total=0, clock=FakeClock())
    tracker.add(("e", "d", "1"), live=True, engine="e")
    assert (tracker.done, tracker.total) == (1, 1)


# -- lines between pytest's results (a real TerminalReporter writing into a string) ----------------------------------

def _reporter(pytester: pytest.Pytester, *args: str) -> tuple[TerminalReporter, io.StringIO]:
    out = io.StringIO()
    config = pytester.parseconfigure(*args)
    return TerminalReporter(config, out), out


def test_dots_line_is_ended_and_the_next_result_starts_with_its_file(pytester: pytest.Pytester) -> None:
    reporter, out = _reporter(pytester)
    reporter.write_fspath_result("test_a.py::t1", ".")
    reporter.write_fspath_result("test_a.py::t2", ".")
    write_between_results(reporter, "[ocr] 2/4 pages")
    reporter.write_fspath_result("test_a.py::t3", ".")
    assert out.getvalue() == "\ntest_a.py ..\n[ocr] 2/4 pages\ntest_a.py ."


def test_after_a_wrapped_line_of_dots_the_line_goes_in_between(pytester: pytest.Pytester) -> None:
    reporter, out = _reporter(pytester)
    reporter.write_fspath_result("test_a.py::t1", ".")
    reporter.write(" [ 40%]\n")  # what pytest writes when a line of dots reaches the edge
    write_between_results(reporter, "[ocr] 1/4 pages")
    reporter.write_fspath_result("test_a.py::t2", ".")
    assert out.getvalue() == "\ntest_a.py . [ 40%]\n[ocr] 1/4 pages\n."


def test_xdist_dots_without_file_name_get_their_own_lines(pytester: pytest.Pytester) -> None:
    reporter, out = _reporter(pytester)
    reporter.write("..")  # the xdist controller writes bare dots
    write_between_results(reporter, "[ocr] 2/4 pages")
    reporter.write(".")
    assert out.getvalue() == "..\n[ocr] 2/4 pages\n."


def test_verbose_result_lines_stay_whole(pytester: pytest.Pytester) -> None:
    reporter, out = _reporter(pytester, "-v")
    reporter.write_ensure_prefix("test_a.py::t1 ", "PASSED")
    write_between_results(reporter, "[ocr] 1/4 pages")
    reporter.write_ensure_prefix("test_a.py::t2 ", "PASSED")
    assert out.getvalue() == "\ntest_a.py::t1 PASSED\n[ocr] 1/4 pages\ntest_a.py::t2 PASSED"


# -- whole runs --------------------------------------------------------------------------------------------------------

@pytest.fixture
def every_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """A progress line after every test instead of every 10 s (runs are in-process: the controller reads it)."""
    monkeypatch.setattr(progress, "INTERVAL_S", 0.0)


@pytest.fixture
def live_dataset(pytester: pytest.Pytester) -> list[str]:
    make_dataset(pytester.path)
    pytester.makeconftest(LIVE_ENGINE)
    return ["--ocr-dataset=invoices", "--ocr-engine=echo", "-p", "no:randomly"]


def _progress_lines(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "[ocr]" in line]


def _assert_whole_lines(result: pytest.RunResult) -> None:
    """Every progress line is a line of its own: never after dots, never with pytest's percentage."""
    lines = _progress_lines(result)
    assert lines
    assert all(line.startswith("[ocr] ") and "%]" not in line for line in lines), lines
    assert "\r" not in result.stdout.str()  # no carriage returns: CI logs keep every line


@pytest.mark.xdist_transport
@pytest.mark.usefixtures("every_result")
def test_on_prints_progress_and_a_closing_line(pytester: pytest.Pytester, live_dataset: list[str],
                                               plugin_args: list[str]) -> None:
    result = pytester.runpytest(*live_dataset, "--ocr-no-cache", "--ocr-progress=on", *plugin_args)
    result.assert_outcomes(passed=3)
    _assert_whole_lines(result)
    lines = _progress_lines(result)
    # with -n 2 the total comes from the workers' first reports, and only the controller prints: one line each
    result.stdout.fnmatch_lines(["[[]ocr[]] 1/3 pages · * pages/s · ETA * (echo)",
                                 "[[]ocr[]] 2/3 pages · * pages/s · ETA * (echo)",
                                 "[[]ocr[]] 3/3 pages in *s · * pages/s"])
    assert len(lines) == 3, lines


@pytest.mark.usefixtures("every_result")
def test_on_prints_in_verbose_runs_between_whole_result_lines(pytester: pytest.Pytester, live_dataset: list[str],
                                                              plugin_args: list[str]) -> None:
    result = pytester.runpytest(*live_dataset, "--ocr-no-cache", "--ocr-progress=on", "-v", *plugin_args)
    result.assert_outcomes(passed=3)
    _assert_whole_lines(result)
    assert sum("PASSED" in line and "invoices::echo-" in line for line in result.outlines) == 3
    result.stdout.fnmatch_lines(["[[]ocr[]] 3/3 pages in *"])


@pytest.mark.usefixtures("every_result")
def test_off_prints_nothing(pytester: pytest.Pytester, live_dataset: list[str], plugin_args: list[str]) -> None:
    result = pytester.runpytest(*live_dataset, "--ocr-no-cache", "--ocr-progress=off", "-v", *plugin_args)
    result.assert_outcomes(passed=3)
    assert _progress_lines(result) == []


@pytest.mark.usefixtures("every_result")
def test_auto_prints_with_v_only_while_pages_are_recognised_live(pytester: pytest.Pytester, live_dataset: list[str],
                                                                 plugin_args: list[str]) -> None:
    first = pytester.runpytest(*live_dataset, "-v", *plugin_args)  # auto is the default
    first.assert_outcomes(passed=3)
    first.stdout.fnmatch_lines(["[[]ocr[]] 3/3 pages in *s · * pages/s"])
    second = pytester.runpytest(*live_dataset, "-v", *plugin_args)  # every output from the cache now
    second.assert_outcomes(passed=3)
    assert _progress_lines(second) == []
    # forced, the same cached run says where its pages came from
    pytester.runpytest(*live_dataset, "--ocr-progress=on", *plugin_args).stdout.fnmatch_lines(
        ["[[]ocr[]] 3/3 pages in *s · 3 cached"])


@pytest.mark.usefixtures("every_result")
def test_auto_prints_nothing_when_not_interactive_and_not_verbose(pytester: pytest.Pytester, live_dataset: list[str],
                                                                  plugin_args: list[str]) -> None:
    result = pytester.runpytest(*live_dataset, "--ocr-no-cache", *plugin_args)
    result.assert_outcomes(passed=3)
    assert _progress_lines(result) == []


@pytest.mark.usefixtures("every_result")
def test_auto_prints_on_a_terminal(pytester: pytest.Pytester, live_dataset: list[str]) -> None:
    pytester.makeconftest(LIVE_ENGINE + """
import pytest

@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    config.pluginmanager.get_plugin("terminalreporter").isatty = lambda: True  # as on an interactive terminal
""")
    result = pytester.runpytest(*live_dataset, "--ocr-no-cache")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["[[]ocr[]] 3/3 pages in *"])


@pytest.mark.usefixtures("every_result")
def test_auto_prints_nothing_for_replayed_outputs(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    make_dataset(pytester.path)
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "-v", *plugin_args)
    result.assert_outcomes(passed=3)
    assert _progress_lines(result) == []
    forced = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-progress=on",
                                *plugin_args)
    forced.stdout.fnmatch_lines(["[[]ocr[]] 3/3 pages in *s · 3 replayed"])
    assert "pages/s" not in forced.stdout.str()  # reading files is no recognition rate


@pytest.mark.usefixtures("every_result")
def test_ini_twin(pytester: pytest.Pytester, live_dataset: list[str]) -> None:
    pytester.makeini("[pytest]\nocr_progress = on\n")
    result = pytester.runpytest(*live_dataset, "--ocr-no-cache")
    result.stdout.fnmatch_lines(["[[]ocr[]] 3/3 pages in *"])
    assert _progress_lines(pytester.runpytest(*live_dataset, "--ocr-no-cache", "--ocr-progress=off")) == []


def test_a_mistyped_mode_is_a_usage_error_with_a_suggestion(pytester: pytest.Pytester, dataset: object) -> None:
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-progress=onn")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ocr-progress='onn' is not valid (did you mean 'on'?); choose one of: auto, on, off"])
