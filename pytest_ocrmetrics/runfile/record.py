"""The document record and the run: their types, their JSON schema (``run_schema.json`` beside this module) and its
id, and the functions that build them. No other module makes or reshapes a record or a run.

A **document record** (:class:`DocumentRecord`) is one test's result for one document: what was compared, the metrics
with their counts, the checks. It rides on the test report (so xdist carries it to the controller), is spooled by
:class:`~pytest_ocrmetrics.runfile.results.RunResults` and written, merged with the records of other tests on the same
document, into the run file's ``documents``.

What a worker tells the controller about a record but the record itself does not hold (the engine's identity, the
dataset's folder on that machine and the entries it skipped, whether the output was filtered) travels beside it in
the record's **envelope** (:class:`Envelope`, its ``transport``), never in the record.

A **run** (:class:`Run`) is the run file: the environment, the normalization, the documents, the summary rows.

Records and runs are :class:`~typing.TypedDict` s, not dataclasses: a run holds 20,000 records or more, which are
encoded to JSON as they arrive (a dict is that, with no conversion), and the key order of each record is the order
of the run file's text.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Iterable, Iterator, Mapping, Sequence, TypedDict, TypeVar, overload

if TYPE_CHECKING:
    from pytest_ocrmetrics.core.documents import Document
    from pytest_ocrmetrics.engines.base import OcrOutput
    from pytest_ocrmetrics.scoring.document import DocumentScore

__all__ = ["RUN_SCHEMA_ID", "SCHEMA_PATH", "DocumentRecord", "Transport", "Envelope", "Run", "run_schema",
           "unscored_record", "scored_record", "crash_record", "relative_image", "envelope", "clean_envelope",
           "finished_record", "build_run", "LazyDocuments", "RECORD_ENCODER", "pack_envelope", "unpack_envelope"]

#: How a record becomes JSON text: the run file's separators, UTF-8 as it is (``ensure_ascii=False``), a value json
#: cannot write (a Path from a hook) kept as its text, NaN kept (refused when the run file is written).
RECORD_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str, check_circular=False)

#: the run file's ``schema``: the id of :data:`SCHEMA_PATH` a run file is written and read by
RUN_SCHEMA_ID = "pytest-ocrmetrics/1"
#: the run file's JSON Schema
SCHEMA_PATH = Path(__file__).with_name("run_schema.json")

#: outcomes the controller records for a document test (the worst of its tests' for a document, see results)
OUTCOMES = ("passed", "failed", "error", "skipped", "filtered")


class _RecordKeys(TypedDict):
    id: str
    dataset: str
    engine: str
    metrics: dict[str, float]
    counts: dict[str, dict[str, Any]]
    elapsed_s: float


class DocumentRecord(_RecordKeys, total=False):
    """One test's record of one document (the run file's ``documents`` item; see ``run_schema.json``).

    Keys are written in this order: the document (``id`` to ``reference``), the output (``hypothesis`` to
    ``truncated``, when there was one), the scores (``confusions``, ``details``), the test (``nodeid`` to
    ``message``), then what the controller adds (``replaced_characters`` on a worker, ``outcome``, ``message``,
    ``tests``).
    """

    image: str | None
    reference: str | None
    hypothesis: str
    confidence: float | None
    cached: bool
    truncated: bool
    confusions: list[list[Any]]
    declared_checks: bool
    details: dict[str, Any]
    nodeid: str
    checks: list[dict[str, Any]]
    unchecked_thresholds: list[str]
    tags: list[str]
    message: str | None
    replaced_characters: int
    outcome: str
    tests: list[str]


class Transport(TypedDict, total=False):
    """What travels with a record to the controller and is not part of it.

    Attributes:
        engine_identity: the engine's identity (the run file's ``environment.engines[engine]``), once per engine.
        dataset_root: the dataset's folder on the machine that ran (``datasets[name].root``; images are relative).
        dataset_skipped: the dataset's skipped entries (``skipped_entries``).
        filtered: the output was filtered out (``--ocr-min-confidence``): the outcome is ``filtered``.
    """

    engine_identity: dict[str, Any]
    dataset_root: str
    dataset_skipped: list[dict[str, Any]]
    filtered: bool


_Item = TypeVar("_Item")


class LazyDocuments(Sequence[dict[str, Any]], Generic[_Item]):
    """A run's documents kept in some cheaper form (``items``: a spool's entries, a shard's lines), each made into
    its dict afresh when indexed or iterated (:meth:`_document`). ``len()``, iteration, indexing and slicing work;
    equal to a list of the same documents. ``replacements_counted``: their text was cleaned when they were kept, so
    the run's sanitising need not look at them."""

    replacements_counted = True

    def __init__(self, items: list[_Item]) -> None:
        self._items = items

    def _document(self, item: _Item) -> dict[str, Any]:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self._document(item) for item in self._items[index]]
        return self._document(self._items[index])

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return map(self._document, self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (LazyDocuments, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self._items)} documents)"


