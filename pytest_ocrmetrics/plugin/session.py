"""The end of the run: test reports become document records, the run is built, judged by the gates and the
baseline and written to the reports, and the terminal summary shows it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ocrmetrics import __version__
from pytest_ocrmetrics.metrics.registry import METRICS
from pytest_ocrmetrics.plugin.keys import plugin_state
from pytest_ocrmetrics.plugin.scheduling import freeze_survivors
from pytest_ocrmetrics.plugin.state import PendingTest, PluginState, RunOutcome, WrittenReports
from pytest_ocrmetrics.scoring.messages import METRIC_NEEDS
from pytest_ocrmetrics.scoring.runner import printable_id

if TYPE_CHECKING:
    from pytest_ocrmetrics.runfile.record import Envelope

_XDIST_HEADER = re.compile(r"^\[gw\d+\] [^\n]*\n")


class SessionHooks:
    """Hooks that need this config's state but get no config: results from reports, and Ctrl-C.

    Report records become document records on the process that writes the reports (the xdist controller).
    """

    def __init__(self, state: PluginState) -> None:
        self.state = state
        self.is_worker = state.run_config.is_worker
        self.outcome = state.outcome

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        freeze_survivors(self.state)

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        self.outcome.interrupted = True
        self.state.run_config.runner.cancel()  # drop queued recognition at once instead of waiting for it

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if not self.is_worker:
            self._note_collection_error(report)

    def _note_collection_error(self, report: pytest.CollectReport | pytest.TestReport) -> None:
        error = getattr(report, "ocr_collection_error", None)
        if isinstance(error, dict):
            self.outcome.results.add_collection_error(str(error["dataset"]), str(error["message"]))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker:
            return
        self._note_collection_error(report)  # a Python suite's broken dataset errors one test
        if getattr(report, "ocr_worker_crashed", False) and report.failed:  # the worker died while running it
            self._note_crash(report)
            return
        pending = self.outcome.pending.get(report.nodeid)
        if pending is None:
            pending = self.outcome.pending[report.nodeid] = PendingTest()
        sent = getattr(report, "ocr_envelope", None)
        if sent is not None:
            pending.envelope = sent
            del report.ocr_envelope  # the terminal reporter keeps every report: the record is held once, by results
        if report.failed:
            if pending.outcome != "error":
                pending.outcome = "failed" if report.when == "call" else "error"
                pending.message = _short_message(report)
        elif report.skipped and pending.outcome == "passed":
            pending.outcome = "skipped"
            pending.message = _short_message(report)
        if report.when == "teardown":
            done = self.outcome.pending.pop(report.nodeid)
            if done.envelope is not None:
                add_finished(self.outcome, done.envelope, done.outcome, done.message)

    def _note_crash(self, report: pytest.TestReport) -> None:
        """A test whose xdist worker crashed gets no more reports: its document is recorded as errored with the
        crash said, from the record its call report brought when there was one, else at the end (the dead worker
        sent nothing to say which document it was: a replacement worker names it, see ``crashed_item_records``)."""
        pending = self.outcome.pending.pop(report.nodeid, None)
        message = (f"worker crashed: {_short_message(report)} (killed, e.g. by the out-of-memory killer, or it "
                   f"crashed in native code); the document has no result")
        if pending is not None and pending.envelope is not None:
            add_finished(self.outcome, pending.envelope, "error", message)
        else:
            self.outcome.crashed[report.nodeid] = message


def add_crashed(state: PluginState) -> None:
    """Record the documents whose test's worker crashed and whose record did not arrive (see ``_note_crash``), as
    errored: from the record a replacement worker made, else from the test id (no worker was restarted)."""
    from pytest_ocrmetrics.plugin.records import record_from_nodeid

    outcome = state.outcome
    labels = [choice.label for choice in state.run_config.runner.engines]
    for nodeid, message in outcome.crashed.items():
        sent = outcome.crash_records.get(nodeid)
        if sent is None:
            sent = record_from_nodeid(nodeid, labels)
            message += "; its dataset, engine and document were read from the test id (no worker was restarted)"
        if sent is not None:
            add_finished(outcome, sent, "error", message)
    outcome.crashed.clear()


def add_finished(outcome: RunOutcome, sent: Envelope, result: str, message: str | None) -> None:
    """Add a finished test's record to the run's results with what its envelope brought (nothing for a test that is
    no OCR test: pytest's own report says it all)."""
    record = sent.get("record")
    if record is not None:
        outcome.results.add(record, result, message, transport=sent.get("transport"), text=sent.get("record_json"))


def _short_message(report: pytest.TestReport) -> str:
    """The reason in a few lines: the skip reason, or the exception message without the traceback."""
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else report.longreprtext
    text = _XDIST_HEADER.sub("", text.strip())  # "[gw1] linux -- Python 3.11" that xdist puts before a longrepr
    return text.strip().removeprefix("AssertionError: ").removeprefix("Failed: ")[:2000]


def write_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """The OCR metrics section of the terminal summary (on the controller): the summary table, the verdict of the
    gates and the baseline, the notes that keep a green run honest, and the reports written or not."""
    state = plugin_state(config)
    settings, is_worker, outcome = state.run_config.settings, state.run_config.is_worker, state.outcome
    if settings.summary == "none" and not is_worker:  # no summary, but a report that failed is said
        for problem in outcome.reports.problems:
            terminalreporter.write_line(problem, red=True, bold=True)
    if is_worker or settings.summary == "none" or not _has_a_run(state):
        return
    from pytest_ocrmetrics.reporting.terminal import render_summary

    if outcome.run is None:  # the run could not be built: say why
        for problem in outcome.reports.problems:
            terminalreporter.write_line(problem, red=True, bold=True)
        return
    from pytest_ocrmetrics.core.safe_text import show_controls

    lines = [(line, False) for line in render_summary(outcome.run, mode=settings.summary, columns=settings.columns)]
    if outcome.verdict is not None:  # a failed gate or an error of the verdict stands out
        lines += [(line, line.startswith(("ERROR:", "  FAIL "))) for line in outcome.verdict.lines(
            list_improvements=settings.summary == "full")]
    terminalreporter.write_sep("=", "OCR metrics")
    for line, red in [*lines, *_run_notes(state, outcome.run)]:  # names: control characters shown as marks
        terminalreporter.write_line(show_controls(line), red=red, bold=red)
    written, problems = outcome.reports
    for kind, path in written.items():  # a control character in a path: visible
        if kind == "baseline":
            terminalreporter.write_line(_baseline_written_line(state, path), bold=True)
        else:
            terminalreporter.write_line(f"wrote {printable_id(str(path))}")
    for problem in problems:  # a report that failed: loud, and the run fails (finish_session)
        terminalreporter.write_line(problem, red=True, bold=True)
    if problems:
        terminalreporter.write_line(f"the run fails: {len(problems)} requested report"
                                    f"{'s were' if len(problems) != 1 else ' was'} not written", red=True, bold=True)


def _baseline_written_line(state: PluginState, path: Path) -> str:
    """``--ocr-baseline-update`` in one line: what was written where, and whether it replaced a baseline."""
    run = state.outcome.run or {}
    scored = sum(row.get("evaluated", row.get("documents", 0)) for row in run.get("summary") or ())
    what = f"this run ({scored} evaluated document{'s' if scored != 1 else ''})"
    if state.run_config.baseline is None:
        return (f"created the baseline {printable_id(str(path))} with {what}: the first run, nothing was compared; "
                f"later runs with --ocr-baseline compare with it")
    return (f"updated the baseline {printable_id(str(path))}: {what} replaced the one compared above; later runs "
            f"compare with it")


def _run_notes(state: PluginState, run: dict[str, Any]) -> list[tuple[str, bool]]:
    """Lines under the summary table that keep a green run honest: a dataset that could not be loaded, a run that
    checked no threshold at all (an interrupted run is marked by the summary itself). Each is ``(line, red)``;
    the caller shows control characters as marks."""
    notes = []
    for error in run.get("collection_errors") or ():
        message = " ".join(str(error.get("message") or "see the collection error above").split())
        notes.append((f"dataset {error['dataset']} could not be loaded and is not in this summary: {message}", True))
    for metric, count in (run.get("unchecked_thresholds") or {}).items():
        needs = METRIC_NEEDS.get(METRICS[metric].requires if metric in METRICS else "", "what the metric needs")
        notes.append((f"the {metric} threshold could not be checked on {count} document{'s' if count != 1 else ''}: "
                      f"{'it lacks' if count == 1 else 'they lack'} {needs}", True))
    run_config, results = state.run_config, state.outcome.results
    minimum = run_config.settings.min_confidence
    if minimum is not None:  # a filter that could not judge some outputs must not look applied
        for engine, documents in sorted(results.without_confidence.items()):
            count = len(documents)  # documents, not test functions: two tests on one document count it once
            notes.append((f"--ocr-min-confidence={minimum:g} could not judge {count} document{'s' if count != 1 else ''} "
                          f"of {engine}: {'its' if count == 1 else 'their'} output carries no confidence, so "
                          f"{'it was' if count == 1 else 'they were'} scored unfiltered", True))
    settings, runner = run_config.settings, run_config.runner
    if settings.cache and runner.cache is None and any(choice.name != "replay" for choice in runner.engines):
        # the output cache lives in pytest's cache folder unless --ocr-cache-dir names one
        notes.append(("engine outputs were not cached: pytest's cache provider is off (-p no:cacheprovider) and no "
                      "--ocr-cache-dir was given, so the next run recognises every page again", False))
    # known from the records as they were added: no document is read back from the spool for it
    if (not results.has_checks and run.get("summary") and not run_config.gates and run_config.baseline is None
            and not run_config.settings.command_line_thresholds()):  # given but never checked: said by the verdict
        notes.append(("no threshold was checked: pass --ocr-max/--ocr-min (e.g. --ocr-max=cer:0.05) or --ocr-gate, "
                      "or add @pytest.mark.ocr_thresholds or per-document thresholds", False))
    return notes


def _interrupted(session: pytest.Session, state: PluginState, exitstatus: int) -> bool:
    """Whether the run stopped before every collected test ran: Ctrl-C, ``-x``/``--maxfail``, ``session.shouldstop``
    (xdist stops its controller with an interruption for these too)."""
    return (state.outcome.interrupted or bool(session.shouldstop) or bool(session.shouldfail)
            or exitstatus == pytest.ExitCode.INTERRUPTED)


def _has_a_run(state: PluginState) -> bool:
    """Whether this session has an OCR run to report: a document was tested, a dataset could not be loaded (every
    report says so, even when no document is left), or it is a shard (an empty shard writes its run file too)."""
    results = state.outcome.results
    return bool(results.records or results.collection_errors or state.run_config.settings.shard)


def finish_session(session: pytest.Session, exitstatus: int) -> None:
    """Build the run from the document records (on the controller), judge it by the gates and the baseline, write the
    reports and the JUnit suite properties, and set the exit status for a failure that belongs to no single test."""
    state = plugin_state(session.config)
    run_config, outcome = state.run_config, state.outcome
    run_config.runner.close()
    if (not run_config.is_worker and outcome.results.collection_errors
            and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED)):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED  # a dataset that could not be loaded fails the run
    if not run_config.is_worker and outcome.crashed:
        add_crashed(state)
    if run_config.is_worker or not _has_a_run(state):
        return
    from pytest_ocrmetrics.core.safe_text import xml_safe
    from pytest_ocrmetrics.reporting.junit import suite_properties

    try:
        run = _build_run(session, state, exitstatus)
    except Exception as exc:  # noqa: BLE001 - a bug of ours must not end the session in an internal error
        outcome.reports = WrittenReports({}, [f"could not build the OCR run for the reports: {_one_line(exc)}"])
        session.exitstatus = pytest.ExitCode.TESTS_FAILED  # nothing was checked at the run's level: never green
        return
    outcome.run = run
    outcome.verdict = verdict = _judge(state, run)
    outcome.reports = _write_reports(session, run_config.settings, run, verdict)
    xml = _junit_xml(session.config)
    if xml is not None:
        for name, value in suite_properties(run, verdict):
            xml.add_global_property(xml_safe(name), value)  # pytest escapes property values, not names
    if verdict.failed and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _build_run(session: pytest.Session, state: PluginState, exitstatus: int) -> dict[str, Any]:
    """The run (the run file's content) from the document records, its names made safe for every report."""
    from pytest_ocrmetrics.core.safe_text import sanitize_run

    settings = state.run_config.settings
    run = state.outcome.results.to_run(plugin_version=__version__, pytest_version=pytest.__version__,
                                       resamples=settings.bootstrap,
                                       interrupted=_interrupted(session, state, exitstatus),
                                       summary_intervals=_intervals_read(state),
                                       bootstrap={"seed": settings.seed, "resamples": settings.bootstrap},
                                       shard=None if settings.shard is None else settings.shard.to_dict())
    return sanitize_run(run)  # lone surrogates and non-characters replaced (and counted) once, for every report


