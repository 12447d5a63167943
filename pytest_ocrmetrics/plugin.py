"""The pytest plugin (entry point ``ocrmetrics``): glue between pytest and the OCR modules.

Each hook is a few lines handing off to a module that can be tested without pytest: ``options`` (settings),
``runner`` (datasets, engines, scoring), ``thresholds``, ``assertions``, ``results`` (aggregation) and ``reporting``.
A document's scores ride on its test report as a plain dict, so pytest-xdist carries them to the controller for free.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generator, Iterator

import pytest

from pytest_ocrmetrics import __version__, hookspecs
from pytest_ocrmetrics.assertions import OcrTestContext, current_context, fact_failure_line, failure_message
from pytest_ocrmetrics.datasets import Dataset, DatasetError
from pytest_ocrmetrics.engines.base import EngineError, EngineOptionError, EngineUnavailable, OcrOutput
from pytest_ocrmetrics.engines.registry import default_registry
from pytest_ocrmetrics.metrics.registry import METRIC_DEFINITIONS, METRICS, unknown_metric_message
from pytest_ocrmetrics.options import OcrSettings, add_options
from pytest_ocrmetrics.results import RunResults
from pytest_ocrmetrics.reporting.safe_text import clean_text
from pytest_ocrmetrics.runner import EngineCreationError, OcrCase, OcrRunner, printable_id
from pytest_ocrmetrics.scoring import DocumentScore, document_record
from pytest_ocrmetrics.thresholds import applicable_thresholds, limit_problem

CASE_ARG = "_ocr_case"
_XDIST_HEADER = re.compile(r"^\[gw\d+\] [^\n]*\n")


class OcrTruncatedWarning(UserWarning):
    """An engine stopped at its token limit: the output is incomplete."""


class OcrFactItemsWarning(UserWarning):
    """``--ocr-fact-items`` cannot split a Python test function's documents into one test per fact."""


@dataclass
class ItemState:
    """What one OCR test produced, kept on the item until its report is made."""

    case: OcrCase
    context: OcrTestContext
    output: OcrOutput | None = None
    filtered: str | None = None
    recorded: bool = False


@dataclass
class PluginState:
    settings: OcrSettings
    runner: OcrRunner
    results: RunResults
    is_worker: bool
    gates: tuple[Any, ...] = ()
    tolerances: dict[str, Any] = field(default_factory=dict)
    baseline: Any = None
    run: dict[str, Any] | None = None  # the finished run (the JSON run file's content), built once at the end
    verdict: Any = None
    datasets_only: bool = False  # --ocr-dataset without test paths: collect the dataset items and nothing else
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)  # nodeid -> {"record", "outcome", "message"}
    cli_datasets_used_by_functions: bool = False
    interrupted: bool = False  # Ctrl-C seen; -x / --maxfail are read from the session at the end
    junit_metrics: frozenset[str] | None = None  # the metrics each JUnit testcase carries (None: every one)
    prefetch_ahead: bool = True  # xdist worker: queue upcoming documents for the prefetch pools
    gc_frozen: bool = False  # gc.freeze() after collection, gc.unfreeze() when pytest cleans up the config
    tests_since_freeze: int = 0  # tests run since the last gc.freeze() (see pytest_runtest_logfinish)
    worker_queue: Any = None  # xdist worker: pytest-xdist's queue of this worker's pending item indices (False: none)
    # the last page recognised by a dataset item: its fact items (--ocr-fact-items) reuse its output and scores
    last_page: tuple[Any, ...] | None = None
    # the thresholds of a document without its own in a test without limits (by facts=True/False), made once
    configured_thresholds: dict[bool, tuple[Any, ...]] = field(default_factory=dict)


_REPORTS = pytest.StashKey[tuple[dict[str, Path], list[str]]]()  # report files written, and one line per failure


