"""The pytest plugin (entry point ``ocrmetrics``): glue between pytest and the OCR modules.

Each hook is a few lines handing off to a module that can be tested without pytest: ``settings``,
``runner`` (datasets, engines, scoring), ``thresholds``, ``assertions``, ``results`` (aggregation) and ``reporting``.
A document's scores ride on its test report as a plain dict, so pytest-xdist carries them to the controller for free.

The plugin's own work is split by job, one module each:

- ``options``: the ``--ocr-*`` options and their ini twins, and the markers;
- ``settings``: the ``--ocr-*`` settings read and validated;
- ``keys``: the stash keys of the run's state and each test's;
- ``state``: the run's state (``config.stash[STATE]``: configuration, collection, outcome) and each test's (on its
  item);
- ``configure``: starting the OCR run: settings, engines, gates and baseline checked, the hook classes registered;
- ``items``: collection: test functions parametrized with documents × engines, the ``--ocr-dataset`` collector
  and its document and fact items;
- ``checks``: running one test: recognition, the ``ocr_thresholds`` marker, thresholds and baseline regressions;
- ``records``: a test's OCR record and JUnit properties on its report;
- ``transport``: what an xdist worker sends, made UTF-8;
- ``fixtures``: ``ocr_document``, ``ocr_engine``, ``ocr_output``, ``ocr_score``;
- ``scheduling``: ``--ocr-shard``, xdist, recognising ahead of the tests, freezing long-lived objects out of the gc;
- ``session``: the end of the run: results from reports, gates and baseline, reports, the terminal summary;
- ``progress``: ``--ocr-progress`` lines (pages done / total, pages per second, ETA) while pages are recognised.

pytest and pluggy find hooks and fixtures among this module's attributes: the fixtures are imported here.

A light import: every pytest run in an environment with the plugin installed imports this module, so at module level
it imports only what registers the options, the hook specifications, the markers and the fixtures (``options``,
``hookspecs``, ``keys``, ``fixtures``: none imports OCR code). The run *uses OCR* when an ``--ocr-*`` option or its
ini key is given (the run starts at configure time, so a typo fails at once) or when a collected test function asks
for an OCR fixture (``ocr_document``, ``ocr_engine``, ``ocr_output``, ``ocr_score``; the ``ocr_dataset`` and
``ocr_thresholds`` markers act only through them): the run starts then (:func:`~.configure.started_run`). Until
it does, each hook returns at once; the modules that do the work are imported by the hooks that use them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Generator

import pytest

from pytest_ocrmetrics.plugin import hookspecs
from pytest_ocrmetrics.plugin.fixtures import ocr_case, ocr_document, ocr_engine, ocr_output, ocr_score
from pytest_ocrmetrics.plugin.keys import CASE_ARG, ITEM_STATE, STATE, active_state
from pytest_ocrmetrics.plugin.options import add_options, ocr_options_given, register_markers

__all__ = [
    "GC_FREEZE_EVERY",  # read from pytest_ocrmetrics.plugin.scheduling: change it there
    "ITEM_STATE",
    "JUNIT_DEFAULT_METRICS",
    "STATE",
    "ItemState",
    "OcrDatasetCollector",
    "OcrDocumentItem",
    "OcrFactItem",
    "OcrFactItemsWarning",
    "OcrTruncatedWarning",
    "PluginState",
    "ocr_case",
    "ocr_document",
    "ocr_engine",
    "ocr_output",
    "ocr_score",
]

# names of this package that live in modules an OCR run imports: imported when first read (see __getattr__)
_LAZY = {
    "GC_FREEZE_EVERY": "pytest_ocrmetrics.plugin.scheduling",
    "JUNIT_DEFAULT_METRICS": "pytest_ocrmetrics.plugin.configure",
    "OcrDatasetCollector": "pytest_ocrmetrics.plugin.items",
    "OcrDocumentItem": "pytest_ocrmetrics.plugin.items",
    "OcrFactItem": "pytest_ocrmetrics.plugin.items",
    "OcrFactItemsWarning": "pytest_ocrmetrics.plugin.items",
    "OcrTruncatedWarning": "pytest_ocrmetrics.plugin.checks",
    "ItemState": "pytest_ocrmetrics.plugin.state",
    "PluginState": "pytest_ocrmetrics.plugin.state",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    # not tryfirst, yet before the built-in plugins' configure hooks (they were registered first): the cleanup it
    # registers then runs after theirs
    register_markers(config)
    if ocr_options_given(config):  # the run uses OCR: its settings are checked now, a typo fails before any test
        from pytest_ocrmetrics.plugin.configure import start_run

        start_run(config)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if CASE_ARG in metafunc.fixturenames:  # an OCR fixture: the run uses OCR from here on
        from pytest_ocrmetrics.plugin.configure import started_run
        from pytest_ocrmetrics.plugin.items import generate_tests

        generate_tests(metafunc, started_run(metafunc.config))


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    state = active_state(config)
    if state is None:
        return None
    from pytest_ocrmetrics.plugin.items import ignored_by_collection

    return ignored_by_collection(state, collection_path)


@pytest.hookimpl(tryfirst=True)  # dataset items exist before -k, --deselect and node-splitting plugins filter items
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    if active_state(config) is not None:
        from pytest_ocrmetrics.plugin.items import add_dataset_items

        add_dataset_items(session, config, items)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if STATE not in item.config.stash:  # a dataset that could not be loaded stands for one test of an OCR run only
        return
    from pytest_ocrmetrics.plugin.state import broken_dataset_of

    broken = broken_dataset_of(item)
    if broken is not None:  # its ground truth is malformed: this test errors with the loader's sentence
        raise pytest.fail.Exception(broken.message, pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    result = yield
    if ITEM_STATE in item.stash:
        from pytest_ocrmetrics.plugin.checks import check_test_function
        from pytest_ocrmetrics.plugin.items import OcrDocumentItem

        if not isinstance(item, OcrDocumentItem):  # a dataset item checks in its runtest
            check_test_function(item)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    if STATE not in item.config.stash:
        return report
    from pytest_ocrmetrics.plugin.records import add_record

    return add_record(item, report)


@pytest.hookimpl(wrapper=True)
def pytest_report_to_serializable(config: pytest.Config, report: Any) -> Generator[None, Any, Any]:
    data = yield
    from pytest_ocrmetrics.plugin.transport import clean_serialized  # every report under xdist, OCR or not

    return clean_serialized(data)


@pytest.hookimpl(wrapper=True)
def pytest_report_from_serializable(config: pytest.Config, data: Any) -> Generator[None, Any, Any]:
    report = yield
    sent = getattr(report, "ocr_envelope", None)
    if isinstance(sent, dict) and "record_json" in sent:  # packed by the worker: its record as one JSON text
        from pytest_ocrmetrics.runfile.record import unpack_envelope

        report.ocr_envelope = unpack_envelope(sent)
    if hasattr(report, "ocr_properties"):  # its JUnit properties as one text (plugin.transport)
        from pytest_ocrmetrics.plugin.transport import unpack_properties

        unpack_properties(report)
    return report


def pytest_collection_finish(session: pytest.Session) -> None:
    if active_state(session.config) is not None:
        from pytest_ocrmetrics.plugin.scheduling import after_collection

        after_collection(session)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if STATE in item.config.stash:
        from pytest_ocrmetrics.plugin.scheduling import prefetch_ahead

        prefetch_ahead(item, nextitem)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if active_state(config) is not None:
        from pytest_ocrmetrics.plugin.session import write_terminal_summary

        write_terminal_summary(terminalreporter, config)


@pytest.hookimpl(tryfirst=True)  # before the JUnit XML is written, so the suite properties make it in
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if active_state(session.config) is not None:
        from pytest_ocrmetrics.plugin.session import finish_session

        finish_session(session, exitstatus)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Delete the run's spool file once every report, the terminal summary among them, has been written, and let go
    of the run (its documents index): the interpreter's closing garbage collections need not walk it again."""
    state = active_state(config)
    if state is not None:
        state.outcome.results.close()
        state.outcome.run = None
        from pytest_ocrmetrics.metrics.result_cache import use_folder

        use_folder(None)  # a later session in this process (pytester) sets its own
