"""Collection: the documents × engines a test function is parametrized with, the dataset collector of
``--ocr-dataset`` with its document and fact items, and finding the OCR case of any item."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any, Iterator

import pytest

from pytest_ocrmetrics.core.collector import collector_paused
from pytest_ocrmetrics.datasets import Dataset, DatasetError, split_dataset_argument
from pytest_ocrmetrics.engines.base import EngineError
from pytest_ocrmetrics.plugin.checks import (
    check_thresholds,
    fact_regressions,
    fail_unchecked_facts,
    item_state_for,
    marker_limits,
    recognize,
)
from pytest_ocrmetrics.plugin.keys import CASE_ARG, ITEM_STATE, plugin_state
from pytest_ocrmetrics.plugin.state import BrokenDataset, ItemState, LastPage, PageKey, PluginState
from pytest_ocrmetrics.scoring.document import DocumentScore, ScoringError
from pytest_ocrmetrics.scoring.messages import fact_failure_line
from pytest_ocrmetrics.scoring.runner import OcrCase, OcrRunner, printable_id


class OcrFactItemsWarning(UserWarning):
    """``--ocr-fact-items`` cannot split a Python test function's documents into one test per fact."""


def no_engine_hint(runner: OcrRunner) -> str:
    """What to pass when no engine was selected, naming the registered engines."""
    names = ", ".join(runner.registry.names())
    return f"pass --ocr-engine=NAME (registered engines: {names})"


def _load(state: PluginState, config: pytest.Config, path: Path, name: str | None = None) -> Dataset | BrokenDataset:
    try:
        return state.run_config.runner.dataset(path, name, rootdir=config.rootpath)
    except DatasetError as exc:  # not raised from here: no "During handling of the above exception" copy
        return BrokenDataset(str(path), str(exc))


def cli_datasets(state: PluginState) -> list[tuple[Path, str | None]]:
    """The ``--ocr-dataset`` / ``ocr_datasets`` datasets as ``(path, explicit name or None)``: a value is ``PATH`` or
    ``NAME=PATH`` (see :func:`~pytest_ocrmetrics.datasets.loading.split_dataset_argument`)."""
    base = state.run_config.settings.datasets_base
    return [(base / path, name) for name, path in (split_dataset_argument(text, base)
                                                    for text in state.run_config.settings.datasets)]


def _cases(state: PluginState, datasets: list[Dataset]) -> Iterator[OcrCase]:
    for dataset in datasets:
        for document in dataset.documents:
            for engine in state.run_config.runner.engines:
                yield OcrCase(engine, document, dataset)


def _skip_param(reason: str, id: str) -> Any:
    return pytest.param(None, marks=pytest.mark.skip(reason=reason), id=id)


def generate_tests(metafunc: pytest.Metafunc, state: PluginState) -> None:
    """Parametrize a test function that uses the OCR fixtures with the documents × engines of its datasets (the
    ``ocr_dataset`` marker's, else ``--ocr-dataset``'s): one erroring test stands for a dataset that could not be
    loaded, one skipped test says why there is nothing to score.

    Args:
        metafunc: pytest's view of the test function being collected.
        state: the run's state (the run uses OCR from here on, if it did not already).
    """
    if CASE_ARG not in metafunc.fixturenames:
        return
    try:  # a typo in a threshold marker is refused at collection, once, not in every generated test
        marker_limits(metafunc.definition, metafunc.definition.nodeid)
    except ValueError as exc:
        message = str(exc)
    else:
        message = ""
    if message:
        raise pytest.Collector.CollectError(message)
    marker = metafunc.definition.get_closest_marker("ocr_dataset")
    if marker is not None:
        base = metafunc.definition.path.parent
        paths = [(base / str(p), marker.kwargs.get("name")) for p in marker.args]
        _refuse_reports_inside(metafunc, paths)
    else:
        state.collection.cli_datasets_used_by_functions = True
        paths = cli_datasets(state)
    if not paths:
        metafunc.parametrize(CASE_ARG, [_skip_param(
            "no OCR dataset: add @pytest.mark.ocr_dataset('path'), --ocr-dataset=PATH or the ocr_datasets ini key",
            "no-dataset")])
        return
    runner = state.run_config.runner
    if not runner.engines:
        metafunc.parametrize(CASE_ARG, [_skip_param(f"no OCR engine selected: {no_engine_hint(runner)}", "no-engine")])
        return
    loaded = [_load(state, metafunc.config, path, name) for path, name in paths]
    cases = list(_cases(state, [d for d in loaded if isinstance(d, Dataset)]))
    broken = [d for d in loaded if isinstance(d, BrokenDataset)]
    if not cases and not broken:
        metafunc.parametrize(CASE_ARG, [_skip_param("the OCR datasets have no documents", "no-documents")])
        return
    if state.run_config.settings.fact_items and any(c.document.facts for c in cases):
        warnings.warn(OcrFactItemsWarning(
            f"--ocr-fact-items: {metafunc.definition.nodeid} is a test function, which gets one test per document "
            "whatever the option says (its facts are checked in it); fact items are made for --ocr-dataset datasets "
            "run without Python tests"), stacklevel=1)
    params = [pytest.param(c, id=c.id) for c in cases]
    params += [pytest.param(b, id=f"dataset-error-{n}-{Path(b.dataset).name}") for n, b in enumerate(broken, 1)]
    metafunc.parametrize(CASE_ARG, params)