def _judge(state: PluginState, run: dict[str, Any]) -> Any:
    """The verdict of the gates and the baseline on ``run`` (which then names the baseline it was compared with);
    a verdict that failed with an error when they could not be checked."""
    from pytest_ocrmetrics.core.safe_text import clean_run
    from pytest_ocrmetrics.gating.verdict import Verdict, judge_run

    run_config = state.run_config
    settings = run_config.settings
    try:
        verdict = judge_run(run, gates=run_config.gates, baseline=run_config.baseline,
                            tolerances=run_config.tolerances, significance=settings.significance, seed=settings.seed,
                            checks_requested=bool(settings.command_line_thresholds()
                                                  or state.outcome.results.has_checks),
                            document_regressions=settings.document_regressions)
        if verdict.comparison is not None:  # the run file says what the baseline compared (its names may be unclean)
            run["baseline"] = clean_run(verdict.comparison.baseline_entry())[0]
    except Exception as exc:  # noqa: BLE001 - the reports are still written; the gates count as failed
        verdict = Verdict(notes=(f"ERROR: the gates and the baseline could not be checked: {_one_line(exc)}",),
                          error=True)
    return verdict


def _write_reports(session: pytest.Session, settings: Any, run: dict[str, Any], verdict: Any) -> WrittenReports:
    """Write the requested reports (and the baseline to replace); a report that was asked for and not written fails
    the run."""
    from pytest_ocrmetrics.reporting.files import ReportError, write_reports

    baseline_path, refused = _baseline_update_path(settings, run)
    try:
        reports = WrittenReports(write_reports(
            run, verdict, json_path=settings.json_path, html=settings.html_path, csv=settings.csv_path,
            markdown=settings.markdown_path, baseline=baseline_path), [])
    except ReportError as exc:  # the other reports were written; the summary names the ones that were not
        reports = WrittenReports(exc.written, exc.problems)
    if refused is not None:
        reports.problems.append(refused)
    # a report that was asked for and not written (the baseline to replace among them) fails the run: a CI job
    # whose artifact is missing must not be green; each problem is one red line of the summary
    if reports.problems and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if settings.baseline_update and "baseline" not in reports.written:  # asked to replace the baseline: it was not
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    return reports