class _EnvelopeKeys(TypedDict):
    nodeid: str
    record: DocumentRecord | None
    transport: Transport


class Envelope(_EnvelopeKeys, total=False):
    """A record on its way to the controller: the test's node id, the record (``None`` for a test that is no OCR
    test, named by a worker after a crash) and its :class:`Transport`; from an xdist worker also ``record_json``,
    the record's JSON text as the worker sent it (:func:`unpack_envelope`), and then ``record`` may be its light
    form (:data:`LIGHT_PLACEHOLDERS`): the whole record is that text."""

    record_json: str


class _RunKeys(TypedDict):
    schema: str
    created: str
    environment: dict[str, Any]
    normalization: dict[str, Any]
    documents: Sequence[Mapping[str, Any]]
    summary: list[dict[str, Any]]


class Run(_RunKeys, total=False):
    """The JSON run file (``run_schema.json``), its members in the order they are written."""

    skipped_entries: list[dict[str, Any]]
    collection_errors: list[dict[str, str]]
    interrupted: bool
    summary_by_tag: list[dict[str, Any]]
    facts_summary: list[dict[str, Any]]
    facts: list[dict[str, Any]]
    datasets: dict[str, dict[str, str]]
    replaced_characters: int
    unchecked_thresholds: dict[str, int]
    bootstrap: dict[str, int]
    shard: dict[str, int]
    baseline: dict[str, Any]
    # in a shard's file only: written last, from its documents, by the run-file writer (runfile/merge_index.py)
    merge_index: dict[str, Any]


_SCHEMA: dict[str, Any] | None = None


def run_schema() -> dict[str, Any]:
    """The run file's JSON Schema (read once).

    >>> run_schema()["properties"]["schema"]["const"] == RUN_SCHEMA_ID
    True
    """
    global _SCHEMA
    if _SCHEMA is None:
        _SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return _SCHEMA


# ----------------------------------------------------------------------------------------------- records

def unscored_record(document: Document, engine: str, output: OcrOutput | None = None, *,
                    root: str | os.PathLike[str] | None = None, declared_checks: bool = False,
                    details: dict[str, Any] | None = None) -> DocumentRecord:
    """A record with no metrics: the document, and the output when there is one.

    Unscored tests (engine error, filtered, skipped) are recorded with this; :func:`scored_record` extends it. With
    ``root`` (the dataset's folder) the ``image`` is the path relative to it, with ``/`` (:func:`relative_image`), so
    the run file does not depend on where the dataset was on the machine that ran it; without, the path as the
    document has it. ``declared_checks``: the test would have checked the document had it been scored.

    Args:
        document: the document.
        engine: the engine's label.
        output: the engine's output, if it gave one.
        root: the dataset's folder.
        declared_checks: whether a check was declared that never got a score.
        details: the record's ``details`` (an unscored document's unchecked facts).

    Returns:
        The record.
    """
    record: DocumentRecord = {
        "id": document.id,
        "dataset": document.dataset,
        "engine": engine,
        "metrics": {},
        "counts": {},
        "elapsed_s": 0.0,
        "image": None if document.image_path is None else relative_image(document.image_path, root),
        "reference": document.reference_text,
    }
    if output is not None:
        record["hypothesis"] = output.text
        record["confidence"] = output.confidence
        record["cached"] = output.cached
        record["truncated"] = output.truncated
        record["elapsed_s"] = round(max(output.elapsed_s, 0.0), 6)
    if declared_checks:
        record["declared_checks"] = True
    if details is not None:
        record["details"] = details
    return record