class _ShardHooks:
    """Registered with ``--ocr-shard=K/N``: deselects the documents of the other shards, after every other plugin
    filtered the items (a wrapper), lets a shard that holds no document pass (it still writes its run file), and says
    that gates and baseline aggregates saw only the shard."""

    def __init__(self, state: PluginState) -> None:
        self.state = state
        self.shard = state.settings.shard

    @pytest.hookimpl(wrapper=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> Generator[None, None, None]:
        result = yield
        other: list[pytest.Item] = []
        for item in items:
            case = _case_of(item)  # tests that score no document run in every shard
            if case is not None and not self.shard.holds(case.document.dataset, case.document.id):
                other.append(item)
        if other:
            config.hook.pytest_deselected(items=other)
            dropped = set(map(id, other))
            items[:] = [item for item in items if id(item) not in dropped]
        return result

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            session.exitstatus = pytest.ExitCode.OK

    @pytest.hookimpl(trylast=True)  # under the gates it is about
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.state.is_worker and (self.state.gates or self.state.baseline is not None):
            terminalreporter.write_line(f"--ocr-shard={self.shard}: the gates and the baseline's aggregates saw only "
                                        f"this shard's documents; check them on the merged run with ocrmetrics merge")


class _XdistHooks:
    """Registered only when pytest-xdist is loaded: tells the workers what the controller decided."""

    def __init__(self, state: PluginState) -> None:
        self.state = state

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["ocrmetrics_datasets_only"] = self.state.datasets_only


def _datasets_only(config: pytest.Config, settings: OcrSettings) -> bool:
    """``pytest --ocr-dataset=DIR`` with no test paths runs just the dataset's documents, not the project's tests;
    ``pytest tests --ocr-dataset=DIR`` runs both (and fixture tests without a marker score DIR).

    Decided on the controller (workers see the controller's arguments, not how they were chosen).
    """
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        return bool(workerinput.get("ocrmetrics_datasets_only", False))
    given_on_command_line = bool(config.getoption("ocr_datasets"))  # not the ini key: suites built on it keep working
    return given_on_command_line and config.args_source != pytest.Config.ArgsSource.ARGS


STATE = pytest.StashKey[PluginState]()
ITEM_STATE = pytest.StashKey[ItemState]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "ocr_dataset(*paths, name=None): run this test once per document of the datasets (paths relative to the test file)")
    config.addinivalue_line("markers", "ocr_thresholds(**limits): per-test limits, e.g. ocr_thresholds(cer=0.05, field_f1=0.9)")
    settings = OcrSettings.from_config(config)
    registry = default_registry()
    config.hook.pytest_ocrmetrics_register_engines(registry=registry)
    try:
        runner = OcrRunner(settings, registry)
        runner.validate()
    except (EngineOptionError, KeyError, ValueError) as exc:
        raise pytest.UsageError(str(exc.args[0] if isinstance(exc, KeyError) and exc.args else exc)) from None
    results = RunResults(
        normalization=_normalization(settings),
        seed=settings.seed,
    )
    datasets_only = _datasets_only(config, settings)
    if datasets_only and not runner.engines:
        raise pytest.UsageError(f"--ocr-dataset needs an engine: {_no_engine_hint(runner)}")
    gates, tolerances, baseline = _gating_settings(settings)
    config.stash[STATE] = PluginState(settings, runner, results, is_worker=hasattr(config, "workerinput"),
                                      gates=gates, tolerances=tolerances, baseline=baseline,
                                      datasets_only=datasets_only,
                                      junit_metrics=_junit_metrics(settings, gates, tolerances))
    config.pluginmanager.register(_SessionHooks(config.stash[STATE]), "ocrmetrics-session")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(config.stash[STATE]), "ocrmetrics-xdist")
    if settings.shard is not None:
        config.pluginmanager.register(_ShardHooks(config.stash[STATE]), "ocrmetrics-shard")
    # registered before pytest's own cleanups (this configure hook runs before the built-in plugins'), so it runs
    # after them: pytest's closing gc.collect() passes do not walk the frozen collected items again
    config.add_cleanup(functools.partial(_unfreeze_gc, config.stash[STATE]))


def _unfreeze_gc(state: PluginState) -> None:
    """Undo the ``gc.freeze()`` of :func:`pytest_collection_finish` (an in-process run must not keep its items
    out of the garbage collector's reach)."""
    if state.gc_frozen:
        gc.unfreeze()
        state.gc_frozen = False




JUNIT_DEFAULT_METRICS = frozenset({"cer", "wer", "field_f1"})


def _junit_metrics(settings: OcrSettings, gates: tuple[Any, ...], tolerances: dict[str, Any]) -> frozenset[str] | None:
    """The metrics a JUnit testcase carries with ``--ocr-junit-properties=default``: CER, WER and field F1, those with
    a threshold, a gate or a regression tolerance, and the ``--ocr-metric`` extras (a test adds what it checked);
    None (every computed metric) with ``all``. A dozen properties per testcase cost pytest about a tenth of a
    millisecond each to carry and write."""
    if settings.junit_properties == "all":
        return None
    return JUNIT_DEFAULT_METRICS | set(settings.command_line_thresholds()) | {gate.metric for gate in gates} \
        | set(tolerances) | set(settings.extra_metrics)


def _normalization(settings: OcrSettings) -> dict[str, Any]:
    """The run file's ``normalization``: every setting a baseline must share for its numbers to be comparable."""
    return {"name": settings.normalize, "unit": settings.unit, "tokenizer": settings.tokenizer,
            "field_compare": settings.field_compare, "definitions": METRIC_DEFINITIONS,
            "word_match": {"distance": settings.word_distance, "case_sensitive": settings.word_case_sensitive,
                           "ignore_punctuation": settings.word_ignore_punctuation}}


def _gating_settings(settings: OcrSettings) -> tuple[tuple[Any, ...], dict[str, Any], Any]:
    """Parse gates and tolerances and load the baseline at startup, so a typo, a bad file or a baseline made with
    other normalization settings (unless ``--ocr-baseline-allow-mismatch``) fails at once."""
    from pytest_ocrmetrics.gating import Baseline, RunFileError, parse_gate, parse_significance, resolve_tolerances

    try:
        gates = tuple(parse_gate(expr) for expr in settings.gates)
    except ValueError as exc:
        raise pytest.UsageError(f"--ocr-gate: {exc}") from None
    try:
        tolerances = resolve_tolerances(settings.max_regressions)
    except ValueError as exc:
        raise pytest.UsageError(f"--ocr-max-regression: {exc}") from None
    if settings.significance is not None:
        try:
            parse_significance(settings.significance)
        except ValueError as exc:
            raise pytest.UsageError(f"--ocr-significance: {exc}") from None
    baseline = None
    if settings.baseline is not None:
        try:
            baseline = Baseline.load(settings.baseline)  # NaN or infinity inside is refused, naming the document
        except RunFileError as exc:
            raise pytest.UsageError(f"--ocr-baseline: {exc}") from None
        current = _normalization(settings)
        mismatch = baseline.normalization_mismatch(current, name=f"--ocr-baseline {str(settings.baseline)!r}",
                                                   override="--ocr-baseline-allow-mismatch")
        if mismatch is not None and not settings.baseline_allow_mismatch:
            raise pytest.UsageError(mismatch)
    return gates, tolerances, baseline