def _baseline_update_path(settings: Any, run: dict[str, Any]) -> tuple[Path | None, str | None]:
    """Where ``--ocr-baseline-update`` writes this run, or ``None`` and why not: an interrupted run or one that scored
    no document would replace the baseline with one that compares nothing (the old file is kept)."""
    if not settings.baseline_update or settings.baseline is None:
        return None, None
    kept = f"the baseline {printable_id(str(settings.baseline))} was not updated (the previous file is kept)"
    if run.get("interrupted"):
        return None, f"{kept}: the run was interrupted, so it holds only the documents that ran"
    if not any(row.get("evaluated", row.get("documents")) for row in run.get("summary") or ()):
        return None, f"{kept}: no document of this run was evaluated, so it would compare nothing"
    return settings.baseline, None


def _intervals_read(state: PluginState) -> bool:
    """Whether something reads the summary's bootstrap intervals: the run file and the HTML report hold them, a gate
    may judge one (``ci_high:cer<0.05``); the terminal, JUnit, CSV and Markdown do not show them, and bootstrapping
    (with numpy's import) is the costly part of a summary."""
    settings = state.run_config.settings
    return bool(settings.json_path or settings.html_path or settings.baseline_update
                or any(gate.statistic in ("ci_low", "ci_high") for gate in state.run_config.gates))


def _one_line(exc: BaseException) -> str:
    """``Type: first line of the message``, with control characters shown as marks."""
    from pytest_ocrmetrics.core.safe_text import clean_text, show_controls

    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return show_controls(clean_text(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)[0])[:500]


def _junit_xml(config: pytest.Config) -> Any:
    """pytest's JUnit XML writer on this process, or None (no --junitxml, or an xdist worker).

    pytest's ``record_testsuite_property`` does nothing under xdist because workers have no writer; the controller
    does, so suite-level properties are added here, guarded against pytest changing its internals.
    """
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # pragma: no cover - a future pytest
        return None
    xml = config.stash.get(xml_key, None)
    return xml if callable(getattr(xml, "add_global_property", None)) else None