def scored_record(score: DocumentScore, *, confusions: bool = True,
                  root: str | os.PathLike[str] | None = None) -> DocumentRecord:
    """The record of a scored document: :func:`unscored_record` with its metrics, counts, confusion pairs and
    details.

    Args:
        score: the document's score.
        confusions: ``False`` leaves the confusion pairs out (an empty list) when no report of the run shows them.
        root: the dataset's folder (see :func:`unscored_record`).

    Returns:
        The record.
    """
    record = unscored_record(score.document, score.engine, score.output, root=root)
    record["metrics"] = dict(score.metrics)
    record["counts"] = {name: dict(c) for name, c in score.counts.items()}
    record["confusions"] = score.confusion_rows() if confusions else []
    record["details"] = _json_safe(score.details)
    return record


def crash_record(nodeid: str, dataset: str, engine: str, document_id: str) -> DocumentRecord:
    """The record of a test whose worker crashed, known only by its test id (nothing scored, no output).

    >>> crash_record("d::e-a.png", "d", "e", "a.png")["checks"]
    []
    """
    return {"id": document_id, "dataset": dataset, "engine": engine, "metrics": {}, "counts": {}, "elapsed_s": 0.0,
            "image": None, "reference": None, "nodeid": nodeid, "checks": []}


def relative_image(image: str | os.PathLike[str], root: str | os.PathLike[str] | None) -> str:
    """The image path as a run file records it: relative to the dataset's ``root`` with ``/`` separators when it lies
    inside it (``images/doc_001.png``), else as it is (an image outside its dataset folder, or no ``root`` given).

    >>> relative_image("/ci/work/data/images/doc_001.png", "/ci/work/data"), relative_image("/elsewhere/a.png", "/ci")
    ('images/doc_001.png', '/elsewhere/a.png')
    """
    if root is not None:  # string prefixes, not Path.relative_to: this runs once per document of the run
        absolute, folder = os.path.abspath(image), os.path.join(os.path.abspath(root), "")
        if absolute.startswith(folder) and len(absolute) > len(folder):
            relative = absolute[len(folder):]
            return relative if os.sep == "/" else relative.replace(os.sep, "/")
    return str(image)


