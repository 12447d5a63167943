"""The run's results on the controller: one record per document × engine, aggregated per engine × dataset.

Workers (or the single process without xdist) put a plain-dict record on each test report; this module only ever
sees those dicts, so results are the same with and without xdist. Aggregates are computed from documents sorted by
(engine, dataset, id), so the bootstrap intervals do not depend on the order tests finished in.

Memory stays flat: each record is written, as one line of JSON, to a temporary spool file when it arrives; only a
small index entry (its sort key, outcome and place in the file) stays in memory. The run's ``documents`` are a
:class:`SpooledDocuments` sequence that reads them back one at a time, the summary is computed in one streaming pass
over them, and :func:`~pytest_ocrmetrics.verdict.write_run` writes the run file document by document.
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from typing import IO, Any, Iterable, Iterator, Mapping, NamedTuple, Sequence, overload

from pytest_ocrmetrics.metrics.aggregate import MetricAccumulator, bootstrap_mean_intervals
from pytest_ocrmetrics.metrics.registry import METRICS, in_registry_order

__all__ = ["RunResults", "SpooledDocuments", "OUTCOMES", "RUN_SCHEMA_ID"]

RUN_SCHEMA_ID = "pytest-ocrmetrics/1"
OUTCOMES = ("passed", "failed", "error", "skipped", "filtered")
_SEVERITY = {"skipped": 0, "filtered": 1, "passed": 2, "failed": 3, "error": 4}


class _Entry(NamedTuple):
    """Where one added record lies in the spool file, with what sorting and merging need."""

    engine: str
    dataset: str
    id: str
    nodeid: str
    outcome: str
    offset: int
    length: int


class _Spool:
    """An append-only temporary file of JSON lines (deleted when closed or garbage-collected)."""

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None
        self._end = 0

    def append(self, text: str) -> tuple[int, int]:
        """Write one record's JSON text; returns where it lies."""
        data = text.encode("utf-8")
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="ocrmetrics-records-")
        self._file.seek(self._end)
        self._file.write(data)
        offset, self._end = self._end, self._end + len(data)
        return offset, len(data)

    def read(self, offset: int, length: int) -> dict[str, Any]:
        assert self._file is not None
        self._file.seek(offset)
        return json.loads(self._file.read(length).decode("utf-8"))

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
            self._end = 0


