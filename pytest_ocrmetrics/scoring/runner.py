"""One session's OCR work, without pytest: datasets, engines (created once), recognition and scoring.

The plugin holds one :class:`OcrRunner` per process (per xdist worker). Everything expensive happens at most once:
a dataset is loaded once per path, an engine is created on first use and closed at the end of the session.
"""

from __future__ import annotations

import time
import warnings
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ocrmetrics.core.documents import MAX_IMAGE_PIXELS, Document
from pytest_ocrmetrics.datasets import Dataset, DatasetError, load_dataset
from pytest_ocrmetrics.engines.base import EngineError, EngineOptionError, EngineUnavailable, OcrEngine, OcrOutput
from pytest_ocrmetrics.engines.cache import CachingEngine, OutputCache
from pytest_ocrmetrics.engines.registry import EngineRegistry, parse_engine_options
from pytest_ocrmetrics.engines.repeats import OcrRepeatsWarning, RepeatingEngine, not_repeated_message
from pytest_ocrmetrics.scoring.document import ScoringOptions, check_output_length

if TYPE_CHECKING:  # imported lazily at run time (start_prefetch)
    from pytest_ocrmetrics.engines.prefetch import Prefetcher

__all__ = ["OcrRunner", "EngineChoice", "OcrCase", "DocumentUnreadable", "EngineCreationError"]

_MESSAGE_LIMIT = 1000  # characters of a creation error repeated in every test of the engine


class DocumentUnreadable(EngineError):
    """The document cannot be recognised at all (missing image, load error); its test errors."""


class EngineCreationError(EngineError):
    """The engine could not be created (a problem only its factory finds); each of its tests errors with this line."""


@dataclass(frozen=True)
class _CreationFailure:
    """Why an engine could not be created, kept as text: each test gets a fresh exception, so no traceback grows."""

    unavailable: bool  # EngineUnavailable: its tests are skipped
    message: str

    def exception(self) -> Exception:
        return EngineUnavailable(self.message) if self.unavailable else EngineCreationError(self.message)


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _MESSAGE_LIMIT else line[: _MESSAGE_LIMIT - 1] + "…"


@dataclass(frozen=True)
class EngineChoice:
    """One ``--ocr-engine`` value: the registered name, its argument, and the label used in test ids and reports."""

    label: str
    name: str
    arg: str | None
    text: str


@dataclass(frozen=True)
class OcrCase:
    """One generated test: this document through this engine."""

    engine: EngineChoice
    document: Document
    dataset: Dataset

    @property
    def id(self) -> str:
        """The test id ``<engine>-<document id>``, printable and encodable as UTF-8 (see :func:`printable_id`)."""
        return printable_id(f"{self.engine.label}-{self.document.id}")


def printable_id(text: str) -> str:
    """``text`` with every character that does not print written as its Python escape (``\\x1b``, ``\\u202e``).

    Test ids reach the terminal (``-v``), JUnit class names and pytest-xdist, which sends them between processes
    before any report exists: a control character (ESC), a bidi override or a lone surrogate (a file name that is not
    UTF-8, a ``\\ud800`` escape in ground truth) must not travel raw. The document keeps its own id (the replay
    engine finds its prediction by it); reports show it with their own marks.

    >>> printable_id("replay-scan" + chr(0x1B) + "[31m.png"), printable_id("replay-façade 京.png")
    ('replay-scan\\\\x1b[31m.png', 'replay-façade 京.png')
    """
    from pytest_ocrmetrics.core.safe_text import printable

    return printable(text)


def choose_engines(values: tuple[str, ...]) -> list[EngineChoice]:
    """Turn ``--ocr-engine`` values into labelled choices; labels are the engine names, made unique when repeated."""
    parsed: list[tuple[str, str | None, str]] = []
    for text in values:
        name, sep, arg = text.partition(":")
        parsed.append((name.strip(), arg.strip() if sep else None, text))
    counts = Counter(name for name, _, _ in parsed)
    choices: list[EngineChoice] = []
    seen: set[str] = set()
    for engine_name, engine_arg, typed in parsed:
        label = engine_name
        if counts[engine_name] > 1 and engine_arg:
            label = f"{engine_name}:{Path(engine_arg).name}"
        base, n = label, 2
        while label in seen:
            label, n = f"{base}#{n}", n + 1
        seen.add(label)
        choices.append(EngineChoice(label, engine_name, engine_arg, typed))
    return choices


