"""The run's results on the controller: one record per document × engine, aggregated per engine × dataset.

Workers (or the single process without xdist) put a plain-dict record on each test report; this module only ever
sees those dicts, so results are the same with and without xdist. Aggregates are computed from documents sorted by
(engine, dataset, id), so the bootstrap intervals do not depend on the order tests finished in.

Memory stays flat: each record is written, as one line of JSON, to a temporary spool file when it arrives; only a
small index entry (its sort key, outcome, place in the file, and the few numbers the summary needs: its metric values
and their micro counts) stays in memory. The run's ``documents`` are a :class:`SpooledDocuments` sequence that reads
them back one at a time; the summary is computed from the index entries without reading any record back, and
:func:`~pytest_ocrmetrics.reporting.files.run_lines` writes the run file document by document, copying a document's spooled
text rather than decoding and encoding it again.
"""

from __future__ import annotations

import json
import math
import platform
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from operator import itemgetter, methodcaller
from typing import IO, Any, Callable, Iterable, Iterator, Mapping, NamedTuple, Sequence

from pytest_ocrmetrics.metrics.aggregate import MetricAccumulator, bootstrap_mean_intervals
from pytest_ocrmetrics.metrics.registry import in_registry_order
from pytest_ocrmetrics.runfile.merge_index import micro_counts
from pytest_ocrmetrics.runfile.record import (
    OUTCOMES,
    RECORD_ENCODER,
    RUN_SCHEMA_ID,
    LazyDocuments,
    Run,
    Transport,
    build_run,
    finished_record,
)

__all__ = ["RunResults", "SpooledDocuments", "OUTCOMES", "RUN_SCHEMA_ID"]

_SEVERITY = {"skipped": 0, "filtered": 1, "passed": 2, "failed": 3, "error": 4}
# one encoder for every spooled record (json.dumps with options builds a new one per call)
_RECORD_ENCODER = RECORD_ENCODER


class _SummaryValues(NamedTuple):
    """What :meth:`RunResults.summary` reads of one record (see :func:`_summary_values`)."""

    cached: Any
    truncated: Any
    values: tuple[tuple[Any, ...], ...]  # (name, value) per metric, (name, value, numerator, denominator) if micro
    # for a shard's merge index (runfile/merge_index.py): the record's tags (None: it has none), and whether its
    # entry there is made from these values (:meth:`SpooledDocuments.merge_entries`)
    tags: Any = None
    indexable: bool = False


class _Entry(NamedTuple):
    """Where one added record lies in the spool file, with what sorting and merging need."""

    engine: str
    dataset: str
    id: str
    nodeid: str
    outcome: str
    offset: int
    length: int
    # its spooled text is the run file's text of a one-record document but for ``tests`` (a string node id, no NaN
    # or infinity, no ``tests`` key of its own): SpooledDocuments.json_texts need not decode it
    plain: bool = False
    # what the summary reads of the record (see _summary_values), None when it must read the spooled record itself
    summary: _SummaryValues | None = None


_SPOOL_BUFFER = 1 << 20  # bytes the spool gathers before it writes


class _Spool:
    """An append-only temporary file of JSON lines (deleted when closed or garbage-collected)."""

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None
        self._end = 0
        self._at_end = True  # no read moved the file position since the last append

    def append(self, data: bytes) -> tuple[int, int]:
        """Write one record's JSON text in UTF-8; returns where it lies."""
        if self._file is None:
            # a large buffer: one write call per few hundred records, not per two (each call lets go of the GIL,
            # and under xdist the controller's receiving threads then hold it for a switch interval)
            self._file = tempfile.TemporaryFile(prefix="ocrmetrics-records-", buffering=_SPOOL_BUFFER)  # noqa: SIM115 - kept open, closed by close()
        if not self._at_end:
            self._file.seek(self._end)
            self._at_end = True
        self._file.write(data)
        offset, self._end = self._end, self._end + len(data)
        return offset, len(data)

    def read(self, offset: int, length: int) -> dict[str, Any]:
        return json.loads(self.read_text(offset, length))

    def read_text(self, offset: int, length: int) -> str:
        """One record's JSON text."""
        return self.read_bytes(offset, length).decode("utf-8")

    def read_bytes(self, offset: int, length: int) -> bytes:
        """One record's JSON text in UTF-8, as it was appended (clean: see :meth:`RunResults.add`)."""
        assert self._file is not None
        self._at_end = False
        self._file.seek(offset)
        return self._file.read(length)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
            self._end = 0
            self._at_end = True