def _json_safe(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def envelope(record: DocumentRecord, *, nodeid: str, checks: Iterable[dict[str, Any]],
             unchecked_thresholds: Sequence[str] = (), tags: Sequence[str] = (), filtered: str | None = None,
             engine_identity: dict[str, Any] | None = None, dataset_root: str | None = None,
             dataset_skipped: Sequence[dict[str, Any]] = ()) -> Envelope:
    """A test's record completed with what the test did, in the envelope that carries it to the controller.

    Args:
        record: the document's record (:func:`scored_record` or :func:`unscored_record`), completed in place.
        nodeid: the test's node id.
        checks: the thresholds the test checked.
        unchecked_thresholds: metrics of thresholds that could not be checked on the document (repeats kept once).
        tags: the document's tags.
        filtered: why the output was filtered out, when it was (the record's ``message``).
        engine_identity: the engine's identity (sent once per engine).
        dataset_root: the dataset's folder on this machine.
        dataset_skipped: the dataset's skipped entries.

    Returns:
        The envelope.
    """
    record["nodeid"] = nodeid
    record["checks"] = list(checks)
    if unchecked_thresholds:
        record["unchecked_thresholds"] = list(dict.fromkeys(unchecked_thresholds))
    if tags:  # per-tag rows of the summary (RunResults.summary_by_tag)
        record["tags"] = list(tags)
    transport: Transport = {}
    if filtered:
        transport["filtered"] = True
        record["message"] = filtered
    if engine_identity is not None:
        transport["engine_identity"] = engine_identity
    if dataset_root is not None:
        transport["dataset_root"] = dataset_root
    if dataset_skipped:
        transport["dataset_skipped"] = list(dataset_skipped)
    return {"nodeid": nodeid, "record": record, "transport": transport}


def clean_envelope(value: Envelope) -> Envelope:
    """What an xdist worker sends must be UTF-8: a lone surrogate (from a ``\\ud800`` escape in ground truth or in a
    server's answer) in the envelope is replaced with U+FFFD, and the record counts the replacements as its
    ``replaced_characters`` (the run file's total includes them).

    >>> clean_envelope({"nodeid": "t", "record": {"id": "\\ud800"}, "transport": {}})["record"]
    {'id': '�', 'replaced_characters': 1}
    """
    from pytest_ocrmetrics.core.safe_text import clean_run, clean_text

    (record, transport), count = clean_run((value["record"], value["transport"]))
    if count and record is not None:
        record = {**record, "replaced_characters": count}
    return {"nodeid": clean_text(value["nodeid"])[0], "record": record, "transport": transport}


#: what the light form of a record (:func:`light_record`) holds instead of its texts and confusion pairs
LIGHT_PLACEHOLDERS: dict[str, Any] = {"reference": "", "hypothesis": "", "confusions": []}


def light_record(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """The record with its texts and confusion pairs (most of its size, and most of the values a JSON decoder
    makes) replaced by :data:`LIGHT_PLACEHOLDERS` (a null text stays null: no output), its keys and their order
    kept; None when it has none to replace (the light form would be the record). :func:`record_texts` writes its JSON
    text.

    What the controller of an xdist run reads of a record (its names, metrics and counts, checks, flags; whether it
    has an output) is all there: the controller decodes this form and writes the record's whole text as the worker
    sent it, so under xdist the run's one serial process no longer decodes every document's texts and pairs.

    >>> light_record({"id": "a", "hypothesis": "long text", "confusions": [["a", "b", 1]], "cached": False})
    {'id': 'a', 'hypothesis': '', 'confusions': [], 'cached': False}
    """
    if not any(_left_out(key, value) for key, value in record.items()):
        return None
    return {key: LIGHT_PLACEHOLDERS[key] if _left_out(key, value) else value for key, value in record.items()}


def _left_out(key: Any, value: Any) -> bool:
    """Whether the light form of a record replaces this member with its placeholder."""
    return key in LIGHT_PLACEHOLDERS and value is not None


def pack_envelope(value: Envelope) -> dict[str, Any]:
    """The envelope as an xdist worker sends it: cleaned as :func:`clean_envelope` cleans it, with the record as one
    JSON text under ``record_json`` (``record`` None). execnet writes a string in one piece, but a record's hundreds
    of small values (the confusion pairs) one by one, in Python, on the worker and again on the controller: that was
    a third of a worker's time. The text is checked for unencodable characters in one encoding; only a record that
    has some is cleaned value by value. Beside it, ``record_light``: the JSON text of its :func:`light_record`, which
    is all the controller decodes (the controller is the run's one serial process: workers wait on it).

    Args:
        value: the envelope of a test's report.

    Returns:
        What :func:`unpack_envelope` turns back into the (cleaned) envelope.

    >>> packed = pack_envelope({"nodeid": "t", "record": {"id": "a", "cer": 0.5}, "transport": {}})
    >>> packed["record_json"], unpack_envelope(packed)["record"]
    ('{"id": "a", "cer": 0.5}', {'id': 'a', 'cer': 0.5})
    >>> packed = pack_envelope({"nodeid": "t", "record": {"id": "a", "hypothesis": "text"}, "transport": {}})
    >>> packed["record_json"], packed["record_light"], unpack_envelope(packed)["record"]
    ('{"id": "a", "hypothesis": "text"}', '{"id": "a", "hypothesis": ""}', {'id': 'a', 'hypothesis': ''})
    """
    from pytest_ocrmetrics.core.safe_text import clean_run, clean_text, clean_utf8

    record = value["record"]
    texts = None if record is None else record_texts(record)
    transport, replaced = clean_run(value["transport"])
    if replaced or (texts is not None and clean_utf8(texts[0]) is None):  # something to replace: value by value
        value = clean_envelope(value)
        record, transport = value["record"], value["transport"]
        texts = None if record is None else record_texts(record)
    packed = {"nodeid": clean_text(value["nodeid"])[0], "record": None,
              "record_json": None if texts is None else texts[0], "transport": transport}
    if texts is not None and texts[1] is not None:
        packed["record_light"] = texts[1]
    return packed


# each placeholder's JSON text, as the encoder writes it
_PLACEHOLDER_TEXTS = {key: RECORD_ENCODER.encode(value) for key, value in LIGHT_PLACEHOLDERS.items()}


def record_texts(record: Mapping[str, Any]) -> tuple[str, str | None]:
    """The JSON texts of ``record`` and of its :func:`light_record` (None when there is nothing to leave out), each
    byte for byte ``RECORD_ENCODER``'s.

    The members the two share (names, metrics, counts, checks: all but the texts and the confusion pairs) are encoded
    once, in runs (one C call each), and joined as the encoder joins a dict's members (``", "`` between them,
    ``": "`` after each key) with the texts' and pairs' own encodings, or their placeholders' (the light form).

    >>> record_texts({"id": "a", "reference": "b", "n": 1, "confusions": [["b", "c", 1]]})
    ('{"id": "a", "reference": "b", "n": 1, "confusions": [["b", "c", 1]]}', '{"id": "a", "reference": "", "n": 1, "confusions": []}')
    >>> record_texts({"id": "a", "hypothesis": None})
    ('{"id": "a", "hypothesis": null}', None)
    """
    encode = RECORD_ENCODER.encode
    whole: list[str] = []
    light: list[str] = []
    run: dict[Any, Any] = {}
    for key, value in record.items():
        if _left_out(key, value):
            if run:
                shared = encode(run)[1:-1]
                whole.append(shared)
                light.append(shared)
                run = {}
            whole.append(f'"{key}": {encode(value)}')
            light.append(f'"{key}": {_PLACEHOLDER_TEXTS[key]}')
        else:
            run[key] = value
    if not whole:  # nothing to replace: the record is one run
        return encode(record), None
    if run:
        shared = encode(run)[1:-1]
        whole.append(shared)
        light.append(shared)
    return "{" + ", ".join(whole) + "}", "{" + ", ".join(light) + "}"


def unpack_envelope(sent: Mapping[str, Any]) -> Envelope:
    """The envelope an xdist worker packed (:func:`pack_envelope`), its record decoded; any other envelope as it is.

    Args:
        sent: the envelope as it arrived on the controller.

    Returns:
        The envelope with its record, in its light form when the worker sent one (and the record's whole text,
        ``record_json``).
    """
    text = sent.get("record_json")
    if not isinstance(text, str):
        return sent  # type: ignore[return-value]
    light = sent.get("record_light")
    # the text is kept: the run's results spool it as it is instead of encoding the record again
    record = json.loads(light if isinstance(light, str) else text)
    return {"nodeid": sent["nodeid"], "record": record, "transport": sent["transport"], "record_json": text}


def finished_record(record: Mapping[str, Any], outcome: str, message: str | None = None, *,
                    filtered: bool = False) -> DocumentRecord:
    """The record as the run keeps it: a copy with the test's ``outcome`` (``filtered`` for a filtered output) and,
    for a test that failed, errored or was skipped, its ``message``.

    >>> finished_record({"id": "a"}, "failed", "cer too high")
    {'id': 'a', 'outcome': 'failed', 'message': 'cer too high'}
    >>> finished_record({"id": "a", "message": "low confidence"}, "passed", filtered=True)
    {'id': 'a', 'message': 'low confidence', 'outcome': 'filtered'}
    """
    rec: DocumentRecord = dict(record)  # type: ignore[assignment]
    rec["outcome"] = "filtered" if filtered else outcome
    if message is not None and rec["outcome"] in ("failed", "error", "skipped"):
        rec["message"] = message
    return rec


# ----------------------------------------------------------------------------------------------- the run

def build_run(*, environment: dict[str, Any], normalization: Mapping[str, Any], documents: Sequence[Mapping[str, Any]],
              summary: list[dict[str, Any]], skipped_entries: list[dict[str, Any]],
              collection_errors: list[dict[str, str]], interrupted: bool,
              summary_by_tag: list[dict[str, Any]] | None = None, facts: Mapping[str, Any] | None = None,
              datasets: Mapping[str, str] | None = None, replaced_characters: int = 0,
              unchecked_thresholds: Mapping[str, int] | None = None, bootstrap: Mapping[str, int] | None = None,
              shard: Mapping[str, int] | None = None) -> Run:
    """The run file of the plugin's run (``schema`` :data:`RUN_SCHEMA_ID`, ``created`` now); optional members are
    left out when empty.

    Args:
        environment: Python, platform, versions and the engines' identities.
        normalization: how texts were normalized (and the metric definitions' version).
        documents: the document records, sorted.
        summary: one row per engine × dataset.
        skipped_entries: the datasets' skipped entries.
        collection_errors: datasets that could not be loaded.
        interrupted: the run stopped before every test ran.
        summary_by_tag: the summary's rows per document tag.
        facts: ``{"facts_summary": ..., "facts": ...}`` when some document has page-level facts.
        datasets: each dataset's folder.
        replaced_characters: characters replaced with U+FFFD in the records.
        unchecked_thresholds: metric -> documents where a threshold on it could not be checked.
        bootstrap: the summary's bootstrap seed and resamples.
        shard: this run's shard, when it is one.

    Returns:
        The run.
    """
    run: Run = {
        "schema": RUN_SCHEMA_ID,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "environment": environment,
        "normalization": dict(normalization),
        "documents": documents,
        "summary": summary,
        "skipped_entries": skipped_entries,
        "collection_errors": collection_errors,
        "interrupted": bool(interrupted),
    }
    if summary_by_tag:
        run["summary_by_tag"] = summary_by_tag
    if facts:
        run["facts_summary"] = facts["facts_summary"]
        run["facts"] = facts["facts"]
    if datasets:
        run["datasets"] = {name: {"root": root} for name, root in sorted(datasets.items())}
    if replaced_characters:
        run["replaced_characters"] = replaced_characters
    if unchecked_thresholds:
        run["unchecked_thresholds"] = dict(sorted(unchecked_thresholds.items()))
    if bootstrap is not None:  # ocrmetrics merge recomputes the summary with them
        run["bootstrap"] = dict(bootstrap)
    if shard is not None:
        run["shard"] = dict(shard)
    return run


def build_merged_run(*, schema: str, environment: dict[str, Any], normalization: Mapping[str, Any],
                     documents: Sequence[Mapping[str, Any]], summary: list[dict[str, Any]],
                     skipped_entries: list[dict[str, Any]], collection_errors: list[dict[str, Any]],
                     interrupted: bool, bootstrap: Mapping[str, int], summary_by_tag: list[dict[str, Any]] | None = None,
                     facts: Mapping[str, Any] | None = None, replaced_characters: int = 0,
                     unchecked_thresholds: Mapping[str, int] | None = None,
                     datasets: Mapping[str, Mapping[str, Any]] | None = None) -> Run:
    """The run ``ocrmetrics merge`` writes from the run files of a sharded run: the members of :func:`build_run`
    (no ``shard``, no ``baseline``), in the order the merge writes them (``bootstrap`` after ``interrupted``,
    ``datasets`` last), ``created`` now.

    Args:
        schema: the shards' ``schema``.
        environment: the first shard's environment with every shard's engines.
        normalization: the shards' normalization.
        documents: every shard's documents, sorted.
        summary: the summary recomputed over them.
        skipped_entries: every shard's skipped entries, once each.
        collection_errors: every shard's collection errors, once per dataset.
        interrupted: some shard was interrupted.
        bootstrap: the shards' bootstrap settings.
        summary_by_tag: the summary's rows per document tag.
        facts: ``{"facts_summary": ..., "facts": ...}`` when some document has page-level facts.
        replaced_characters: the shards' replaced characters, summed.
        unchecked_thresholds: the shards' unchecked thresholds, summed.
        datasets: each dataset's ``{"root": folder}``.

    Returns:
        The merged run.
    """
    run: Run = {
        "schema": schema,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "environment": environment,
        "normalization": dict(normalization),
        "documents": documents,
        "summary": summary,
        "skipped_entries": skipped_entries,
        "collection_errors": collection_errors,
        "interrupted": bool(interrupted),
        "bootstrap": dict(bootstrap),
    }
    if summary_by_tag:  # as the plugin's run file: absent when no document has tags
        run["summary_by_tag"] = summary_by_tag
    if facts:
        run["facts_summary"] = facts["facts_summary"]
        run["facts"] = facts["facts"]
    if replaced_characters:
        run["replaced_characters"] = replaced_characters
    if unchecked_thresholds:
        run["unchecked_thresholds"] = dict(sorted(unchecked_thresholds.items()))
    if datasets:
        run["datasets"] = {name: dict(entry) for name, entry in sorted(datasets.items())}
    return run