def _empty_dataset_message(path: Path, dataset: Dataset) -> str:
    """Why ``dataset`` has no document, in one sentence naming ``path``."""
    if dataset.skipped:
        first = dataset.skipped[0]
        total = sum(entry.count for entry in dataset.skipped)
        every = "its only entry was" if total == 1 else f"all {total:,} entries were"
        return f"{path}: the dataset has no documents: {every} skipped, the first at {first.source}: {first.reason}"
    return f"{path}: the dataset has no documents (its ground truth lists none)"


@dataclass(frozen=True)
class RunnerSettings:
    """What the runner needs of a run's settings: engines, their options, and how documents reach them. Plain data
    (the plugin makes it from its ``--ocr-*`` options; a script or notebook makes it directly)."""

    engines: tuple[str, ...] = ()  #: ``--ocr-engine`` values: ``NAME``, ``NAME:ARG`` or ``LABEL=NAME[:ARG]``
    engine_options: tuple[str, ...] = ()  #: ``ENGINE.KEY=VALUE`` settings
    limit: int | None = None  #: the first N documents of each dataset
    pdf_longest_side: int = 1288  #: PDF pages are rendered with this many pixels on their longest side
    repeats: int = 1  #: run each document this many times (flakiness of nondeterministic engines)
    concurrency: int = 8  #: documents in flight per engine that runs outside this process
    max_image_pixels: int = MAX_IMAGE_PIXELS  #: larger images are refused before an engine decodes them