class SpooledDocuments(LazyDocuments[list[_Entry]]):
    """The run's documents, read back from the spool file one at a time (a fresh dict each time).

    A ``Sequence``: ``len()``, iteration and indexing work; ``list(documents)`` holds them all, which reports that
    need every document at once may do. Their text was cleaned when they were added, and what was replaced is
    counted in the run's ``replaced_characters`` (``replacements_counted``).
    """

    def __init__(self, spool: _Spool, groups: list[list[_Entry]]) -> None:
        super().__init__(groups)
        self._spool = spool
        self._groups = groups

    def _document(self, group: list[_Entry]) -> dict[str, Any]:
        return _merge([(self._spool.read(entry.offset, entry.length), entry.outcome) for entry in group])

    def _summary_records(self) -> Iterator[tuple[dict[str, Any], tuple[tuple[Any, ...], ...]]]:
        """For :meth:`RunResults.summary`: each document with just what the summary reads (engine, dataset, outcome,
        cached, truncated) and its metric values with their micro counts (:func:`_summary_values`), merged like
        :func:`_merge`, from the index entries (no record is read back). Every entry must have its ``summary``."""
        for group in self._groups:
            first = group[0]
            outcome, source = first.outcome, first
            for entry in group[1:]:
                if _SEVERITY[entry.outcome] > _SEVERITY[outcome]:
                    outcome = entry.outcome
                if not _values_of(source) and _values_of(entry):
                    source = entry
            first_summary = _summary_of(first)
            yield ({"engine": first.engine, "dataset": first.dataset, "outcome": outcome,
                    "cached": first_summary.cached, "truncated": first_summary.truncated}, _values_of(source))

    def merge_entries(self) -> Iterator[dict[str, Any] | None]:
        """Each document's entry of a shard's merge index
        (:func:`~pytest_ocrmetrics.runfile.merge_index.merge_entry`), in order: for a document of one record (the
        usual case) from what the index kept of it, without reading it back; for any other, from the document."""
        from pytest_ocrmetrics.runfile.merge_index import merge_entry

        for group in self._groups:
            entry = group[0]
            summary = entry.summary
            if len(group) == 1 and entry.plain and summary is not None and summary.indexable:
                yield _index_entry(entry, summary)
            else:
                yield merge_entry(self._document(group))

    def json_texts(self, encode: Callable[[Any], str]) -> Iterator[str | bytes]:
        """Each document's JSON text, ``encode(document)`` for an ``encode`` with json's default separators and
        ``ensure_ascii=False`` (the run file's, :func:`~pytest_ocrmetrics.reporting.files.run_lines`). A document of one
        record (the usual case) is its spooled UTF-8 text with its ``tests`` appended, as bytes: never decoded,
        encoded or scanned again (the spool holds only clean text, and the file writer writes bytes as they are);
        a merged one, or one holding NaN or infinity (which ``encode`` may refuse), is read and encoded.
        """
        from pytest_ocrmetrics.core.safe_text import clean_text

        for group in self._groups:
            entry = group[0]
            if len(group) == 1 and entry.plain:
                data = self._spool.read_bytes(entry.offset, entry.length)
                tests = _RECORD_ENCODER.encode([clean_text(entry.nodeid)[0]])  # the node id as cleaned in the text
                yield b"".join((data[:-1], b', "tests": ', tests.encode("utf-8"), b"}"))
            else:
                yield encode(self._document(group))


_NUMBER_TYPES = frozenset({int, float})