class SpooledDocuments(Sequence[dict[str, Any]]):
    """The run's documents, read back from the spool file one at a time (a fresh dict each time).

    A ``Sequence``: ``len()``, iteration and indexing work; ``list(documents)`` holds them all, which reports that
    need every document at once may do. Their text was cleaned when they were added, and what was replaced is
    counted in the run's ``replaced_characters`` (``replacements_counted``).
    """

    replacements_counted = True

    def __init__(self, spool: _Spool, groups: list[list[_Entry]]) -> None:
        self._spool = spool
        self._groups = groups

    def __len__(self) -> int:
        return len(self._groups)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self._document(group) for group in self._groups[index]]
        return self._document(self._groups[index])

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for group in self._groups:
            yield self._document(group)

    def __repr__(self) -> str:
        return f"SpooledDocuments({len(self._groups)} documents)"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (SpooledDocuments, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def _document(self, group: list[_Entry]) -> dict[str, Any]:
        return _merge([(self._spool.read(entry.offset, entry.length), entry.outcome) for entry in group])


def _merge(records: list[tuple[dict[str, Any], str]]) -> dict[str, Any]:
    """One document from the records of every test that scored it (sorted by node id): the worst outcome, all node
    ids in ``tests``, every check; metrics from the first record that has any."""
    current: dict[str, Any] | None = None
    for rec, outcome in records:
        rec["outcome"] = outcome
        if current is None:
            current = {**rec, "tests": [rec["nodeid"]] if rec.get("nodeid") else []}
            continue
        if rec.get("nodeid"):
            current["tests"].append(rec["nodeid"])
        current["checks"] = [*(current.get("checks") or []), *(rec.get("checks") or [])]
        if _SEVERITY[rec["outcome"]] > _SEVERITY[current["outcome"]]:
            current["outcome"] = rec["outcome"]
            current["message"] = rec.get("message")
            current["nodeid"] = rec.get("nodeid", current.get("nodeid"))
        if not current.get("metrics") and rec.get("metrics"):
            current.update(metrics=rec["metrics"], counts=rec.get("counts", {}))
    assert current is not None
    return current


@dataclass
class RunResults:
    """Collects document records and builds the summary and the JSON run file.

    ``records`` holds one small index entry per added record (the records themselves are spooled to a temporary
    file, see the module docstring).
    """

    normalization: Mapping[str, str] = field(default_factory=lambda: {"name": "nfc", "unit": "grapheme", "tokenizer": "whitespace"})
    seed: int = 0
    records: list[_Entry] = field(default_factory=list)
    engine_identities: dict[str, Any] = field(default_factory=dict)
    skipped_entries: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    collection_errors: list[dict[str, str]] = field(default_factory=list)  # datasets that could not be loaded
    replaced_characters: int = 0  # replaced with U+FFFD in the records (here and, before sending, on xdist workers)
    _spool: _Spool = field(default_factory=_Spool, repr=False, compare=False)

    def add_collection_error(self, dataset: str, message: str) -> None:
        """A dataset that could not be loaded (malformed ground truth): listed in the run, once per dataset."""
        if not any(error["dataset"] == dataset for error in self.collection_errors):
            self.collection_errors.append({"dataset": dataset, "message": message})

    def add(self, record: Mapping[str, Any], outcome: str, message: str | None = None) -> None:
        """Add one finished document test. ``outcome`` is the test's; a filtered record stays ``filtered``.

        Text that no report can hold (lone surrogates, non-characters) is replaced here, once, and counted.
        """
        rec = dict(record)
        self.replaced_characters += int(rec.get("replaced_characters") or 0)  # replaced on an xdist worker
        identity = rec.pop("engine_identity", None)
        if identity is not None:
            self.engine_identities.setdefault(rec["engine"], identity)
        for entry in rec.pop("dataset_skipped", None) or ():
            self.skipped_entries.setdefault((rec["dataset"], entry["source"]), {"dataset": rec["dataset"], **entry})
        rec["outcome"] = "filtered" if rec.get("filtered") else outcome
        rec.pop("filtered", None)
        if message is not None and rec["outcome"] in ("failed", "error", "skipped"):
            rec["message"] = message
        offset, length = self._spool.append(self._clean_json(rec))
        self.records.append(_Entry(str(rec["engine"]), str(rec["dataset"]), str(rec["id"]), str(rec.get("nodeid", "")),
                                   rec["outcome"], offset, length))

    def _clean_json(self, rec: dict[str, Any]) -> str:
        """The record's JSON text, its unencodable characters replaced and counted (one scan when there are none).

        ``default=str``: a value json cannot write (a Path from a hook) is kept as its text; NaN is kept (and refused
        when the run file is written, as before).
        """
        from pytest_ocrmetrics.reporting.safe_text import _UNENCODABLE, clean_run

        def encode(value: Any) -> str:
            return json.dumps(value, ensure_ascii=False, default=str, check_circular=False)

        text = encode(rec)
        if text.isascii() or _UNENCODABLE.search(text) is None:
            return text
        cleaned, replaced = clean_run(rec)
        self.replaced_characters += replaced
        return encode(cleaned)

    def documents(self) -> SpooledDocuments:
        """One record per engine × dataset × document, sorted, read back from the spool as they are iterated.

        Several test functions may score the same document (one asserting CER, another field F1): their records
        are merged so that aggregates count each document once. The merged outcome is the worst one
        (error > failed > passed > filtered > skipped), ``tests`` lists the node ids and ``checks`` has every check.
        """
        groups: list[list[_Entry]] = []
        for entry in sorted(self.records, key=lambda e: (e.engine, e.dataset, e.id, e.nodeid)):
            if groups and groups[-1][0][:3] == entry[:3]:
                groups[-1].append(entry)
            else:
                groups.append([entry])
        return SpooledDocuments(self._spool, groups)

    def close(self) -> None:
        """Delete the spool file (the documents of a run built before can no longer be read)."""
        self._spool.close()
        self.records.clear()

    def summary(self, documents: Iterable[Mapping[str, Any]] | None = None, *,
                resamples: int = 1000) -> list[dict[str, Any]]:
        """One row per engine × dataset: outcome counts (``evaluated`` = passed + failed, the documents scored and
        judged) and, per metric, micro/mean/median/p90/p95/min/max/n/CI.

        ``documents`` are :meth:`documents` when the caller already has them (any iterable of document records,
        e.g. a merged run's); they are read once, and not held.
        """
        groups: dict[tuple[str, ...], _Group] = {}
        for rec in self.documents() if documents is None else documents:
            _group(groups, (rec["engine"], rec["dataset"])).add(rec)
        return [self._row(engine, dataset, group, resamples) for (engine, dataset), group in groups.items()]

    def summary_by_tag(self, documents: Iterable[Mapping[str, Any]] | None = None, *,
                       resamples: int = 1000) -> list[dict[str, Any]]:
        """The summary's rows per document tag (a document's ``tags``, from its ground truth): one row per tag ×
        engine × dataset, with a ``tag`` key, aggregated exactly like :meth:`summary` over the documents carrying that
        tag (a document with two tags counts in both). Sorted by tag, engine, dataset; empty when no document has
        tags."""
        groups: dict[tuple[str, ...], _Group] = {}
        for rec in self.documents() if documents is None else documents:
            for tag in dict.fromkeys(str(t) for t in rec.get("tags") or ()):
                _group(groups, (tag, rec["engine"], rec["dataset"])).add(rec)
        return [{"tag": tag, **self._row(engine, dataset, groups[(tag, engine, dataset)], resamples)}
                for tag, engine, dataset in sorted(groups)]

    def _row(self, engine: str, dataset: str, group: "_Group", resamples: int) -> dict[str, Any]:
        """One summary row from a group's running totals."""
        accumulators = group.accumulators
        # one set of bootstrap resamples for all metrics of this group (the costly part of a summary)
        columns = {name: sorted(acc.values) for name, acc in accumulators.items() if acc.values}
        intervals = (bootstrap_mean_intervals(columns, seed=self.seed, resamples=resamples)
                     if resamples and columns else {})
        metrics = {
            name: accumulators[name].result(seed=self.seed, resamples=0, interval=intervals.get(name)).to_dict()
            for name in in_registry_order(accumulators)
        }
        outcomes = group.outcomes
        return {
            "engine": engine,
            "dataset": dataset,
            "documents": group.documents,
            "evaluated": outcomes["passed"] + outcomes["failed"],
            "passed": outcomes["passed"],
            "failed": outcomes["failed"],
            "errors": outcomes["error"],
            "skipped": outcomes["skipped"],
            "filtered": outcomes["filtered"],
            "skipped_entries": sum(1 for key in self.skipped_entries if key[0] == dataset),
            "cache_hits": group.cache_hits,
            "truncated": group.truncated,
            "metrics": metrics,
        }

    def to_run(self, *, plugin_version: str, pytest_version: str, resamples: int = 1000,
               interrupted: bool = False) -> dict[str, Any]:
        """The JSON run file (schema ``pytest-ocrmetrics/1``).

        ``interrupted`` marks a run that stopped early (Ctrl-C, ``-x``, ``--maxfail``): its documents are only the
        ones that ran. ``collection_errors`` lists the datasets that could not be loaded. ``summary_by_tag`` has the
        summary's rows per document tag (:meth:`summary_by_tag`, with the same bootstrap ``resamples``), absent when
        no document has tags.
        """
        documents = self.documents()
        run = {
            "schema": RUN_SCHEMA_ID,
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "environment": {
                "python": platform.python_version(),
                "platform": platform.platform(),
                "implementation": sys.implementation.name,
                "plugin_version": plugin_version,
                "pytest_version": pytest_version,
                "engines": dict(sorted(self.engine_identities.items())),
            },
            "normalization": dict(self.normalization),
            "documents": documents,
            "summary": self.summary(documents, resamples=resamples),
            "skipped_entries": [self.skipped_entries[k] for k in sorted(self.skipped_entries)],
            "collection_errors": sorted(self.collection_errors, key=lambda error: error["dataset"]),
            "interrupted": bool(interrupted),
        }
        by_tag = self.summary_by_tag(documents, resamples=resamples)
        if by_tag:
            run["summary_by_tag"] = by_tag
        add_facts(run, documents, seed=self.seed, resamples=resamples)
        if self.replaced_characters:
            run["replaced_characters"] = self.replaced_characters
        return run


def add_facts(run: dict[str, Any], documents: Sequence[Mapping[str, Any]], *, seed: int, resamples: int) -> None:
    """Give ``run`` its top-level ``facts`` (one object per page-level fact per engine) and ``facts_summary`` (per
    engine × dataset: olmOCR-bench's headline with its interval, rates per type and per JSONL file), when some
    document has facts; see :mod:`pytest_ocrmetrics.metrics.facts.summary`. Read from ``documents`` (twice)."""
    from pytest_ocrmetrics.metrics.facts.summary import facts_summary, run_facts

    summary = facts_summary(documents, seed=seed, resamples=resamples)
    if summary:
        run["facts_summary"] = summary
        run["facts"] = list(run_facts(documents))


def _group(groups: dict[tuple[str, ...], "_Group"], key: tuple[str, ...]) -> "_Group":
    group = groups.get(key)
    if group is None:
        group = groups[key] = _Group()
    return group


class _Group:
    """The running totals of one row of the summary (engine × dataset, or tag × engine × dataset)."""

    def __init__(self) -> None:
        self.documents = 0
        self.outcomes: Counter[str] = Counter()
        self.cache_hits = 0
        self.truncated = 0
        self.accumulators: dict[str, MetricAccumulator] = {}

    def add(self, rec: Mapping[str, Any]) -> None:
        self.documents += 1
        self.outcomes[rec["outcome"]] += 1
        self.cache_hits += bool(rec.get("cached"))
        self.truncated += bool(rec.get("truncated"))
        if rec["outcome"] not in ("filtered", "skipped"):
            add_to_accumulators(self.accumulators, rec)


def add_to_accumulators(accumulators: dict[str, MetricAccumulator], record: Mapping[str, Any]) -> None:
    """Feed one document's metrics (with their counts, for micro averages) into per-metric accumulators."""
    counts = record.get("counts") or {}
    for name, value in (record.get("metrics") or {}).items():
        spec = METRICS.get(name)
        acc = accumulators.get(name)
        if acc is None:
            acc = accumulators[name] = MetricAccumulator(name)
        if spec is not None and spec.aggregation == "micro" and name in counts:
            c = counts[name]
            acc.add(value, c.get(spec.numerator), c.get(spec.denominator))  # type: ignore[arg-type]
        else:
            acc.add(value)
