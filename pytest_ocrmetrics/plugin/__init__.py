"""The pytest plugin (entry point ``ocrmetrics``): glue between pytest and the OCR modules.

Each hook is a few lines handing off to a module that can be tested without pytest: ``options`` (settings),
``runner`` (datasets, engines, scoring), ``thresholds``, ``assertions``, ``results`` (aggregation) and ``reporting``.
A document's scores ride on its test report as a plain dict, so pytest-xdist carries them to the controller for free.

The plugin's own work is split by job, one module each:

- ``state``: the run's state (``config.stash[STATE]``) and each test's (on its item);
- ``configure``: settings, engines, gates and baseline checked at configure time, the hook classes registered;
- ``items``: collection: test functions parametrized with documents × engines, the ``--ocr-dataset`` collector
  and its document and fact items;
- ``checks``: running one test: recognition, the ``ocr_thresholds`` marker, thresholds and baseline regressions;
- ``records``: a test's OCR record and JUnit properties on its report, and what an xdist worker sends;
- ``fixtures``: ``ocr_document``, ``ocr_engine``, ``ocr_output``, ``ocr_score``;
- ``scheduling``: ``--ocr-shard``, xdist, recognising ahead of the tests, freezing long-lived objects out of the gc;
- ``session``: the end of the run: results from reports, gates and baseline, reports, the terminal summary;
- ``progress``: ``--ocr-progress`` lines (pages done / total, pages per second, ETA) while pages are recognised.

pytest and pluggy find hooks and fixtures among this module's attributes: the fixtures are imported here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Generator

import pytest

from pytest_ocrmetrics import hookspecs
from pytest_ocrmetrics.options import add_options
from pytest_ocrmetrics.plugin.checks import OcrTruncatedWarning, check_test_function, fail_broken_dataset
from pytest_ocrmetrics.plugin.configure import (
    JUNIT_DEFAULT_METRICS,
    _output_cache,
    configure_run,
    use_result_cache,
)
from pytest_ocrmetrics.plugin.fixtures import _ocr_case, ocr_document, ocr_engine, ocr_output, ocr_score
from pytest_ocrmetrics.plugin.items import (OcrDatasetCollector, OcrDocumentItem, OcrFactItem, OcrFactItemsWarning,
                                            add_dataset_items, generate_tests, ignored_by_collection)
from pytest_ocrmetrics.plugin.progress import register_progress
from pytest_ocrmetrics.plugin.records import add_record, clean_serialized
from pytest_ocrmetrics.plugin.scheduling import GC_FREEZE_EVERY, after_collection, prefetch_ahead
from pytest_ocrmetrics.plugin.session import finish_session, write_terminal_summary
from pytest_ocrmetrics.plugin.state import ITEM_STATE, STATE, ItemState, PluginState

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
    "_ocr_case",
    "ocr_document",
    "ocr_engine",
    "ocr_output",
    "ocr_score",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    # not tryfirst, yet before the built-in plugins' configure hooks (they were registered first): the cleanup it
    # registers then runs after theirs
    configure_run(config)
    state = config.stash[STATE]
    register_progress(config, state.settings.progress, {choice.label: choice.name for choice in state.runner.engines})


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    generate_tests(metafunc)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    state = config.stash.get(STATE, None)
    return None if state is None else ignored_by_collection(state, collection_path)


@pytest.hookimpl(tryfirst=True)  # dataset items exist before -k, --deselect and node-splitting plugins filter items
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    add_dataset_items(session, config, items)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    fail_broken_dataset(item)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    result = yield
    if ITEM_STATE in item.stash and not isinstance(item, OcrDocumentItem):  # a dataset item checks in its runtest
        check_test_function(item)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    return add_record(item, report)


@pytest.hookimpl(wrapper=True)
def pytest_report_to_serializable(config: pytest.Config, report: Any) -> Generator[None, Any, Any]:
    data = yield
    return clean_serialized(data)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    state = session.config.stash[STATE]
    state.runner.cache = _output_cache(session.config, state.settings)
    use_result_cache(state.runner.cache, state.settings)


def pytest_collection_finish(session: pytest.Session) -> None:
    after_collection(session)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    prefetch_ahead(item, nextitem)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    write_terminal_summary(terminalreporter, config)


@pytest.hookimpl(tryfirst=True)  # before the JUnit XML is written, so the suite properties make it in
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    finish_session(session, exitstatus)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Delete the run's spool file once every report, the terminal summary among them, has been written, and let go
    of the run (its documents index): the interpreter's closing garbage collections need not walk it again."""
    state = config.stash.get(STATE, None)
    if state is not None:
        state.results.close()
        state.run = None
        from pytest_ocrmetrics.metrics.result_cache import use_folder

        use_folder(None)  # a later session in this process (pytester) sets its own