def _finished_text(record: Mapping[str, Any], rec: Mapping[str, Any], text: str) -> bytes | None:
    """The JSON text (UTF-8) of ``rec``, the :func:`~pytest_ocrmetrics.runfile.record.finished_record` of ``record``,
    from ``text``, the JSON text of ``record`` an xdist worker sent (encoded by ``RECORD_ENCODER`` and cleaned
    there): the keys ``finished_record`` appended written after it. None when that would not be the text encoding
    ``rec`` gives (it replaced a key ``record`` had, or a value needs cleaning): then the record is encoded.

    >>> _finished_text({"id": "a"}, {"id": "a", "outcome": "failed", "message": "é"}, '{"id": "a"}')
    b'{"id": "a", "outcome": "failed", "message": "\\xc3\\xa9"}'
    """
    from pytest_ocrmetrics.core.safe_text import clean_utf8

    if len(rec) < len(record) or any(key in record for key in ("outcome", "message")) or text[-1:] != "}":
        return None
    added = list(rec)[len(record):]
    tail = "".join(f", {_RECORD_ENCODER.encode(key)}: {_RECORD_ENCODER.encode(rec[key])}" for key in added)
    head = text[:-1] if len(text) > 2 else "{"  # "{}": no comma after the brace
    spliced = head + (tail[2:] if head == "{" else tail) + "}"
    return clean_utf8(spliced)


def _index_entry(entry: _Entry, summary: _SummaryValues) -> dict[str, Any]:
    """The merge index's entry of a document of one record, from its index entry (``summary.indexable``)."""
    metrics: dict[str, Any] = {}
    counts: dict[str, Any] = {}
    for item in summary.values:
        name = item[0]
        metrics[name] = item[1]
        if len(item) == 4:  # (name, value, numerator, denominator): the counts as far as the record has them
            numerator, denominator = micro_counts()[name]
            kept = counts[name] = {}
            if item[2] is not None:
                kept[numerator] = item[2]
            if item[3] is not None:
                kept[denominator] = item[3]
    document: dict[str, Any] = {"id": entry.id, "dataset": entry.dataset, "engine": entry.engine,
                                "outcome": entry.outcome, "metrics": metrics, "counts": counts}
    if summary.cached is not None:
        document["cached"] = summary.cached
    if summary.truncated is not None:
        document["truncated"] = summary.truncated
    if summary.tags is not None:
        document["tags"] = list(summary.tags)
    return document


def _summary_of(entry: _Entry) -> _SummaryValues:
    """The entry's summary values (present: :meth:`RunResults.summary` reads the index only when every entry has
    them)."""
    summary = entry.summary
    if summary is None:  # pragma: no cover - RunResults.summary checks every entry first
        raise ValueError(f"record {entry.id!r} of {entry.dataset!r} has no summary values in the index")
    return summary


def _values_of(entry: _Entry) -> tuple[tuple[Any, ...], ...]:
    return _summary_of(entry).values


_NAMES: dict[str, str] = {}  # metric, engine and dataset names kept for every document: each name held once


def _summary_values(rec: Mapping[str, Any]) -> _SummaryValues | None:
    """``(cached, truncated, values)``: what :meth:`RunResults.summary` reads of a record, small enough to keep for
    every document (the record itself is spooled): ``values`` holds ``(name, value)`` per metric, with the metric's
    numerator and denominator for a micro-averaged metric. None for a record of unusual shape (a value that is not a
    plain number, counts that are not objects, a name that is not plain text): the summary then reads the records.
    """
    found = _metric_values(rec)
    if found is None:
        return None
    values, nulls = found
    counts = rec.get("counts") or {}
    tags = rec.get("tags")
    return _SummaryValues(rec.get("cached"), rec.get("truncated"), values, tags,
                          not nulls and _indexable(rec, counts, tags))