def _state(config: pytest.Config) -> PluginState:
    return config.stash[STATE]


def _no_engine_hint(runner: OcrRunner) -> str:
    names = ", ".join(runner.registry.names())
    return f"pass --ocr-engine=NAME (registered engines: {names})"


# -- collection ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _BrokenDataset:
    """A dataset of a Python suite that could not be loaded: one erroring test stands for it, the others run."""

    dataset: str
    message: str


def _load(state: PluginState, path: Path, name: str | None = None) -> Dataset | _BrokenDataset:
    try:
        return state.runner.dataset(path, name)
    except DatasetError as exc:  # not raised from here: no "During handling of the above exception" copy
        return _BrokenDataset(str(path), str(exc))


def _cases(state: PluginState, datasets: list[Dataset]) -> Iterator[OcrCase]:
    for dataset in datasets:
        for document in dataset.documents:
            for engine in state.runner.engines:
                yield OcrCase(engine, document, dataset)


def _skip_param(reason: str, id: str) -> Any:
    return pytest.param(None, marks=pytest.mark.skip(reason=reason), id=id)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if CASE_ARG not in metafunc.fixturenames:
        return
    try:  # a typo in a threshold marker is refused at collection, once, not in every generated test
        _marker_limits(metafunc.definition, metafunc.definition.nodeid)
    except ValueError as exc:
        message = str(exc)
    else:
        message = ""
    if message:
        raise pytest.Collector.CollectError(message)
    state = _state(metafunc.config)
    marker = metafunc.definition.get_closest_marker("ocr_dataset")
    if marker is not None:
        base = metafunc.definition.path.parent
        paths = [(base / str(p), marker.kwargs.get("name")) for p in marker.args]
    else:
        state.cli_datasets_used_by_functions = True
        paths = [(state.settings.datasets_base / p, None) for p in state.settings.datasets]
    if not paths:
        metafunc.parametrize(CASE_ARG, [_skip_param(
            "no OCR dataset: add @pytest.mark.ocr_dataset('path'), --ocr-dataset=PATH or the ocr_datasets ini key",
            "no-dataset")])
        return
    if not state.runner.engines:
        metafunc.parametrize(CASE_ARG, [_skip_param(f"no OCR engine selected: {_no_engine_hint(state.runner)}",
                                                    "no-engine")])
        return
    loaded = [_load(state, path, name) for path, name in paths]
    cases = list(_cases(state, [d for d in loaded if isinstance(d, Dataset)]))
    broken = [d for d in loaded if isinstance(d, _BrokenDataset)]
    if not cases and not broken:
        metafunc.parametrize(CASE_ARG, [_skip_param("the OCR datasets have no documents", "no-documents")])
        return
    if state.settings.fact_items and any(c.document.facts for c in cases):
        warnings.warn(OcrFactItemsWarning(
            f"--ocr-fact-items: {metafunc.definition.nodeid} is a test function, which gets one test per document "
            "whatever the option says (its facts are checked in it); fact items are made for --ocr-dataset datasets "
            "run without Python tests"), stacklevel=1)
    params = [pytest.param(c, id=c.id) for c in cases]
    params += [pytest.param(b, id=f"dataset-error-{n}-{Path(b.dataset).name}") for n, b in enumerate(broken, 1)]
    metafunc.parametrize(CASE_ARG, params)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a dataset's documents and items are made (they all live until the end:
    its full passes over a growing heap would find nothing), back on afterwards as it was."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class OcrDatasetCollector(pytest.Collector):
    """A dataset given with ``--ocr-dataset`` and no Python test: one item per document × engine."""

    def __init__(self, *, dataset_path: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dataset_path = dataset_path

    def collect(self) -> list[pytest.Item]:
        state = _state(self.config)
        if not state.runner.engines:  # an ini dataset next to a Python suite: say what is missing, run the rest
            pytest.skip(f"no OCR engine selected: {_no_engine_hint(state.runner)}")
        try:
            with _collector_paused():  # thousands of long-lived documents and items: nothing to collect yet
                dataset = state.runner.dataset(self.dataset_path)
        except DatasetError as exc:
            message = str(exc)
        else:
            items: list[pytest.Item] = []
            with _collector_paused():
                for case in _cases(state, [dataset]):
                    items.append(OcrDocumentItem.from_parent(self, name=case.id, case=case))
                    if state.settings.fact_items:
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
        state = _state(self.config)
        item_state = _item_state(self, state, self.case)
        key = (self.case.engine.label, self.case.dataset.root, self.case.document.id)
        if state.last_page is not None and state.last_page[0] == key:  # a fact item after its page's item
            _, item_state.output, item_state.filtered, item_state.context.score = state.last_page
            return
        state.last_page = None
        _recognize(self, state, item_state)
        if state.settings.fact_items and self.case.document.facts:
            state.last_page = (key, item_state.output, item_state.filtered, None)

    def runtest(self) -> None:
        state = _state(self.config)
        item_state = self.stash[ITEM_STATE]
        if item_state.filtered:
            pytest.skip(item_state.filtered)
        score = self._score(state, item_state)
        # with --ocr-fact-items each fact is judged by its own item, not again here
        _check_thresholds(self, state, score, facts=not state.settings.fact_items)

    def _score(self, state: PluginState, item_state: ItemState) -> DocumentScore:
        score = item_state.context.score_output(item_state.output)  # type: ignore[arg-type]
        if state.last_page is not None and state.last_page[1] is item_state.output:
            state.last_page = (*state.last_page[:3], score)
        return score

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:  # type: ignore[override]
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

    def runtest(self) -> None:
        __tracebackhide__ = True
        state = _state(self.config)
        item_state = self.stash[ITEM_STATE]
        if item_state.filtered:
            pytest.skip(item_state.filtered)
        score = self._score(state, item_state)
        result = next(f for f in score.details.get("facts", ()) if f["id"] == self.fact.id)
        item_state.context.checks.append({
            "metric": "fact_pass_rate", "fact": self.fact.id, "value": 1.0 if result["passed"] else 0.0,
            "limit": 1.0, "operator": ">=", "source": "fact item", "passed": bool(result["passed"])})
        failures = [] if result["passed"] else [fact_failure_line(result, score)]
        failures += _fact_regressions(state, score, only=self.fact.id)
        if failures:
            raise AssertionError("\n".join(failures))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, printable_id(f"{self.case.engine.label}: {self.case.document.id} [{self.fact.id}]")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    state = config.stash.get(STATE, None)
    return True if state is not None and state.datasets_only else None


@pytest.hookimpl(tryfirst=True)  # dataset items exist before -k, --deselect and node-splitting plugins filter items
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    state = _state(config)
    if not state.settings.datasets or state.cli_datasets_used_by_functions:
        return
    taken: set[str] = set()
    for path_text in state.settings.datasets:
        path = state.settings.datasets_base / path_text
        nodename = _dataset_nodeid(path, config.rootpath, taken)
        collector = OcrDatasetCollector.from_parent(session, name=nodename, nodeid=nodename, path=path,
                                                   dataset_path=path)
        session.ihook.pytest_collectstart(collector=collector)
        report = session.ihook.pytest_make_collect_report(collector=collector)
        report.__dict__.pop("call", None)  # as pytest's collect_one_node does: CallInfo cannot travel to xdist
        if report.failed:  # rides on the report to the controller, which lists it in the run file
            report.ocr_collection_error = {"dataset": str(path), "message": _collect_message(report)}  # type: ignore[attr-defined]
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


# -- fixtures --------------------------------------------------------------------------------------------------------
def _item_state(item: pytest.Item, state: PluginState, case: OcrCase) -> ItemState:
    if ITEM_STATE not in item.stash:
        context = OcrTestContext(document=case.document, engine=case.engine.label, options=state.runner.scoring)
        item.stash[ITEM_STATE] = ItemState(case=case, context=context)
    return item.stash[ITEM_STATE]


def _creation_message(exc: EngineCreationError) -> str:
    """The one line every test of an engine that could not be created shows (control characters made visible)."""
    from pytest_ocrmetrics.reporting.safe_text import show_controls

    return show_controls(str(exc))


def _recognize(item: pytest.Item, state: PluginState, item_state: ItemState) -> OcrOutput:
    if item_state.output is not None:
        return item_state.output
    case = item_state.case
    try:
        output = state.runner.recognize(case)
    except EngineUnavailable as exc:
        pytest.skip(f"engine {case.engine.name!r} is not available: {exc}")
    except EngineCreationError as exc:  # the same one line in every test of this engine
        raise pytest.fail.Exception(_creation_message(exc), pytrace=False) from None
    except (EngineError, OSError) as exc:
        # one sentence, no traceback from inside the engine: the document's test errors, the session goes on
        message = str(exc) if str(exc).startswith(case.engine.name) else f"{case.engine.label}: {exc}"
        if case.document.id not in message:
            message += f" (document {case.document.id!r})"
        if case.document.source and case.document.source not in message:
            message += f" [ground truth: {case.document.source}]"
        raise pytest.fail.Exception(message, pytrace=False) from None
    hook = item.config.hook.pytest_ocrmetrics_process_output
    processed = hook(document=case.document, output=output, engine=case.engine.label) if hook.get_hookimpls() else None
    if processed is not None:
        output = processed
    item_state.output = output
    if output.truncated:
        warnings.warn(OcrTruncatedWarning(
            f"{case.engine.label} output for {case.document.id!r} was cut off at the token limit (truncated); "
            "its metrics count the missing text as deleted"), stacklevel=1)
    minimum = state.settings.min_confidence
    if minimum is not None and output.confidence is not None and output.confidence < minimum:
        item_state.filtered = f"filtered: engine confidence {output.confidence:.3f} is below --ocr-min-confidence={minimum:g}"
    return output


@pytest.fixture
def _ocr_case(request: pytest.FixtureRequest) -> OcrCase:
    """The document × engine of this test (set by parametrization)."""
    case = getattr(request, "param", None)
    if not isinstance(case, OcrCase):
        pytest.fail(f"{request.node.nodeid}: OCR fixtures need a dataset (ocr_dataset marker or --ocr-dataset)",
                    pytrace=False)
    return case


@pytest.fixture
def ocr_document(_ocr_case: OcrCase) -> Any:
    """The :class:`~pytest_ocrmetrics.documents.Document` of this test: image path, reference text, fields."""
    return _ocr_case.document


@pytest.fixture
def ocr_engine(request: pytest.FixtureRequest, _ocr_case: OcrCase) -> Any:
    """The engine of this test, created once per session (per xdist worker) and shared by its tests."""
    try:
        return _state(request.config).runner.engine(_ocr_case.engine)
    except EngineUnavailable as exc:
        pytest.skip(f"engine {_ocr_case.engine.name!r} is not available: {exc}")
    except EngineCreationError as exc:
        raise pytest.fail.Exception(_creation_message(exc), pytrace=False) from None


@pytest.fixture
def ocr_output(request: pytest.FixtureRequest, _ocr_case: OcrCase) -> Generator[OcrOutput, None, None]:
    """What the engine returned for this document (:class:`~pytest_ocrmetrics.engines.base.OcrOutput`)."""
    state = _state(request.config)
    item_state = _item_state(request.node, state, _ocr_case)
    output = _recognize(request.node, state, item_state)
    if item_state.filtered:
        pytest.skip(item_state.filtered)
    token = current_context.set(item_state.context)
    try:
        yield output
    finally:
        current_context.reset(token)


@pytest.fixture
def ocr_score(request: pytest.FixtureRequest, ocr_output: OcrOutput) -> DocumentScore:
    """Every metric of this output against this document (:class:`~pytest_ocrmetrics.scoring.DocumentScore`)."""
    return request.node.stash[ITEM_STATE].context.score_output(ocr_output)


# -- running ---------------------------------------------------------------------------------------------------------
def _marker_limits(node: pytest.Item | pytest.Function, where: str) -> dict[str, float]:
    """The ``ocr_thresholds`` limits on ``node`` (the closest marker wins); a metric name that is not registered or
    a value that is not a sensible limit (``field_f1=90``) raises ``ValueError`` with one sentence."""
    limits: dict[str, float] = {}
    for marker in reversed(list(node.iter_markers("ocr_thresholds"))):
        for name, value in marker.kwargs.items():
            if name not in METRICS:
                raise ValueError(f"{where}: ocr_thresholds({name}=...): {unknown_metric_message(name)}")
            try:
                limit = value if isinstance(value, bool) else float(value)
            except (TypeError, ValueError):
                limit = value
            problem = limit_problem(name, limit, lambda v: f"ocr_thresholds({name}={v})")
            if problem:
                raise ValueError(f"{where}: ocr_thresholds({name}={value!r}): {problem}")
            limits[name] = float(limit)
    return limits


def _test_limits(item: pytest.Item) -> dict[str, float]:
    """The test's ``ocr_thresholds`` limits (checked at collection; a marker added later fails its test)."""
    try:
        return _marker_limits(item, item.nodeid)
    except ValueError as exc:
        message = str(exc)
    raise pytest.fail.Exception(message, pytrace=False)


def _check_thresholds(item: pytest.Item, state: PluginState, score: DocumentScore, *, facts: bool = True) -> None:
    """Check every threshold that applies and was not already asserted by a helper; fail with all violations.

    ``facts=False``: not the implicit every-fact-passes threshold, nor fact regressions (fact items judge those)."""
    __tracebackhide__ = True
    context = item.stash[ITEM_STATE].context
    asserted = {check["metric"] for check in context.checks}
    failures = []
    for threshold in _applicable_thresholds(state, score.document, _test_limits(item), facts=facts):
        if threshold.metric in asserted or threshold.metric not in score.metrics:
            continue
        check = threshold.check(score.metrics[threshold.metric])
        context.checks.append(check)
        if not check["passed"]:
            failures.append(failure_message(score, threshold, check["value"]))
    if state.baseline is not None and state.tolerances:
        regressions = state.baseline.check_document(score.document.dataset, score.engine, score.document.id,
                                                    score.metrics, state.tolerances)
        if not facts:  # --ocr-fact-items: the page's facts are judged by their own items
            regressions = [regression for regression in regressions if regression.metric != "fact_pass_rate"]
        failures += [regression.message for regression in regressions]
    if facts:
        failures += _fact_regressions(state, score)
    if failures:
        raise AssertionError("\n\n".join(failures))


def _applicable_thresholds(state: PluginState, document: Any, limits: dict[str, float], *, facts: bool) -> Any:
    """:func:`~pytest_ocrmetrics.thresholds.applicable_thresholds`; for a document without thresholds or facts of
    its own in a test without limits (the usual case), the command line's, worked out once per run."""
    configured = state.settings.command_line_thresholds()
    if limits or document.thresholds or document.facts:
        return applicable_thresholds(document, limits, configured, facts=facts)
    thresholds = state.configured_thresholds.get(facts)
    if thresholds is None:
        thresholds = state.configured_thresholds[facts] = tuple(
            applicable_thresholds(document, limits, configured, facts=facts))
    return thresholds


def _fact_regressions(state: PluginState, score: DocumentScore, only: str | None = None) -> list[str]:
    """Facts of this document that passed in the baseline and fail now (with a tolerance on fact_pass_rate)."""
    if state.baseline is None or not score.details.get("facts"):  # the usual case: nothing to import or check
        return []
    from pytest_ocrmetrics.gating import tolerance_for

    if tolerance_for(state.tolerances, "fact_pass_rate") is None:
        return []
    facts = [f for f in score.details["facts"] if only is None or f["id"] == only]
    return [regression.message for regression in state.baseline.check_facts(
        score.document.dataset, score.engine, score.document.id, facts)]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    broken = getattr(getattr(item, "callspec", None), "params", {}).get(CASE_ARG)
    if isinstance(broken, _BrokenDataset):  # its ground truth is malformed: this test errors with the loader's sentence
        raise pytest.fail.Exception(broken.message, pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    result = yield
    if ITEM_STATE in item.stash and not isinstance(item, OcrDocumentItem):
        item_state = item.stash[ITEM_STATE]
        if item_state.output is not None and not item_state.filtered:
            score = item_state.context.score_output(item_state.output)
            _check_thresholds(item, _state(item.config), score)
    return result


def _record(item: pytest.Item, state: PluginState, item_state: ItemState) -> dict[str, Any]:
    case = item_state.case
    output = item_state.output
    if output is not None and not item_state.filtered:
        record = item_state.context.score_output(output).to_record()
    else:
        record = document_record(case.document, case.engine.label, output)
        if case.document.facts:  # counted as failed in the facts summary when the test errored (no output)
            from pytest_ocrmetrics.metrics.facts.summary import unchecked_facts

            record["details"] = {"facts": unchecked_facts(case.document.facts,
                                                          "not checked: the document got no output (its test errored)")}
    record["nodeid"] = item.nodeid
    record["checks"] = list(item_state.context.checks)
    if case.document.tags:  # per-tag rows of the summary (RunResults.summary_by_tag)
        record["tags"] = list(case.document.tags)
    if item_state.filtered:
        record["filtered"] = True
        record["message"] = item_state.filtered
    identity = state.runner.identity_once(case.engine)
    if identity is not None:
        record["engine_identity"] = identity
    skipped = [{"source": s.source, "reason": s.reason} for s in case.dataset.skipped]
    if skipped:
        record["dataset_skipped"] = skipped
    return record


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    when = report.when
    if when == "setup":
        broken = getattr(getattr(item, "callspec", None), "params", {}).get(CASE_ARG)
        if isinstance(broken, _BrokenDataset):  # listed in the run's collection_errors
            report.ocr_collection_error = {"dataset": broken.dataset, "message": broken.message}
    item_state = item.stash.get(ITEM_STATE, None)
    if item_state is None:
        case = _case_of(item)
        if case is None or when != "setup" or report.passed:
            return report
        # setup failed before the OCR fixtures or item setup ran
        item_state = _item_state(item, _state(item.config), case)
    last_chance = when == "teardown" or (when == "setup" and not report.passed)
    if not item_state.recorded and (when == "call" or last_chance):
        state = _state(item.config)
        record = _record(item, state, item_state)
        item_state.recorded = True
        report.ocr_record = record  # type: ignore[attr-defined]
        # the same text with and without xdist (whose workers must send UTF-8): lone surrogates become U+FFFD here
        properties = [(f"ocr.{key}", clean_text(str(record[field]))[0])
                      for key, field in (("engine", "engine"), ("dataset", "dataset"), ("document", "id"))]
        wanted = state.junit_metrics
        if wanted is not None:  # --ocr-junit-properties=default: the metrics that matter, and what this test checked
            wanted = wanted | {check.get("metric") for check in record["checks"]}
        properties += [(f"ocr.{name}", _property_value(value)) for name, value in record["metrics"].items()
                       if wanted is None or name in wanted]
        if record.get("cached"):
            properties.append(("ocr.cached", "true"))
        if record.get("truncated"):
            properties.append(("ocr.truncated", "true"))
        if record.get("filtered"):
            properties.append(("ocr.filtered", "true"))
        item.user_properties.extend(properties)
        report.user_properties = list(item.user_properties)
    if when == "teardown":  # the item lives until the session ends; its output and scores need not
        item_state.output = None
        item_state.context.score = None
    return report


@pytest.hookimpl(wrapper=True)
def pytest_report_to_serializable(config: pytest.Config, report: Any) -> Generator[None, Any, Any]:
    """What an xdist worker sends must be UTF-8: a lone surrogate (from a ``\\ud800`` escape in ground truth or in a
    server's answer) in the OCR record, a failure message or a property is replaced with U+FFFD here, and the record
    counts its own replacements as ``replaced_characters`` (the run file's total includes them)."""
    data = yield
    if not isinstance(data, dict):
        return data
    from pytest_ocrmetrics.reporting.safe_text import clean_run

    record = data.get("ocr_record")
    if isinstance(record, dict):
        record, count = clean_run(record)
        data["ocr_record"] = {**record, "replaced_characters": count} if count else record
    return clean_run(data)[0]


def _property_value(value: float) -> str:
    return repr(round(float(value), 6)) if isinstance(value, float) else str(value)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    _state(session.config).runner.cache = _output_cache(session.config, _state(session.config).settings)


def _output_cache(config: pytest.Config, settings: OcrSettings) -> Any:
    """The engine output cache: --ocr-cache-dir, else inside pytest's cache directory; None with --ocr-no-cache."""
    if not settings.cache:
        return None
    from pytest_ocrmetrics.cache import OutputCache

    directory = settings.cache_dir
    if directory is None:
        cache = getattr(config, "cache", None)  # absent with -p no:cacheprovider
        if cache is None:
            return None
        directory = cache.mkdir("ocrmetrics") / "outputs"
    return OutputCache(directory, refresh=settings.refresh_cache)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start recognising every collected document ahead of its test (remote engines: many requests at once).

    Not under xdist: every worker collects every document but runs only some, so prefetching there would send each
    page once per worker; with ``-n N`` the workers themselves are the concurrency.
    """
    state = _state(session.config)
    if session.config.option.collectonly or _xdist_controller(session.config):
        return
    cases = [case for item in session.items if (case := _case_of(item)) is not None]
    if cases and not state.gc_frozen:
        # the collected items, datasets and modules live until the end: the cyclic garbage collector need not walk
        # them again and again while thousands of tests run (about a tenth of a large run); undone at the end
        gc.freeze()
        state.gc_frozen = True
    if cases and not state.is_worker:  # a worker queues its documents as it learns them (pytest_runtest_protocol)
        state.runner.start_prefetch(cases)


GC_FREEZE_EVERY = 1000  # tests between two gc.freeze() calls of a run that froze its collected items


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """On an xdist worker: recognise ahead the documents of the tests this worker was given and has not run yet.

    A worker learns its tests a few at a time (``--dist load`` sends small batches as tests finish), so before each
    test the worker's queue is read and its documents are added to the prefetch pools: a remote engine keeps up to
    ``--ocr-concurrency`` requests in flight per worker instead of one.
    """
    state = _state(item.config)
    if not state.is_worker or not state.prefetch_ahead or not state.runner.engines:
        return
    upcoming = [item] + ([nextitem] if nextitem is not None else []) + _queued_items(item)
    cases = [case for candidate in upcoming if (case := _case_of(candidate)) is not None]
    if cases:
        state.runner.prefetch_more(cases)
        state.prefetch_ahead = state.runner.may_prefetch()  # in-process engines only: stop looking


def _worker_queue(config: pytest.Config) -> Any:
    """pytest-xdist's queue of the item indices this worker was sent and has not started (its ``TestQueue``), or
    None when this xdist version keeps it elsewhere (then only the next test is prefetched)."""
    for plugin in config.pluginmanager.get_plugins():
        queue = getattr(plugin, "torun", None)
        if type(plugin).__name__ == "WorkerInteractor" and callable(getattr(queue, "lock", None)):
            return queue
    return None


def _queued_items(item: pytest.Item) -> list[pytest.Item]:
    state = _state(item.config)
    queue = state.worker_queue if state.worker_queue is not None else _worker_queue(item.config)
    state.worker_queue = queue if queue is not None else False
    if not queue:
        return []
    limit = 2 * state.settings.concurrency
    try:
        with queue.lock() as pending:
            indices = [index for _, index in zip(range(limit), pending) if isinstance(index, int)]
    except Exception:  # noqa: BLE001 - prefetching is an optimisation: never a reason for a test to fail
        return []
    items = item.session.items
    return [items[index] for index in indices if 0 <= index < len(items)]


def _xdist_controller(config: pytest.Config) -> bool:
    return bool(getattr(config.option, "numprocesses", None)) and config.pluginmanager.hasplugin("dsession")


def _case_of(item: pytest.Item) -> OcrCase | None:
    if isinstance(item, OcrDocumentItem):
        return item.case
    case = getattr(getattr(item, "callspec", None), "params", {}).get(CASE_ARG)
    return case if isinstance(case, OcrCase) else None


class _SessionHooks:
    """Hooks that need this config's state but get no config: results from reports, and Ctrl-C.

    Report records become document records on the process that writes the reports (the xdist controller).
    """

    def __init__(self, state: PluginState) -> None:
        self.state = state

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        """Every thousand tests, what survived them (reports, JUnit records, the run's index) is frozen too, after a
        collection of the young generations (so the cycles that failures leave behind are freed, not kept): the
        collector's full passes, and pytest's own when it unconfigures, then walk at most a thousand tests' objects
        instead of every report of the run (about a tenth of a 20,000-test run). Undone with the rest at cleanup."""
        state = self.state
        if state.gc_frozen:
            state.tests_since_freeze += 1
            if state.tests_since_freeze >= GC_FREEZE_EVERY:
                state.tests_since_freeze = 0
                gc.collect(1)
                gc.freeze()

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        self.state.interrupted = True
        self.state.runner.cancel()  # drop queued recognition at once instead of waiting for it

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if not self.state.is_worker:
            self._note_collection_error(report)

    def _note_collection_error(self, report: pytest.CollectReport | pytest.TestReport) -> None:
        error = getattr(report, "ocr_collection_error", None)
        if isinstance(error, dict):
            self.state.results.add_collection_error(str(error["dataset"]), str(error["message"]))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.state.is_worker:
            return
        self._note_collection_error(report)  # a Python suite's broken dataset errors one test
        pending = self.state.pending.setdefault(report.nodeid, {"record": None, "outcome": "passed", "message": None})
        record = getattr(report, "ocr_record", None)
        if record is not None:
            pending["record"] = record
            del report.ocr_record  # the terminal reporter keeps every report: the record is held once, by results
        if report.failed:
            outcome = "failed" if report.when == "call" else "error"
            if pending["outcome"] != "error":
                pending["outcome"] = outcome
                pending["message"] = _short_message(report)
        elif report.skipped and pending["outcome"] == "passed":
            pending["outcome"] = "skipped"
            pending["message"] = _short_message(report)
        if report.when == "teardown":
            done = self.state.pending.pop(report.nodeid)
            if done["record"] is not None:
                self.state.results.add(done["record"], done["outcome"], done["message"])


def _short_message(report: pytest.TestReport) -> str:
    """The reason in a few lines: the skip reason, or the exception message without the traceback."""
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else report.longreprtext
    text = _XDIST_HEADER.sub("", text.strip())  # "[gw1] linux -- Python 3.11" that xdist puts before a longrepr
    return text.strip().removeprefix("AssertionError: ").removeprefix("Failed: ")[:2000]


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = _state(config)
    if state.settings.summary == "none" and not state.is_worker:  # no summary, but a report that failed is said
        for problem in config.stash.get(_REPORTS, ({}, []))[1]:
            terminalreporter.write_line(problem, red=True, bold=True)
    if state.is_worker or state.settings.summary == "none" or not state.results.records:
        return
    from pytest_ocrmetrics.reporting.terminal import render_summary

    if state.run is None:  # the run could not be built: say why
        for problem in config.stash.get(_REPORTS, ({}, []))[1]:
            terminalreporter.write_line(problem, red=True, bold=True)
        return
    lines = render_summary(state.run, mode=state.settings.summary, columns=state.settings.columns)
    if state.verdict is not None:
        lines += state.verdict.lines()
    terminalreporter.write_sep("=", "OCR metrics")
    for line in lines:
        terminalreporter.write_line(line)
    for line, red in _run_notes(state, state.run):
        terminalreporter.write_line(line, red=red, bold=red)
    written, problems = config.stash.get(_REPORTS, ({}, []))
    for path in written.values():
        terminalreporter.write_line(f"wrote {printable_id(str(path))}")  # a control character in a path: visible
    for problem in problems:  # a report that failed: loud, but the exit status stays the tests' own
        terminalreporter.write_line(problem, red=True, bold=True)


def _run_notes(state: PluginState, run: dict[str, Any]) -> list[tuple[str, bool]]:
    """Lines under the summary table that keep a green run honest: a dataset that could not be loaded, a run that
    checked no threshold at all (an interrupted run is marked by the summary itself). Each is ``(line, red)``."""
    from pytest_ocrmetrics.reporting.safe_text import show_controls

    notes = []
    for error in run.get("collection_errors") or ():
        message = " ".join(str(error.get("message") or "see the collection error above").split())
        notes.append((show_controls(f"dataset {error['dataset']} could not be loaded and is not in this summary: "
                                    f"{message}"), True))
    checked = any(document.get("checks") for document in run.get("documents") or ())
    if not checked and not state.gates and state.baseline is None:
        notes.append(("no threshold was checked: pass --ocr-max/--ocr-min (e.g. --ocr-max=cer:0.05) or --ocr-gate, "
                      "or add @pytest.mark.ocr_thresholds or per-document thresholds", False))
    return notes


def _interrupted(session: pytest.Session, state: PluginState, exitstatus: int) -> bool:
    """Whether the run stopped before every collected test ran: Ctrl-C, ``-x``/``--maxfail``, ``session.shouldstop``
    (xdist stops its controller with an interruption for these too)."""
    return (state.interrupted or bool(session.shouldstop) or bool(session.shouldfail)
            or exitstatus == pytest.ExitCode.INTERRUPTED)


@pytest.hookimpl(tryfirst=True)  # before the JUnit XML is written, so the suite properties make it in
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = _state(session.config)
    state.runner.close()
    if (not state.is_worker and state.results.collection_errors
            and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED)):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED  # a dataset that could not be loaded fails the run
    if state.is_worker or not (state.results.records or state.settings.shard):  # an empty shard writes its run file
        return
    from pytest_ocrmetrics.reporting.safe_text import clean_run, sanitize_run, xml_safe
    from pytest_ocrmetrics.verdict import ReportError, Verdict, judge_run, suite_properties, write_reports

    settings = state.settings
    try:
        run = state.results.to_run(plugin_version=__version__, pytest_version=pytest.__version__,
                                   resamples=settings.bootstrap, interrupted=_interrupted(session, state, exitstatus))
        run["bootstrap"] = {"seed": settings.seed, "resamples": settings.bootstrap}  # ocrmetrics merge recomputes
        if settings.shard is not None:
            run["shard"] = settings.shard.to_dict()
        run = sanitize_run(run)  # lone surrogates and non-characters replaced (and counted) once, for every report
    except Exception as exc:  # noqa: BLE001 - a bug of ours must not end the session in an internal error
        session.config.stash[_REPORTS] = ({}, [f"could not build the OCR run for the reports: {_one_line(exc)}"])
        session.exitstatus = pytest.ExitCode.TESTS_FAILED  # nothing was checked at the run's level: never green
        return
    state.run = run
    try:
        verdict = judge_run(run, gates=state.gates, baseline=state.baseline, tolerances=state.tolerances,
                            significance=settings.significance, seed=settings.seed)
        if verdict.comparison is not None:  # the run file says what the baseline compared (its names may be unclean)
            run["baseline"] = clean_run(verdict.comparison.baseline_entry())[0]
    except Exception as exc:  # noqa: BLE001 - the reports are still written; the gates count as failed
        verdict = Verdict(notes=(f"ERROR: the gates and the baseline could not be checked: {_one_line(exc)}",),
                          error=True)
    state.verdict = verdict
    try:
        reports: tuple[dict[str, Path], list[str]] = (write_reports(
            run, verdict, json_path=settings.json_path, html=settings.html_path, csv=settings.csv_path,
            markdown=settings.markdown_path), [])
    except ReportError as exc:  # the other reports were written; the summary names the ones that were not
        reports = (exc.written, exc.problems)
    session.config.stash[_REPORTS] = reports
    xml = _junit_xml(session.config)
    if xml is not None:
        for name, value in suite_properties(run, verdict):
            xml.add_global_property(xml_safe(name), value)  # pytest escapes property values, not names
    if verdict.failed and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _one_line(exc: BaseException) -> str:
    """``Type: first line of the message``, with control characters shown as marks."""
    from pytest_ocrmetrics.reporting.safe_text import clean_text, show_controls

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


def pytest_unconfigure(config: pytest.Config) -> None:
    """Delete the run's spool file once every report, the terminal summary among them, has been written."""
    state = config.stash.get(STATE, None)
    if state is not None:
        state.results.close()
