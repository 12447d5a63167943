"""The run's state: what the plugin keeps in ``config.stash`` for the run and on each item for its test (under the
keys of :mod:`~pytest_ocrmetrics.plugin.keys`).

One :class:`PluginState` per config, made when the run starts using OCR (see :mod:`~.configure`), in three parts,
one per phase: the frozen :class:`RunConfig` (what configure decided), the :class:`CollectionState` (what collecting
and running the tests learn and cache) and the :class:`RunOutcome` (the records, the run, its verdict and the reports
written). Imported by a run that uses OCR (making these dataclasses is most of a light run's import cost otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple

import pytest

if TYPE_CHECKING:
    from pytest_ocrmetrics.assertions import OcrTestContext
    from pytest_ocrmetrics.engines.base import OcrOutput
    from pytest_ocrmetrics.gating.baseline import Baseline
    from pytest_ocrmetrics.gating.gates import Gate
    from pytest_ocrmetrics.gating.verdict import Verdict
    from pytest_ocrmetrics.metrics.thresholds import Threshold
    from pytest_ocrmetrics.plugin.settings import OcrSettings
    from pytest_ocrmetrics.runfile.record import Envelope
    from pytest_ocrmetrics.runfile.results import RunResults
    from pytest_ocrmetrics.scoring.document import DocumentScore
    from pytest_ocrmetrics.scoring.runner import OcrCase, OcrRunner

from pytest_ocrmetrics.plugin.keys import CASE_ARG

__all__ = ["BrokenDataset", "CollectionState", "ItemState", "LastPage", "PageKey", "PendingTest", "PluginState",
           "RunConfig", "RunOutcome", "WrittenReports", "broken_dataset_of"]


@dataclass
class ItemState:
    """What one OCR test produced, kept on the item until its report is made."""

    case: OcrCase
    context: OcrTestContext
    output: OcrOutput | None = None
    filtered: str | None = None
    recorded: bool = False
    # the JUnit properties the record added to the item's (on an xdist worker, its reports send them as one text)
    junit_properties: list[tuple[str, str]] = field(default_factory=list)
    # the test's ocr_thresholds limits, read from its markers once (or why they are wrong: the test fails with it)
    limits: dict[str, float] = field(default_factory=dict)
    limits_error: str | None = None


@dataclass(frozen=True)
class RunConfig:
    """What configure decided for the run (settings checked, engines, gates and baseline loaded); never changes.

    The runner is the run's machinery (engines, caches, prefetch pools): the reference is fixed, its inside works.
    """

    settings: OcrSettings
    runner: OcrRunner
    is_worker: bool
    gates: tuple[Gate, ...] = ()
    tolerances: Mapping[str, Any] = field(default_factory=dict)
    baseline: Baseline | None = None
    datasets_only: bool = False  # --ocr-dataset without test paths: collect the dataset items and nothing else
    # whether records carry each document's confusion pairs: only a report that shows them needs them (the run file,
    # from which any report can be made later, the HTML report, the full terminal summary)
    record_confusions: bool = True
    junit_metrics: frozenset[str] | None = None  # the metrics each JUnit testcase carries (None: every one)


class PageKey(NamedTuple):
    """One page: a document of a dataset through an engine."""

    engine: str
    dataset_root: Path
    document: str


class LastPage(NamedTuple):
    """The last page a dataset item recognised: its fact items (``--ocr-fact-items``) reuse its output and score."""

    key: PageKey
    output: OcrOutput | None
    filtered: str | None
    score: DocumentScore | None = None


@dataclass
class CollectionState:
    """What collecting and running the tests learn, and what they work out once and keep."""

    cli_datasets_used_by_functions: bool = False  # a test function scores the --ocr-dataset datasets
    dataset_folders: tuple[str, ...] | None = None  # the --ocr-dataset folders (path prefixes), found when first needed
    prefetch_ahead: bool = True  # xdist worker: queue upcoming documents for the prefetch pools
    worker_queue: Any = None  # xdist worker: pytest-xdist's queue of this worker's pending item indices (False: none)
    gc_frozen: bool = False  # gc.freeze() after collection, gc.unfreeze() when pytest cleans up the config
    tests_since_freeze: int = 0  # tests run since the last gc.freeze() (see scheduling.freeze_survivors)
    last_page: LastPage | None = None
    # the thresholds of a document without its own in a test without limits (by facts=True/False), made once
    configured_thresholds: dict[bool, tuple[Threshold, ...]] = field(default_factory=dict)


@dataclass
class PendingTest:
    """A test whose reports are arriving (on the process that writes the reports): its record's envelope
    (:class:`~pytest_ocrmetrics.runfile.record.Envelope`) and its worst outcome."""

    envelope: Envelope | None = None
    outcome: str = "passed"
    message: str | None = None


class WrittenReports(NamedTuple):
    """The report files written, by kind, and one line per report that was asked for and not written."""

    written: dict[str, Path]
    problems: list[str]


@dataclass
class RunOutcome:
    """What the run produced: the document records, then the run, its verdict and the reports written."""

    results: RunResults
    pending: dict[str, PendingTest] = field(default_factory=dict)  # by node id
    # xdist controller: the tests whose worker crashed, nodeid -> message, recorded as errored documents at the end
    # from the records a replacement worker made for them (crash_records), else from the test id alone
    crashed: dict[str, str] = field(default_factory=dict)
    crash_records: dict[str, Envelope] = field(default_factory=dict)  # envelopes, by node id
    interrupted: bool = False  # Ctrl-C seen; -x / --maxfail are read from the session at the end
    run: dict[str, Any] | None = None  # the finished run (the JSON run file's content), built once at the end
    verdict: Verdict | None = None
    reports: WrittenReports = field(default_factory=lambda: WrittenReports({}, []))


@dataclass(frozen=True)
class PluginState:
    """The run's state, made once per config and kept in ``config.stash[STATE]``: one part per phase."""

    run_config: RunConfig
    collection: CollectionState
    outcome: RunOutcome


@dataclass(frozen=True)
class BrokenDataset:
    """A dataset of a Python suite that could not be loaded: one erroring test stands for it, the others run."""

    dataset: str
    message: str


def broken_dataset_of(item: pytest.Item) -> BrokenDataset | None:
    """The dataset that could not be loaded which ``item`` stands for, or None (every other test)."""
    broken = getattr(getattr(item, "callspec", None), "params", {}).get(CASE_ARG)
    return broken if isinstance(broken, BrokenDataset) else None