def _metric_values(rec: Mapping[str, Any]) -> tuple[tuple[tuple[Any, ...], ...], bool] | None:
    """The summary's values of a record (see :func:`_summary_values`), and whether a micro count is there but null;
    None for a record of unusual shape."""
    metrics = rec.get("metrics") or {}
    counts = rec.get("counts") or {}
    if type(metrics) is not dict or type(counts) is not dict:
        return None
    values: list[tuple[Any, ...]] = []
    nulls = False  # a micro count that is there but null (not an entry of a merge index)
    micro_of = micro_counts()
    for name, value in metrics.items():
        if type(value) not in _NUMBER_TYPES or type(name) is not str or not name.isascii():
            return None
        name = _NAMES.setdefault(name, name)  # one string per metric name, not one per record decoded under xdist
        micro = micro_of.get(name)
        if micro is not None and name in counts:
            c = counts[name]
            if type(c) is not dict:
                return None
            numerator, denominator = c.get(micro[0]), c.get(micro[1])
            if (numerator is not None and type(numerator) not in _NUMBER_TYPES) or (
                    denominator is not None and type(denominator) not in _NUMBER_TYPES):
                return None
            nulls = nulls or ((numerator is None and micro[0] in c) or (denominator is None and micro[1] in c))
            values.append((name, value, numerator, denominator))
        else:
            values.append((name, value))
    return tuple(values), nulls


