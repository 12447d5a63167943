"""When and where documents are recognised: ``--ocr-shard`` deselection, what xdist workers are told, recognising
ahead of the tests (the prefetch pools), and freezing the long-lived collected objects out of the garbage
collector's full passes."""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING, Any, Generator, cast

import pytest

from pytest_ocrmetrics.plugin.items import case_of
from pytest_ocrmetrics.plugin.keys import plugin_state
from pytest_ocrmetrics.plugin.state import PluginState

if TYPE_CHECKING:
    from pytest_ocrmetrics.runfile.record import Envelope

GC_FREEZE_EVERY = 1000  # tests between two gc.freeze() calls of a run that froze its collected items


class ShardHooks:
    """Registered with ``--ocr-shard=K/N``: deselects the documents of the other shards, after every other plugin
    filtered the items (a wrapper), lets a shard that holds no document pass (it still writes its run file), and says
    that gates and baseline aggregates saw only the shard."""

    def __init__(self, state: PluginState) -> None:
        shard = state.run_config.settings.shard
        if shard is None:
            raise ValueError("ShardHooks are registered only with --ocr-shard")
        self.state = state
        self.shard = shard

    @pytest.hookimpl(wrapper=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> Generator[None, None, None]:
        result = yield
        other: list[pytest.Item] = []
        for item in items:
            case = case_of(item)  # tests that score no document run in every shard
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
        run_config = self.state.run_config
        if not run_config.is_worker and (run_config.gates or run_config.baseline is not None):
            terminalreporter.write_line(f"--ocr-shard={self.shard}: the gates and the baseline's aggregates saw only "
                                        f"this shard's documents; check them on the merged run with ocrmetrics merge")


class XdistHooks:
    """Registered only when pytest-xdist is loaded: tells the workers what the controller decided."""

    def __init__(self, state: PluginState) -> None:
        self.state = state

    def pytest_xdist_setupnodes(self) -> None:
        """The controller, before it starts the workers: freeze what it holds (modules, configuration, a baseline),
        and from now on what the reports it receives leave behind, as a process that runs the tests does
        (:func:`freeze_survivors`: it collects no items to freeze after). Its full collections walked every report
        of the run again and again (1.6 s of a 20,000-document ``-n 2`` run, 0 with this); undone at cleanup."""
        if not self.state.collection.gc_frozen:
            gc.freeze()
            self.state.collection.gc_frozen = True

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["ocrmetrics_datasets_only"] = self.state.run_config.datasets_only
        if self.state.outcome.crashed:  # a worker replacing a crashed one: it names the documents that were running
            node.workerinput["ocrmetrics_crashed"] = list(self.state.outcome.crashed)

    def pytest_handlecrashitem(self, crashitem: str, report: Any, sched: Any) -> None:
        """A worker died (killed by the out-of-memory killer, a segfault) while running ``crashitem``: mark the
        failed report xdist made for it, so the session records that document as errored (see
        :class:`~.session._SessionHooks`) instead of losing it from every report."""
        report.ocr_worker_crashed = True

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """Keep the records a replacement worker made for the tests of crashed workers (added at the end)."""
        output = getattr(node, "workeroutput", None) or {}
        for record in output.get("ocrmetrics_crashed") or ():  # envelopes (runfile.record.Envelope)
            if isinstance(record, dict) and isinstance(record.get("nodeid"), str):
                self.state.outcome.crash_records.setdefault(record["nodeid"], cast("Envelope", record))

    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """``--dist load`` (the default with ``-n``) that keeps twice ``--ocr-concurrency`` tests queued on each worker
        to the end of an OCR run, so that its prefetch pool stays full (see :mod:`.xdist_scheduler`); None (xdist's
        own) for another mode, a ``--maxschedchunk``, a run without engines or a concurrency of 1."""
        run_config = self.state.run_config
        minimum = 2 * run_config.settings.concurrency  # a backlog: the pool never waits for the next test to arrive
        if (config.getvalue("dist") != "load" or config.getoption("maxschedchunk", None) is not None
                or not run_config.runner.engines or run_config.settings.concurrency < 2):
            return None
        from pytest_ocrmetrics.plugin.xdist_scheduler import prefetching_load_scheduler

        return prefetching_load_scheduler(config, log, minimum)


def unfreeze_gc(state: PluginState) -> None:
    """Undo the ``gc.freeze()`` of :func:`after_collection` or of the xdist controller (an in-process run must not keep
    its items out of the garbage collector's reach)."""
    if state.collection.gc_frozen:
        gc.unfreeze()
        state.collection.gc_frozen = False


def freeze_survivors(state: PluginState) -> None:
    """Called after each test (``pytest_runtest_logfinish``; on the xdist controller as each worker's test
    finishes): every thousand tests, what survived them (reports, JUnit records, the run's index) is frozen too,
    after a collection of the young generations (so the cycles that failures leave behind are freed, not kept): the
    collector's full passes, and pytest's own when it unconfigures, then walk at most a thousand tests' objects
    instead of every report of the run (about a tenth of a 20,000-test run). Undone with the rest at cleanup."""
    if state.collection.gc_frozen:
        state.collection.tests_since_freeze += 1
        if state.collection.tests_since_freeze >= GC_FREEZE_EVERY:
            state.collection.tests_since_freeze = 0
            gc.collect(1)
            gc.freeze()


def after_collection(session: pytest.Session) -> None:
    """Start recognising every collected document ahead of its test (remote engines: many requests at once).

    Not under xdist: every worker collects every document but runs only some, so prefetching there would send each
    page once per worker; with ``-n N`` the workers themselves are the concurrency.
    """
    state = plugin_state(session.config)
    workerinput = getattr(session.config, "workerinput", None)
    if workerinput and workerinput.get("ocrmetrics_crashed"):  # started after a worker crashed: name its documents
        from pytest_ocrmetrics.plugin.records import crashed_item_records

        session.config.workeroutput["ocrmetrics_crashed"] = crashed_item_records(  # type: ignore[attr-defined]
            session, workerinput["ocrmetrics_crashed"])
    if session.config.option.collectonly or _xdist_controller(session.config):
        return
    cases = [case for item in session.items if (case := case_of(item)) is not None]
    if cases:
        _import_test_path()
    if cases and not state.collection.gc_frozen:
        # the collected items, datasets and modules live until the end: the cyclic garbage collector need not walk
        # them again and again while thousands of tests run (about a tenth of a large run); undone at the end
        gc.freeze()
        state.collection.gc_frozen = True
    if cases and not state.run_config.is_worker:  # a worker queues its documents as it learns them (runtest_protocol)
        state.run_config.runner.start_prefetch(cases)


#: what every OCR test needs and would otherwise import lazily, in its first test
_TEST_PATH_MODULES = ("pytest_ocrmetrics.scoring.scorers", "pytest_ocrmetrics.metrics.text",
                      "pytest_ocrmetrics.metrics.layout", "pytest_ocrmetrics.scoring.messages",
                      "pytest_ocrmetrics.plugin.records", "pytest_ocrmetrics.runfile.results")


def _import_test_path() -> None:
    """Import the modules of a test's path once its OCR tests are collected, before the first runs. pytest rewrites
    the assertions of every module of a plugin's distribution as it is imported; a Ctrl-C that lands inside that
    rewriting makes pytest's own interrupt report fail (a ``TypeError``, exit status 1 instead of 2). Imported here,
    before any page is recognised, they cannot be interrupted by a stop requested during the tests (a prefetch
    thread's page, a user watching the first results), and the first test is not charged for them."""
    import importlib

    for name in _TEST_PATH_MODULES:
        importlib.import_module(name)


def prefetch_ahead(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """On an xdist worker: recognise ahead the documents of the tests this worker was given and has not run yet.

    A worker learns its tests a few at a time (``--dist load`` sends small batches as tests finish), so before each
    test the worker's queue is read and its documents are added to the prefetch pools: a remote engine keeps up to
    ``--ocr-concurrency`` requests in flight per worker instead of one.
    """
    state = plugin_state(item.config)
    runner = state.run_config.runner
    if not state.run_config.is_worker or not state.collection.prefetch_ahead or not runner.engines:
        return
    upcoming = [item] + ([nextitem] if nextitem is not None else []) + _queued_items(item)
    cases = [case for candidate in upcoming if (case := case_of(candidate)) is not None]
    if cases:
        runner.prefetch_more(cases)
        state.collection.prefetch_ahead = runner.may_prefetch()  # in-process engines only: stop looking


def _worker_queue(config: pytest.Config) -> Any:
    """pytest-xdist's queue of the item indices this worker was sent and has not started (its ``TestQueue``), or
    None when this xdist version keeps it elsewhere (then only the next test is prefetched)."""
    for plugin in config.pluginmanager.get_plugins():
        queue = getattr(plugin, "torun", None)
        if type(plugin).__name__ == "WorkerInteractor" and callable(getattr(queue, "lock", None)):
            return queue
    return None


def _queued_items(item: pytest.Item) -> list[pytest.Item]:
    state = plugin_state(item.config)
    collection = state.collection
    queue = collection.worker_queue if collection.worker_queue is not None else _worker_queue(item.config)
    collection.worker_queue = queue if queue is not None else False
    if not queue:
        return []
    limit = 2 * state.run_config.settings.concurrency
    try:
        with queue.lock() as pending:
            indices = [index for _, index in zip(range(limit), pending) if isinstance(index, int)]
    except Exception:  # noqa: BLE001 - prefetching is an optimisation: never a reason for a test to fail
        return []
    items = item.session.items
    return [items[index] for index in indices if 0 <= index < len(items)]


def _xdist_controller(config: pytest.Config) -> bool:
    return bool(getattr(config.option, "numprocesses", None)) and config.pluginmanager.hasplugin("dsession")
