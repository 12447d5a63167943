"""The run's state: what the plugin keeps in ``config.stash`` for the run and on each item for its test."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_ocrmetrics.scoring.context import OcrTestContext
from pytest_ocrmetrics.engines.base import OcrOutput
from pytest_ocrmetrics.plugin.options import OcrSettings
from pytest_ocrmetrics.runfile.record import Envelope
from pytest_ocrmetrics.runfile.results import RunResults
from pytest_ocrmetrics.scoring.runner import OcrCase, OcrRunner

CASE_ARG = "_ocr_case"  # the parameter that carries a test function's OcrCase (or _BrokenDataset)


@dataclass
class ItemState:
    """What one OCR test produced, kept on the item until its report is made."""

    case: OcrCase
    context: OcrTestContext
    output: OcrOutput | None = None
    filtered: str | None = None
    recorded: bool = False
    # the test's ocr_thresholds limits, read from its markers once (or why they are wrong: the test fails with it)
    limits: dict[str, float] = field(default_factory=dict)
    limits_error: str | None = None


@dataclass
class PluginState:
    """The run's state, made once per config at configure time and kept in ``config.stash[STATE]``."""

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
    dataset_folders: tuple[str, ...] | None = None  # the --ocr-dataset folders (path prefixes), found when first needed
    # whether records carry each document's confusion pairs: only a report that shows them needs them (the run file,
    # from which any report can be made later, the HTML report, the full terminal summary)
    record_confusions: bool = True
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)  # nodeid -> {"envelope", "outcome", "message"}
    # xdist controller: the tests whose worker crashed, nodeid -> message, recorded as errored documents at the end
    # from the records a replacement worker made for them (crash_records), else from the test id alone
    crashed: dict[str, str] = field(default_factory=dict)
    crash_records: dict[str, Envelope] = field(default_factory=dict)
    cli_datasets_used_by_functions: bool = False
    interrupted: bool = False  # Ctrl-C seen; -x / --maxfail are read from the session at the end
    junit_metrics: frozenset[str] | None = None  # the metrics each JUnit testcase carries (None: every one)
    prefetch_ahead: bool = True  # xdist worker: queue upcoming documents for the prefetch pools
    gc_frozen: bool = False  # gc.freeze() after collection, gc.unfreeze() when pytest cleans up the config
    tests_since_freeze: int = 0  # tests run since the last gc.freeze() (see scheduling.freeze_survivors)
    worker_queue: Any = None  # xdist worker: pytest-xdist's queue of this worker's pending item indices (False: none)
    # the last page recognised by a dataset item: its fact items (--ocr-fact-items) reuse its output and scores
    last_page: tuple[Any, ...] | None = None
    # the thresholds of a document without its own in a test without limits (by facts=True/False), made once
    configured_thresholds: dict[bool, tuple[Any, ...]] = field(default_factory=dict)


STATE = pytest.StashKey[PluginState]()
ITEM_STATE = pytest.StashKey[ItemState]()
_REPORTS = pytest.StashKey[tuple[dict[str, Path], list[str]]]()  # report files written, and one line per failure


def _state(config: pytest.Config) -> PluginState:
    return config.stash[STATE]


@dataclass(frozen=True)
class _BrokenDataset:
    """A dataset of a Python suite that could not be loaded: one erroring test stands for it, the others run."""

    dataset: str
    message: str