def _indexable(rec: Mapping[str, Any], counts: Mapping[str, Any], tags: Any) -> bool:
    """Whether a shard's merge index can describe ``rec`` from its summary values and tags (what
    :func:`~pytest_ocrmetrics.runfile.merge_index.merge_entry` gives an entry for, the sign of its counts aside: the
    plugin's metrics count nothing below zero); a few C-level tests per record."""
    details = rec.get("details", {})
    return (type(rec.get("id")) is str and type(rec.get("dataset")) is str and type(rec.get("engine")) is str
            and "replaced_characters" not in rec and type(rec.get("cached", False)) is bool
            and type(rec.get("truncated", False)) is bool and type(details) is dict and "facts" not in details
            and ("tags" not in rec or (type(tags) is list and set(map(type, tags)) <= {str}))
            and set(map(type, counts.values())) <= {dict})


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
    # the engines' labels in the order --ocr-engine gave them: environment.engines lists them so, and the first is
    # the one the paired views (terminal, HTML) measure the others against
    engine_order: tuple[str, ...] = ()
    skipped_entries: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    collection_errors: list[dict[str, str]] = field(default_factory=list)  # datasets that could not be loaded
    # dataset name -> its folder on the machine that ran (the run file's ``datasets``; images are relative to it)
    dataset_roots: dict[str, str] = field(default_factory=dict)
    replaced_characters: int = 0  # replaced with U+FFFD in the records (here and, before sending, on xdist workers)
    # metric -> documents where a threshold on it could not be checked (the document lacks what the metric needs)
    unchecked_thresholds: dict[str, int] = field(default_factory=dict)
    # engine -> (dataset, document id) of the documents it recognised whose output carries no confidence
    # (--ocr-min-confidence cannot judge them); a set, so two test functions on one document count it once
    without_confidence: dict[str, set[tuple[str, str]]] = field(default_factory=dict, repr=False, compare=False)
    _spool: _Spool = field(default_factory=_Spool, repr=False, compare=False)
    # whether some added record has tags / page-level facts: otherwise to_run skips those passes over the spool
    _has_tags: bool = field(default=False, repr=False, compare=False)
    _has_facts: bool = field(default=False, repr=False, compare=False)
    # some record checked a threshold, or was a check that never got a score (``declared_checks``)
    has_checks: bool = field(default=False, repr=False, compare=False)

    def add_collection_error(self, dataset: str, message: str) -> None:
        """A dataset that could not be loaded (malformed ground truth): listed in the run, once per dataset."""
        if not any(error["dataset"] == dataset for error in self.collection_errors):
            self.collection_errors.append({"dataset": dataset, "message": message})

    def add(self, record: Mapping[str, Any], outcome: str, message: str | None = None,
            transport: Transport | None = None, text: str | None = None) -> None:
        """Add one finished document test. ``outcome`` is the test's; a filtered record stays ``filtered``.

        ``transport`` is what came with the record in its envelope (:class:`~pytest_ocrmetrics.runfile.record.Envelope`):
        the engine's identity, the dataset's folder and skipped entries go to the run, not into the record. Text that
        no report can hold (lone surrogates, non-characters) is replaced here, once, and counted. ``text``: the
        record's JSON text as an xdist worker sent it (encoded and cleaned there): the record is not encoded again,
        and ``record`` may be its light form (:func:`~pytest_ocrmetrics.runfile.record.light_record`).
        """
        transport = transport or {}
        if transport:
            self._take_transport(record, transport)
        filtered = bool(transport.get("filtered"))
        rec = finished_record(record, outcome, message, filtered=filtered)
        self.replaced_characters += int(rec.get("replaced_characters") or 0)  # replaced on an xdist worker
        for metric in rec.get("unchecked_thresholds") or ():
            self.unchecked_thresholds[str(metric)] = self.unchecked_thresholds.get(str(metric), 0) + 1
        if "hypothesis" in rec and rec.get("confidence") is None:  # an output was recorded, without a confidence
            self.without_confidence.setdefault(str(rec["engine"]), set()).add((str(rec["dataset"]), str(rec["id"])))
        if rec.get("tags"):
            self._has_tags = True
        if rec.get("checks") or rec.get("declared_checks"):
            self.has_checks = True
        details = rec.get("details")
        if details and (type(details) is not dict or details.get("facts") is not None):  # unusual: look later
            self._has_facts = True
        data = _finished_text(record, rec, text) if text is not None else None
        if data is None:
            if text is not None:  # the whole record is its text (the record may be its light form): decoded here
                rec = finished_record(json.loads(text), outcome, message, filtered=filtered)
            data = self._clean_json(rec)
        nodeid = rec.get("nodeid")
        plain = (isinstance(nodeid, str) and nodeid != "" and data.startswith(b"{") and b"NaN" not in data
                 and b"Infinity" not in data and b'"tests": ' not in data)
        offset, length = self._spool.append(data)
        engine, dataset = str(rec["engine"]), str(rec["dataset"])
        self.records.append(_Entry(_NAMES.setdefault(engine, engine), _NAMES.setdefault(dataset, dataset), str(rec["id"]),
                                   str(rec.get("nodeid", "")), rec["outcome"], offset, length, plain,
                                   _summary_values(rec)))

    def _take_transport(self, record: Mapping[str, Any], transport: Transport) -> None:
        """Keep what a record's envelope brought for the run: its engine's identity, its dataset's folder and the
        entries the dataset skipped (each once)."""
        identity = transport.get("engine_identity")
        if identity is not None:
            self.engine_identities.setdefault(record["engine"], identity)
        root = transport.get("dataset_root")
        if root is not None:
            self.dataset_roots.setdefault(str(record["dataset"]), str(root))
        for entry in transport.get("dataset_skipped") or ():
            self.skipped_entries.setdefault((record["dataset"], entry["source"]), {"dataset": record["dataset"], **entry})

    def _clean_json(self, rec: Mapping[str, Any]) -> bytes:
        """The record's JSON text in UTF-8, its unencodable characters replaced and counted (one encoding when there
        are none).

        ``default=str``: a value json cannot write (a Path from a hook) is kept as its text; NaN is kept (and refused
        when the run file is written, as before).
        """
        from pytest_ocrmetrics.core.safe_text import clean_run, clean_utf8

        text = _RECORD_ENCODER.encode(rec)
        data = clean_utf8(text)
        if data is not None:
            return data
        cleaned, replaced = clean_run(rec)
        self.replaced_characters += replaced
        return _RECORD_ENCODER.encode(cleaned).encode("utf-8")

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
        self._has_tags = self._has_facts = self.has_checks = False
        self.without_confidence.clear()

    def summary(self, documents: Iterable[Mapping[str, Any]] | None = None, *,
                resamples: int = 1000) -> list[dict[str, Any]]:
        """One row per engine × dataset: outcome counts (``evaluated`` = passed + failed, the documents scored and
        judged) and, per metric, micro/mean/median/p90/p95/min/max/n/CI.

        ``documents`` are :meth:`documents` when the caller already has them (any iterable of document records,
        e.g. a merged run's); they are read once, and not held.
        """
        groups: dict[tuple[str, ...], _Group] = {}
        if documents is None:
            documents = self.documents()
        if isinstance(documents, SpooledDocuments) and documents._spool is self._spool and all(
                entry.summary is not None for entry in self.records):
            # what the summary reads of each document, kept when it was added: no record is read back
            for rec, values in documents._summary_records():
                _group(groups, (rec["engine"], rec["dataset"])).add(rec, values)
        else:
            for document in documents:
                _group(groups, (document["engine"], document["dataset"])).add(document)
        return [self._row(engine, dataset, group, resamples) for (engine, dataset), group in groups.items()]

    def summary_by_tag(self, documents: Iterable[Mapping[str, Any]] | None = None, *,
                       resamples: int = 1000) -> list[dict[str, Any]]:
        """The summary's rows per document tag (a document's ``tags``, from its ground truth): one row per tag ×
        engine × dataset, with a ``tag`` key, aggregated exactly like :meth:`summary` over the documents carrying that
        tag (a document with two tags counts in both). Sorted by tag, engine, dataset; empty when no document has
        tags."""
        groups: dict[tuple[str, ...], _Group] = {}
        for rec in self.documents() if documents is None else documents:
            tags = rec.get("tags")
            if not tags:  # most documents: no generator made for them
                continue
            for tag in dict.fromkeys(str(t) for t in tags):
                _group(groups, (tag, rec["engine"], rec["dataset"])).add(rec)
        return [{"tag": tag, **self._row(engine, dataset, groups[(tag, engine, dataset)], resamples)}
                for tag, engine, dataset in sorted(groups)]

    def _row(self, engine: str, dataset: str, group: _Group, resamples: int) -> dict[str, Any]:
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
            "skipped_entries": sum(int(entry.get("count", 1)) for key, entry in self.skipped_entries.items()
                                   if key[0] == dataset),  # an entry with a count summarises that many
            "cache_hits": group.cache_hits,
            "truncated": group.truncated,
            "metrics": metrics,
        }

    def to_run(self, *, plugin_version: str, pytest_version: str, resamples: int = 1000,
               interrupted: bool = False, summary_intervals: bool = True, bootstrap: Mapping[str, int] | None = None,
               shard: Mapping[str, int] | None = None) -> Run:
        """The JSON run file (schema ``pytest-ocrmetrics/1``).

        ``interrupted`` marks a run that stopped early (Ctrl-C, ``-x``, ``--maxfail``): its documents are only the
        ones that ran. ``collection_errors`` lists the datasets that could not be loaded. ``summary_by_tag`` has the
        summary's rows per document tag (:meth:`summary_by_tag`, with the same bootstrap ``resamples``), absent when
        no document has tags. ``summary_intervals=False`` leaves the summary's bootstrap intervals out (``ci_low`` /
        ``ci_high`` None: no report of the run shows them); page-level facts keep theirs.
        """
        facts_resamples, resamples = resamples, (resamples if summary_intervals else 0)
        documents = self.documents()
        environment = {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "implementation": sys.implementation.name,
            "plugin_version": plugin_version,
            "pytest_version": pytest_version,
            "engines": dict(sorted(self.engine_identities.items(), key=lambda item: (
                self.engine_order.index(item[0]) if item[0] in self.engine_order else len(self.engine_order),
                item[0]))),
        }
        summary = self.summary(documents, resamples=resamples)
        by_tag = self.summary_by_tag(documents, resamples=resamples) if self._has_tags else []
        # no document has facts: nothing to add, and no pass over the documents
        facts = facts_of(documents, seed=self.seed, resamples=facts_resamples) if self._has_facts else None
        return build_run(
            environment=environment, normalization=self.normalization, documents=documents, summary=summary,
            skipped_entries=[self.skipped_entries[k] for k in sorted(self.skipped_entries)],
            collection_errors=sorted(self.collection_errors, key=lambda error: error["dataset"]),
            interrupted=interrupted, summary_by_tag=by_tag, facts=facts, datasets=self.dataset_roots,
            replaced_characters=self.replaced_characters, unchecked_thresholds=self.unchecked_thresholds,
            bootstrap=bootstrap, shard=shard)