class OcrRunner:
    """Datasets, engines and scoring for one process."""

    def __init__(self, settings: RunnerSettings, registry: EngineRegistry, *, scoring: ScoringOptions | None = None,
                 cache: OutputCache | None = None) -> None:
        self.settings = settings
        self.registry = registry
        self.engines = choose_engines(settings.engines)
        try:
            self.engine_options = parse_engine_options(settings.engine_options)
        except ValueError as exc:
            raise EngineOptionError(str(exc)) from None
        self.scoring = scoring if scoring is not None else ScoringOptions()
        self._datasets: dict[tuple[Path, str | None], Dataset] = {}
        self._named: dict[str, Path] = {}  # dataset name -> the (resolved) path it names in this run
        self._instances: dict[str, OcrEngine | _CreationFailure] = {}
        self._identity_sent: set[str] = set()
        self.cache = cache
        self._prefetchers: dict[tuple[str, Path], Prefetcher] = {}
        self._no_prefetch: dict[str, bool] = {}  # engine labels that get no pool (in-process, or not created)
        self._cancelled = False

    # -- validation at startup -------------------------------------------------------------------------------------
    def validate(self) -> None:
        """Check engine names, settings and their values without creating any engine (cheap; runs at configure
        time): what the user typed wrong is one usage error
        (:class:`~pytest_ocrmetrics.engines.base.EngineOptionError`), not an error in every test.

        Settings for an engine nobody registered (``tesserract.psm=6``) are refused too: they would be ignored.
        """
        for engine, settings in self.engine_options.items():
            if engine not in self.registry:
                try:
                    self.registry.get(engine)
                except EngineOptionError as exc:  # unknown engine, with a did-you-mean
                    raise EngineOptionError(f"engine option {engine}.{next(iter(settings))}: {exc}") from None
        for choice in self.engines:
            self.registry.check(choice.text, self.engine_options.get(choice.name, {}))

    # -- datasets --------------------------------------------------------------------------------------------------
    def dataset(self, path: Path, name: str | None = None, *, rootdir: Path | None = None) -> Dataset:
        """The dataset at ``path``, loaded once. A document whose own thresholds are not sensible limits
        (``"field_f1": 90``, ``"cer": 5``) comes from the loader with an error naming its ground-truth entry: its
        test errors, the others run. A dataset with no document at all (an empty ground-truth file, every entry
        skipped) is a :class:`DatasetError`. Documents that are PDF pages are rendered at ``--ocr-pdf-longest-side``
        pixels.

        ``name`` defaults to the path relative to ``rootdir`` (pytest's rootdir; see
        :func:`~pytest_ocrmetrics.datasets.loading.dataset_name`). Two different datasets of one run with the same name
        are a :class:`DatasetError`: their documents would be counted as one dataset's."""
        key = (path.resolve(), name)
        if key not in self._datasets:
            dataset = load_dataset(path, name=name, limit=self.settings.limit, rootdir=rootdir)
            other = self._named.setdefault(dataset.name, key[0])
            if other != key[0]:
                raise DatasetError(f"{path}: the dataset name {dataset.name!r} is already the name of {str(other)!r}; "
                                   f"name one of them: --ocr-dataset=NAME=PATH (or name= of the ocr_dataset marker).")
            if not dataset.documents:  # a test of it could only pass having scored nothing
                raise DatasetError(_empty_dataset_message(path, dataset))
            longest_side, max_pixels = self.settings.pdf_longest_side, self.settings.max_image_pixels
            documents = tuple(_render_at(document, longest_side, max_pixels) for document in dataset.documents)
            if any(new is not old for new, old in zip(documents, dataset.documents)):
                dataset = replace(dataset, documents=documents)
            self._datasets[key] = dataset
        return self._datasets[key]

    # -- engines ---------------------------------------------------------------------------------------------------
    def engine(self, choice: EngineChoice) -> OcrEngine:
        """The engine for ``choice``, created on first use.

        It is wrapped in the output cache, or with ``--ocr-repeats=N`` (N > 1) in a
        :class:`~pytest_ocrmetrics.engines.repeats.RepeatingEngine` (which caches each repeat); an engine that is
        not ``cacheable`` (replay) is neither, and with N > 1 an :class:`OcrRepeatsWarning` says once that it is not
        repeated.

        A creation failure is remembered as one line and raised as a fresh exception for every test of the engine:
        :class:`~pytest_ocrmetrics.engines.base.EngineUnavailable` (a skip) or :class:`EngineCreationError`.
        Re-raising one stored exception would grow its traceback with every test (25 documents printed 187,769
        lines).
        """
        instance = self._instances.get(choice.label)
        if instance is None:
            not_repeated = ""
            try:
                instance = self.registry.create(choice.text, self.engine_options.get(choice.name, {}))
                # engines whose output is not a function of the image (replay) say cacheable = False; they are
                # not repeated either (replay reads the page's own repeat files)
                cacheable = getattr(instance, "cacheable", True)
                if cacheable and self.settings.repeats > 1:
                    instance = RepeatingEngine(instance, self.settings.repeats, cache=self.cache)
                elif cacheable and self.cache is not None:
                    instance = CachingEngine(instance, self.cache)
                elif not cacheable and self.settings.repeats > 1:
                    not_repeated = not_repeated_message(choice.label, self.settings.repeats)
            except EngineUnavailable as exc:
                instance = _CreationFailure(True, _one_line(str(exc)))
            except Exception as exc:  # noqa: BLE001 - remembered, reported for every test of this engine
                detail = str(exc) if isinstance(exc, (EngineError, EngineOptionError)) else f"{type(exc).__name__}: {exc}"
                instance = _CreationFailure(False, _one_line(f"engine {choice.text!r} could not be created: {detail}"))
            self._instances[choice.label] = instance
            if not_repeated:  # once per engine and process, after it is stored (-W error makes it an exception)
                warnings.warn(not_repeated, OcrRepeatsWarning, stacklevel=2)
        if isinstance(instance, _CreationFailure):
            raise instance.exception()
        return instance

    def recognize(self, case: OcrCase) -> OcrOutput:
        """Run the case's engine on its document (from the prefetch pool or the cache when they have it).

        A document that cannot be read raises :class:`DocumentUnreadable`; an output too long to score raises
        :class:`~pytest_ocrmetrics.scoring.document.OutputTooLong`.
        """
        choice, document = case.engine, case.document
        if document.error:
            raise DocumentUnreadable(document.error)
        engine = self.engine(choice)
        prefetcher = self._prefetchers.get((choice.label, case.dataset.root))
        if prefetcher is not None:
            output = prefetcher.result(document)  # its time is the engine's, not how long this test waited
        else:
            start = time.perf_counter()
            output = engine.recognize(document)
            if not output.elapsed_s and not output.cached:  # an engine that does not time itself
                output = replace(output, elapsed_s=time.perf_counter() - start)
        # a 50 MB output errors its document, not the run (MemoryError)
        check_output_length(document, output, self.scoring.max_output_chars)
        return output

    def start_prefetch(self, cases: list[OcrCase]) -> None:
        """Start recognising the collected documents ahead of their tests, in collection order.

        One pool per engine and dataset (document ids are unique only within a dataset). Remote engines
        (``concurrent = True``) get ``--ocr-concurrency`` requests in flight; other engines one background worker.
        """
        from pytest_ocrmetrics.engines.prefetch import Prefetcher, wants_prefetch

        groups: dict[tuple[str, Path], tuple[EngineChoice, list[Document]]] = {}
        for case in cases:
            key = (case.engine.label, case.dataset.root)
            groups.setdefault(key, (case.engine, []))[1].append(case.document)
        for key, (choice, documents) in groups.items():
            try:
                engine = self.engine(choice)
            except Exception:  # noqa: BLE001 - the tests of this engine report it (skip or error)
                continue
            if key not in self._prefetchers and wants_prefetch(engine, self.settings.concurrency):
                prefetcher = Prefetcher(engine, documents, concurrency=self.settings.concurrency)
                prefetcher.start()
                self._prefetchers[key] = prefetcher

    def prefetch_more(self, cases: list[OcrCase]) -> None:
        """Queue ``cases`` for recognition ahead of their tests, adding to the pools :meth:`start_prefetch` made
        (or making them): what an xdist worker calls as it learns which tests it runs. Engines that do not want a
        pool (in-process ones, see :func:`~pytest_ocrmetrics.engines.prefetch.wants_prefetch`) cost one dict lookup."""
        from pytest_ocrmetrics.engines.prefetch import Prefetcher, wants_prefetch

        if self._cancelled:
            return
        groups: dict[tuple[str, Path], tuple[EngineChoice, list[Document]]] = {}
        for case in cases:
            key = (case.engine.label, case.dataset.root)
            if self._no_prefetch.get(case.engine.label):
                continue
            groups.setdefault(key, (case.engine, []))[1].append(case.document)
        for key, (choice, documents) in groups.items():
            prefetcher = self._prefetchers.get(key)
            if prefetcher is not None:
                prefetcher.add(documents)
                continue
            try:
                engine = self.engine(choice)
            except Exception:  # noqa: BLE001 - the tests of this engine report it (skip or error)
                self._no_prefetch[choice.label] = True
                continue
            if not wants_prefetch(engine, self.settings.concurrency):
                self._no_prefetch[choice.label] = True
                continue
            prefetcher = self._prefetchers[key] = Prefetcher(engine, documents, concurrency=self.settings.concurrency)
            prefetcher.start()

    def may_prefetch(self) -> bool:
        """False once every engine of the run is known to get no prefetch pool (:meth:`prefetch_more` is then
        pointless)."""
        return not self._cancelled and not all(self._no_prefetch.get(choice.label) for choice in self.engines)

    def cancel(self) -> None:
        """Stop outstanding prefetch work at once (Ctrl-C); no pool is started after this."""
        self._cancelled = True
        for prefetcher in self._prefetchers.values():
            prefetcher.close(cancel=True)
        self._prefetchers.clear()

    def identity_once(self, choice: EngineChoice) -> dict[str, Any] | None:
        """The engine's identity the first time it is asked for in this process (it rides on one report only)."""
        if choice.label in self._identity_sent:
            return None
        instance = self._instances.get(choice.label)
        if instance is None or isinstance(instance, _CreationFailure):
            return None
        self._identity_sent.add(choice.label)
        try:
            return {**dict(instance.identity()), "selected_as": choice.text}
        except Exception as exc:  # noqa: BLE001 - identity is informative only
            return {"selected_as": choice.text, "identity_error": str(exc)}

    def close(self) -> None:
        self.cancel()
        for instance in self._instances.values():
            if not isinstance(instance, _CreationFailure):
                try:
                    instance.close()
                except Exception:  # noqa: BLE001 - closing must not hide test results
                    pass
        self._instances.clear()


def _render_at(document: Document, longest_side: int, max_image_pixels: int) -> Document:
    """``document``, or a copy rendered at ``longest_side`` pixels when it is a PDF page rendered at another size,
    and read under the run's pixel limit (``--ocr-max-image-pixels``) when that is not the default."""
    changes: dict[str, int] = {}
    if document.page is not None and document.render_longest_side != longest_side:
        changes["render_longest_side"] = longest_side
    if document.max_image_pixels != max_image_pixels:
        changes["max_image_pixels"] = max_image_pixels
    return replace(document, **changes) if changes else document  # type: ignore[arg-type]