def _refuse_reports_inside(metafunc: pytest.Metafunc, paths: list[tuple[Path, str | None]]) -> None:
    """A report path inside an ``ocr_dataset`` marker's dataset (known only now, at collection) is a collection error
    naming both: writing it would destroy the dataset (see :func:`~.configure.report_input_conflict`)."""
    from pytest_ocrmetrics.plugin.configure import report_input_conflict, report_paths

    reports = report_paths(metafunc.config, plugin_state(metafunc.config).run_config.settings)
    if not reports:
        return
    conflict = report_input_conflict(reports, [(path, "the dataset folder" if path.is_dir() else "the dataset file",
                                                frozenset()) for path, _ in paths])
    if conflict is not None:
        raise pytest.Collector.CollectError(f"{conflict} (the ocr_dataset marker of {metafunc.definition.nodeid})")


class OcrDatasetCollector(pytest.Directory):
    """A dataset given with ``--ocr-dataset`` and no Python test: one item per document × engine.

    A :class:`pytest.Directory`, so that pytest loads the ``conftest.py`` files from the rootdir down to the dataset
    folder when it collects it, as it does for a folder of test files: the plugin keeps pytest's own walk out of the
    dataset (its images), and without this the hooks of those conftests (``pytest_runtest_makereport``,
    ``pytest_runtest_logreport``, ...) were not called for the dataset's tests.
    """

    def __init__(self, *, dataset_path: Path, dataset_name: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dataset_path = dataset_path
        self.dataset_name = dataset_name  # given as --ocr-dataset=NAME=PATH; else the path relative to the rootdir

    def collect(self) -> list[pytest.Item]:
        state = plugin_state(self.config)
        runner = state.run_config.runner
        if not runner.engines:  # an ini dataset next to a Python suite: say what is missing, run the rest
            pytest.skip(f"no OCR engine selected: {no_engine_hint(runner)}")
        try:
            with collector_paused():  # thousands of long-lived documents and items: nothing to collect yet
                dataset = runner.dataset(self.dataset_path, self.dataset_name, rootdir=self.config.rootpath)
        except DatasetError as exc:
            message = str(exc)
        else:
            items: list[pytest.Item] = []
            with collector_paused():
                for case in _cases(state, [dataset]):
                    items.append(OcrDocumentItem.from_parent(self, name=case.id, case=case))
                    if state.run_config.settings.fact_items:
                        items += [OcrFactItem.from_parent(self, name=f"{case.id}[{printable_id(fact.id)}]", case=case,
                                                  fact=fact)
                                  for fact in case.document.facts]
            return items
        # a CollectError is shown as its message alone (a plain string, so xdist shows it once, not once per worker)
        raise self.CollectError(message)


class OcrDocumentItem(pytest.Item):
    """One document through one engine, checked against the thresholds of every level."""

    def __init__(self, *, case: OcrCase, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case

    def setup(self) -> None:
        state = plugin_state(self.config)
        item_state = item_state_for(self, state, self.case)
        key = PageKey(self.case.engine.label, self.case.dataset.root, self.case.document.id)
        collection = state.collection
        last = collection.last_page
        if last is not None and last.key == key:  # a fact item after its page's item
            item_state.output, item_state.filtered, item_state.context.score = last.output, last.filtered, last.score
        else:
            collection.last_page = None
            recognize(self, state, item_state)
            if state.run_config.settings.fact_items and self.case.document.facts:
                collection.last_page = LastPage(key, item_state.output, item_state.filtered)
        if item_state.output is not None and not item_state.filtered:
            try:  # scored here, so a document that cannot be scored errors (its setup) rather than fails
                self._score(state, item_state)
            except ScoringError as exc:
                raise pytest.fail.Exception(printable_id(str(exc)), pytrace=False) from None
        self._fail_unchecked_facts(state, item_state)

    def _fail_unchecked_facts(self, state: PluginState, item_state: ItemState) -> None:
        """Error this test in its setup when facts it judges could not be checked (with ``--ocr-fact-items`` the
        page's facts are judged by their own items, not here)."""
        if self.case.document.facts and not item_state.filtered and not state.run_config.settings.fact_items:
            fail_unchecked_facts(item_state, self._score(state, item_state))

    def runtest(self) -> None:
        state = plugin_state(self.config)
        item_state = self.stash[ITEM_STATE]
        if item_state.filtered:
            pytest.skip(item_state.filtered)
        score = self._score(state, item_state)
        # with --ocr-fact-items each fact is judged by its own item, not again here
        check_thresholds(self, state, score, facts=not state.run_config.settings.fact_items)

    def _score(self, state: PluginState, item_state: ItemState) -> DocumentScore:
        score = item_state.context.score_output(item_state.output)  # type: ignore[arg-type]
        last = state.collection.last_page
        if last is not None and last.output is item_state.output:
            state.collection.last_page = last._replace(score=score)
        return score

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, (AssertionError, EngineError, FileNotFoundError)):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        # the dataset folder, not the image: xdist sends the location before any report, and an image path may hold
        # a lone surrogate (a file name that is not UTF-8); the headline "engine: document" is made printable too
        return self.path, None, printable_id(f"{self.case.engine.label}: {self.case.document.id}")


class OcrFactItem(OcrDocumentItem):
    """One page-level fact of a document through one engine (``--ocr-fact-items``), named ``DOCUMENT[FACT ID]`` so
    ``-k FACT_ID`` selects it: fails when the fact's final verdict (the repeats' strict majority) fails. The page is
    recognised and scored once, by whichever of its items runs first; the others reuse that."""

    def __init__(self, *, fact: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fact = fact

    def _fail_unchecked_facts(self, state: PluginState, item_state: ItemState) -> None:
        """Error this fact's test in its setup when the fact could not be checked."""
        if not item_state.filtered:
            fail_unchecked_facts(item_state, self._score(state, item_state), only=self.fact.id)

    def runtest(self) -> None:
        __tracebackhide__ = True
        state = plugin_state(self.config)
        item_state = self.stash[ITEM_STATE]
        if item_state.filtered:
            pytest.skip(item_state.filtered)
        score = self._score(state, item_state)
        result = next(f for f in score.details.get("facts", ()) if f["id"] == self.fact.id)
        item_state.context.checks.append({
            "metric": "fact_pass_rate", "fact": self.fact.id, "value": 1.0 if result["passed"] else 0.0,
            "limit": 1.0, "operator": ">=", "source": "fact item", "passed": bool(result["passed"])})
        failures = [] if result["passed"] else [fact_failure_line(result, score)]
        failures += fact_regressions(state, score, only=self.fact.id)
        if failures:
            raise AssertionError("\n".join(failures))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, printable_id(f"{self.case.engine.label}: {self.case.document.id} [{self.fact.id}]")


def ignored_by_collection(state: PluginState, path: Path) -> bool | None:
    """``pytest_ignore_collect``: everything when only the ``--ocr-dataset`` datasets run; otherwise the files that
    are not Python files inside a dataset folder given with ``--ocr-dataset`` or ``ocr_datasets`` (``pytest tests
    --ocr-dataset=tests/data/invoices``): the dataset's own collector reads that folder, so pytest need not visit its
    thousands of images one by one (a Python test file there is still collected). None: pytest decides."""
    if state.run_config.datasets_only:
        return True
    roots = state.collection.dataset_folders
    if roots is None:
        state.collection.dataset_folders = roots = _dataset_folders(state)
    if not roots or path.suffix == ".py":
        return None
    text = os.fspath(path)
    if not text.startswith(roots):
        return None
    # a folder inside the dataset (its images/) is skipped whole unless a Python file lies somewhere below it
    return True if not os.path.isdir(text) or not _holds_python(text) else None


def _holds_python(folder: str) -> bool:
    """Whether a ``.py`` file lies in ``folder`` or below it: one listing per folder, in C, instead of pytest
    visiting each of its thousands of images."""
    try:
        with os.scandir(folder) as entries:
            below = []
            for entry in entries:
                if entry.name.endswith(".py"):
                    return True
                if entry.is_dir(follow_symlinks=False):
                    below.append(entry.path)
    except OSError:
        return True  # cannot tell: let pytest look (and say what it finds)
    return any(_holds_python(path) for path in below)


def _dataset_folders(state: PluginState) -> tuple[str, ...]:
    """The folders of the run's ``--ocr-dataset`` / ``ocr_datasets`` datasets, as absolute and as resolved paths,
    each ending with a separator (a ``str.startswith`` prefix); not a dataset given as a file (its folder may hold
    anything)."""
    folders: set[str] = set()
    for path, _ in cli_datasets(state):
        if path.is_dir():
            folders.update(os.path.join(os.path.abspath(path), ""), os.path.join(os.path.realpath(path), ""))
    return tuple(sorted(folders))


def add_dataset_items(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Collect the ``--ocr-dataset`` datasets (when no test function scores them) into document items, each through
    pytest's collection hooks as a test file would be, and add them to ``items``."""
    state = plugin_state(config)
    if not state.run_config.settings.datasets or state.collection.cli_datasets_used_by_functions:
        return
    taken: set[str] = set()
    for path, name in cli_datasets(state):
        nodename = _dataset_nodeid(path, config.rootpath, taken)
        collector = OcrDatasetCollector.from_parent(session, name=nodename, nodeid=nodename, path=path,
                                                   dataset_path=path, dataset_name=name)
        session.ihook.pytest_collectstart(collector=collector)
        report = session.ihook.pytest_make_collect_report(collector=collector)
        report.__dict__.pop("call", None)  # as pytest's collect_one_node does: CallInfo cannot travel to xdist
        if report.failed:  # rides on the report to the controller, which lists it in the run file
            report.ocr_collection_error = {"dataset": str(path), "message": _collect_message(report)}
        session.ihook.pytest_collectreport(report=report)
        if report.failed and not session.shouldfail:
            # one broken dataset must not cost the others their run: pytest stops the session on any collection
            # error it counted, so this one is not counted; it is listed, and pytest_sessionfinish fails the run
            session.testsfailed -= 1
        if report.passed:
            items.extend(n for n in report.result if isinstance(n, pytest.Item))


def _dataset_nodeid(path: Path, rootpath: Path, taken: set[str]) -> str:
    """The node id of a dataset given with ``--ocr-dataset``: its path relative to the rootdir, or its name when it
    lies outside (JUnit turns node ids into class names: an absolute path would give ``.home.me.data``).
    Unique among the datasets of the run."""
    resolved = path.resolve()
    try:
        nodename = resolved.relative_to(rootpath.resolve()).as_posix()
    except ValueError:
        nodename = ""
    if nodename in ("", "."):
        nodename = resolved.stem if resolved.is_file() else resolved.name
    nodename = printable_id(nodename) or "dataset"  # a folder name with ESC would make the JUnit XML invalid
    unique, n = nodename, 2
    while unique in taken:
        unique, n = f"{nodename}-{n}", n + 1
    taken.add(unique)
    return unique


def _collect_message(report: pytest.CollectReport) -> str:
    text = report.longrepr if isinstance(report.longrepr, str) else report.longreprtext
    return text.strip()[:2000]


def case_of(item: pytest.Item) -> OcrCase | None:
    """The document × engine ``item`` scores (a dataset's item, or a test function parametrized with one); None for
    every other test."""
    if isinstance(item, OcrDocumentItem):
        return item.case
    case = getattr(getattr(item, "callspec", None), "params", {}).get(CASE_ARG)
    return case if isinstance(case, OcrCase) else None