def facts_of(documents: Sequence[Mapping[str, Any]], *, seed: int, resamples: int) -> dict[str, Any] | None:
    """The run's ``facts_summary`` (per engine × dataset: olmOCR-bench's headline with its interval, rates per type
    and per JSONL file) and ``facts`` (one object per page-level fact per engine), None when no document has facts;
    see :mod:`pytest_ocrmetrics.metrics.facts.summary`. One pass over ``documents``."""
    from pytest_ocrmetrics.metrics.facts.summary import facts_summary, run_facts

    facts = list(run_facts(documents))
    summary = facts_summary(facts, seed=seed, resamples=resamples)
    return {"facts_summary": summary, "facts": facts} if summary else None


def _group(groups: dict[tuple[str, ...], _Group], key: tuple[str, ...]) -> _Group:
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
        self._accumulators: dict[str, MetricAccumulator] = {}
        # per metric, the summary values added and not yet in its accumulator: added column by column when read
        self._columns: dict[str, list[tuple[Any, ...]]] = {}
        # the metrics and counts of documents added without their summary values, read a batch at a time
        self._pending: list[tuple[Any, Any]] = []

    @property
    def accumulators(self) -> dict[str, MetricAccumulator]:
        """Each metric's accumulator, in the order the metrics first came."""
        if self._pending:
            self._add_pending()
        if self._columns:
            for name, items in self._columns.items():
                acc = _accumulator(self._accumulators, name)
                if not _add_column(acc, items):  # something the accumulator refuses: value by value, its sentence
                    for item in items:
                        acc.add(*item[1:])
            self._columns = {}
        return self._accumulators

    def add(self, rec: Mapping[str, Any], values: tuple[tuple[Any, ...], ...] | None = None) -> None:
        """Count one document; ``values``: its :func:`_summary_values` when known (else read from its record, a
        batch of records at a time: see :func:`_batch_columns`)."""
        self.documents += 1
        self.outcomes[rec["outcome"]] += 1
        self.cache_hits += bool(rec.get("cached"))
        self.truncated += bool(rec.get("truncated"))
        if rec["outcome"] in ("filtered", "skipped"):
            return
        if values is None:  # only what the summary reads is kept: a record's texts are not held
            self._pending.append((rec.get("metrics"), rec.get("counts")))
            if len(self._pending) == _BATCH:
                self._add_pending()
            return
        self._add_values(values)

    def _add_values(self, values: tuple[tuple[Any, ...], ...]) -> None:
        columns = self._columns
        for item in values:  # (name, value) or (name, value, numerator, denominator)
            column = columns.get(item[0])
            if column is None:
                column = columns[item[0]] = []
            column.append(item)

    def _add_pending(self) -> None:
        """Add the pending documents' values: in bulk when every one of them is plain and fits the accumulators,
        else each document as it comes (its values in a column, or, of an unusual shape, one by one: the
        accumulator then refuses what it refuses, with its sentence, at the same document)."""
        pending, self._pending = self._pending, []
        accumulators = self.accumulators  # the columns first: the bulk is checked against what is there
        batch = _batch_columns(pending)
        if batch is not None and all(_column_fits(accumulators.get(name) or MetricAccumulator(name), *column)
                                     for name, column in batch.items()):
            for name, column in batch.items():
                _extend(_accumulator(accumulators, name), *column)
            return
        for metrics, counts in pending:
            rec = {"metrics": metrics, "counts": counts}
            found = _metric_values(rec)
            if found is None:
                add_to_accumulators(self.accumulators, rec)
            else:
                self._add_values(found[0])


# documents a group reads at once (the batch's metrics and counts are held meanwhile; a record's texts are not)
_BATCH = 256
_Columns = dict[str, tuple[list[Any], list[Any] | None, list[Any] | None]]


def _batch_columns(pending: list[tuple[Any, Any]]) -> _Columns | None:
    """Per metric, the ``(values, numerators, denominators)`` of documents given as ``(metrics, counts)`` (each as
    :func:`_metric_values` reads it; ``numerators`` and ``denominators`` None for a metric without counts), gathered
    by shape (the same metric and count names) in C passes over each metric's values; None when the documents are not
    of a shape :func:`_metric_values` reads (metrics or counts not objects, a name that is not plain text, a metric's
    counts not an object, counts on some documents only). :func:`_column_fits` tells whether the values fit."""
    shapes: dict[tuple[tuple[Any, ...], tuple[Any, ...]], tuple[list[Any], list[Any]]] = {}
    for metrics, counts in pending:
        metrics, counts = metrics or {}, counts or {}
        if type(metrics) is not dict or type(counts) is not dict:
            return None
        key = (tuple(metrics), tuple(counts))
        shape = shapes.get(key)
        if shape is None:
            shape = shapes[key] = ([], [])
        shape[0].append(metrics)
        shape[1].append(counts)
    columns: _Columns = {}
    micro_of = micro_counts()
    for (names, counted), (metrics_of, counts_of) in shapes.items():
        for name in names:
            if type(name) is not str or not name.isascii():
                return None
            values = list(map(itemgetter(name), metrics_of))
            numerators = denominators = None
            micro = micro_of.get(name)
            if micro is not None and name in counted:
                entries = list(map(itemgetter(name), counts_of))
                if set(map(type, entries)) != {dict}:
                    return None
                numerators = list(map(methodcaller("get", micro[0]), entries))
                denominators = list(map(methodcaller("get", micro[1]), entries))
            column = columns.get(name)
            if column is None:
                columns[name] = (values, numerators, denominators)
            elif (column[1] is None) != (numerators is None):
                return None
            else:
                column[0].extend(values)
                if column[1] is not None:
                    column[1].extend(numerators)  # type: ignore[arg-type]
                    column[2].extend(denominators)  # type: ignore[arg-type,union-attr]
    return columns


def _add_column(acc: MetricAccumulator, items: list[tuple[Any, ...]]) -> bool:
    """Add one metric's summary values to its accumulator in bulk (a few C passes instead of a checked call per
    document), as :meth:`MetricAccumulator.add` would one by one; False, adding nothing, when one of them is not what
    it accepts without a word (not a plain number, NaN, counts on some documents only): the caller adds them one by one,
    so the accumulator raises its own sentence."""
    sizes = set(map(len, items))
    values = list(map(itemgetter(1), items))
    numerators = denominators = None
    if sizes == {4}:
        numerators, denominators = list(map(itemgetter(2), items)), list(map(itemgetter(3), items))
    elif sizes != {2}:
        return False
    if not _column_fits(acc, values, numerators, denominators):
        return False
    _extend(acc, values, numerators, denominators)
    return True


def _column_fits(acc: MetricAccumulator, values: list[Any], numerators: list[Any] | None,
                 denominators: list[Any] | None) -> bool:
    """Whether :meth:`MetricAccumulator.add` would take each of these values (and counts: None for a metric without
    them) without a word, after what ``acc`` holds: plain numbers, no NaN, counts for every document or for none."""
    if not set(map(type, values)) <= _NUMBER_TYPES or any(map(math.isnan, values)):
        return False
    if numerators is None:
        return not acc.numerators
    return (bool(acc.numerators) or not acc.values) and (
        set(map(type, numerators)) | set(map(type, denominators or ()))) <= _NUMBER_TYPES


def _extend(acc: MetricAccumulator, values: list[Any], numerators: list[Any] | None,
            denominators: list[Any] | None) -> None:
    """Add a column that :func:`_column_fits` ``acc``."""
    acc.values.extend(map(float, values))
    if numerators is not None:
        acc.numerators.extend(numerators)
        acc.denominators.extend(denominators or ())


def _accumulator(accumulators: dict[str, MetricAccumulator], name: str) -> MetricAccumulator:
    acc = accumulators.get(name)
    if acc is None:
        acc = accumulators[name] = MetricAccumulator(name)
    return acc


def add_to_accumulators(accumulators: dict[str, MetricAccumulator], record: Mapping[str, Any]) -> None:
    """Feed one document's metrics (with their counts, for micro averages) into per-metric accumulators."""
    counts = record.get("counts") or {}
    micro_of = micro_counts()
    for name, value in (record.get("metrics") or {}).items():
        micro = micro_of.get(name)
        acc = _accumulator(accumulators, name)
        if micro is not None and name in counts:
            c = counts[name]
            acc.add(value, c.get(micro[0]), c.get(micro[1]))
        else:
            acc.add(value)
