"""JSON run files (``pytest --ocr-json=PATH``): read, validate, and index their documents across runs.

A run file is checked in one of two ways, and always for non-finite numbers (``json`` reads ``NaN``, ``Infinity``
and ``1e999`` without complaint, but a baseline holding them would compare as nothing at all):

- **the structure** (the default of ``ocrmetrics merge``, ``compare``, ``report`` and ``--ocr-baseline``,
  :func:`check_run_structure`): every entry those readers use has its type (the top level, the environment and
  normalization, each document's identity, outcome, metrics, counts and lists, the summary rows, shard, bootstrap,
  skipped entries, collection errors), in plain Python; the per-document detail nobody merges or compares element by
  element (``confusions`` items, ``details``) is checked as a whole, not item by item. A non-finite number is noticed
  while the JSON is parsed, so a sound file is not walked a second time.
- **the full JSON schema** (``runfile/run_schema.json``, :func:`validate_run`; ``--validate``,
  ``--ocr-validate-baseline``), element by element: about ten times slower on a big run, most of it the documents'
  confusion triples.
"""

from __future__ import annotations

import json
import math
import operator
from itertools import chain, compress, repeat
from operator import itemgetter
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from pytest_ocrmetrics.core.collector import collector_paused

__all__ = ["RunFileError", "load_run", "load_shard", "validate_run", "check_run_structure", "DocumentKey", "doc_key",
           "scored_documents", "SCORED_OUTCOMES"]

#: Outcomes of documents that carry comparable metrics.
SCORED_OUTCOMES: frozenset[str] = frozenset({"passed", "failed"})


class RunFileError(ValueError):
    """A file that is not a valid pytest-ocrmetrics JSON run file."""


def validate_run(run: Any, source: str = "run", *, schema: bool = True) -> dict[str, Any]:
    """Check ``run`` against the run file JSON Schema (``schema=False``: only its structure,
    :func:`check_run_structure`) and for NaN or infinity; raise :class:`RunFileError` naming ``source``, the entry
    and, for a non-finite number, the document that holds it.

    Time proportional to the file: validation stops at the first schema error (the first offending document is the
    one named), and the search for NaN or infinity at the first one.

    >>> doc = {"id": "a.png", "dataset": "d", "engine": "e", "outcome": "passed", "metrics": {"cer": float("nan")},
    ...        "counts": {}, "elapsed_s": 0}
    >>> run = {"schema": "pytest-ocrmetrics/1", "created": "", "documents": [doc], "summary": [],
    ...        "environment": {"python": "3", "platform": "", "plugin_version": "0", "engines": {}},
    ...        "normalization": {"name": "nfc", "unit": "grapheme", "tokenizer": "whitespace"}}
    >>> validate_run(run)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pytest_ocrmetrics.runfile.read.RunFileError: run holds NaN at documents/0/metrics/cer, in document 'a.png' ...
    """
    if schema:
        _check_schema(run, source)
    else:
        check_run_structure(run, source)
    _check_finite(run, source)
    return run


def _check_schema(run: Any, source: str) -> None:
    """Raise :class:`RunFileError` at the first place ``run`` breaks the run file JSON Schema."""
    import jsonschema

    from pytest_ocrmetrics.runfile.record import run_schema

    validator = jsonschema.Draft202012Validator(run_schema())
    # the first error only: iter_errors is lazy, so a malformed file is refused as soon as its first problem is found
    # (weighing every error, as best_match over all of them does, took ~9 minutes on 10,000,000 empty documents);
    # best_match on that one error still descends into an anyOf's context for the branch that fits best
    first = next(iter(validator.iter_errors(run)), None)
    error = jsonschema.exceptions.best_match([first]) if first is not None else None
    if error is not None:
        location = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise RunFileError(f"{source} is not a pytest-ocrmetrics run file: at {location}: {error.message}; "
                           f"write one with pytest --ocr-json=PATH")


def _check_finite(run: Any, source: str) -> None:
    """Raise :class:`RunFileError` naming the first NaN or infinity in ``run`` (and its document)."""
    found = _first_non_finite(run)
    if found is not None:
        path, value = found
        where = ""
        if len(path) > 1 and path[0] == "documents":
            doc = run["documents"][path[1]]
            where = f", in document {doc['id']!r} ({doc['engine']} / {doc['dataset']})"
        raise RunFileError(f"{source} holds {_json_token(value)} at {'/'.join(map(str, path))}{where}; a run file "
                           f"holds finite numbers only (pytest --ocr-json never writes NaN or infinity): fix that "
                           f"value or write the file again with pytest --ocr-json=PATH")


def _json_token(value: float) -> str:
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def _first_non_finite(run: Mapping[str, Any]) -> tuple[tuple[Any, ...], float] | None:
    """Path and value of the first NaN or infinity: the documents first (so the message can name one), then the rest."""
    documents = run.get("documents")
    tops: list[tuple[tuple[Any, ...], Any]] = []
    if isinstance(documents, list):
        tops += [(("documents", i), doc) for i, doc in enumerate(documents)]
    tops += [((key,), value) for key, value in run.items() if key != "documents"]
    for prefix, value in tops:
        for path, number in _floats(prefix, value):
            if not math.isfinite(number):
                return path, number
    return None


def _floats(prefix: tuple[Any, ...], value: Any) -> Iterator[tuple[tuple[Any, ...], float]]:
    """Every float inside ``value`` with its path, in document order (no recursion: nesting depth does not matter)."""
    stack: list[tuple[tuple[Any, ...], Any]] = [(prefix, value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, float):
            yield path, item
        elif isinstance(item, dict):
            stack.extend(reversed([(path + (k,), v) for k, v in item.items()]))
        elif isinstance(item, list):
            stack.extend(reversed([(path + (i,), v) for i, v in enumerate(item)]))


def load_run(path: str | Path, *, schema: bool = True) -> dict[str, Any]:
    """Read and check a JSON run file (written by ``pytest --ocr-json=PATH``).

    Args:
        path: the run file.
        schema: check it against the full JSON schema (:func:`validate_run`); ``False`` checks only its structure
            (:func:`check_run_structure`), which is what ``ocrmetrics merge``, ``compare`` and ``report`` and the
            plugin's ``--ocr-baseline`` do unless asked (``--validate``, ``--ocr-validate-baseline``). Both refuse
            NaN and infinity, naming the document.

    Returns:
        The run, a dict of the JSON file.

    Raises:
        RunFileError: the file is missing, unreadable, not JSON, not a run file, or holds NaN or infinity.
    """
    path = Path(path)
    return _parse_run(_read_text(path), path, schema=schema)


def load_shard(path: str | Path) -> dict[str, Any]:
    """Read a shard's run file for ``ocrmetrics merge``: :func:`load_run` with its structure checked (``schema=False``),
    its documents kept as their JSON text where that is exactly the text the run-file writer would write for them
    (:class:`~pytest_ocrmetrics.runfile.verbatim.VerbatimDocuments`, the usual case for a file ``pytest --ocr-json``
    wrote), so that the merge neither decodes their confusion triples and texts nor encodes them again.

    A shard's file whose merge index matches its digest (:mod:`~pytest_ocrmetrics.runfile.merge_index`: every file
    ``pytest --ocr-shard`` writes) is cut from its bytes, and what the merge reads of each document is its entry in
    the index: no line is decoded. Any other file is read as before (each line checked as text, or the whole file
    decoded), and the index, which then does not match, is dropped.

    Args:
        path: the shard's run file.

    Returns:
        The run, a dict of the JSON file; its ``documents`` a ``VerbatimDocuments`` or, for a file in another layout
        or with a document that is not written as the writer writes it, a list (the file read by :func:`load_run`,
        whose checks and messages then apply).

    Raises:
        RunFileError: as :func:`load_run`, with the same messages.
    """
    path = Path(path)
    run = _indexed_run(path)
    if run is not None:
        return run
    text = _read_text(path)
    run = _verbatim_run(text)
    if run is None:
        run = _parse_run(text, path, schema=False)
        run.pop("merge_index", None)  # (runfile.merge_index.INDEX_KEY) it did not match the documents: not read
    return run


def _indexed_run(path: Path) -> dict[str, Any] | None:
    """The shard file at ``path`` with its documents kept as text and read from its merge index, when the index's
    digest matches (:mod:`~pytest_ocrmetrics.runfile.merge_index`) and nothing is wrong with the rest; None
    otherwise (then the file is read as before, which says what is wrong)."""
    from pytest_ocrmetrics.runfile.merge_index import indexed_parts
    from pytest_ocrmetrics.runfile.verbatim import decode_finite, documents_placeholder

    try:
        data = path.read_bytes()
    except OSError:
        return None
    parts = indexed_parts(data, json.dumps(documents_placeholder()))
    if parts is None:
        return None
    outside, lines, entries = parts
    index = decode_finite(entries)
    return _kept_run(outside, lines, index) if type(index) is list else None


def _verbatim_run(text: str) -> dict[str, Any] | None:
    """The run file ``text`` with its documents kept as text, when it is in the plugin's layout, every document is
    canonical (see :mod:`~pytest_ocrmetrics.runfile.verbatim`) and nothing is wrong with it; None otherwise (then
    :func:`_parse_run` reads it, and says what is wrong)."""
    from pytest_ocrmetrics.runfile.verbatim import split_documents

    split = split_documents(text)
    return None if split is None else _kept_run(*split)


def _kept_run(outside: str, lines: Sequence[str | bytes], index: list[Any] | None = None) -> dict[str, Any] | None:
    """The run of a file cut into ``outside`` (its text with a placeholder in place of the documents array) and its
    document ``lines``, each document kept as its text: when every line is canonical or has an entry in ``index``
    (the entries of the file's merge index, whose digest matched), and nothing is wrong with the rest; else None."""
    from pytest_ocrmetrics.runfile.merge_index import INDEX_KEY
    from pytest_ocrmetrics.runfile.verbatim import decode_finite, documents_placeholder, read_lines

    run = decode_finite(outside)
    if type(run) is not dict or run.get("documents") != documents_placeholder():
        return None  # not JSON, NaN, or the array cut out was not the run's documents
    if (index is not None and len(index) != len(lines)) or _first_non_finite(run) is not None:
        return None  # 1e999 (the decoding refused NaN and Infinity), in an index that does not match too
    run.pop(INDEX_KEY, None)  # an index whose digest does not match is not read (nor kept)
    documents = read_lines(lines, index)
    if documents is None:
        return None
    try:
        _check_structure({**run, "documents": []})
        # an index of entries only, as the plugin writes it: told at once for the whole index (C passes over all its
        # values); anything else entry by entry, which decides the same for each entry (and says where it fails)
        if index is None or None in index or not _plain_entries([head for _, head in documents.entries]):
            for position, (_, head) in enumerate(documents.entries):
                if index is None or index[position] is None:
                    _document(head, ("documents", position))
                elif not _plain_entry(head):  # not what merge_entry writes: the index is not the writer's
                    return None
    except _Problem:
        return None
    # every document from an index that matched, each entry with its counts checked (none negative, a scored
    # micro-averaged metric with both of its counts): the merge need not check them again
    documents.counts_checked = index is not None and None not in index
    run["documents"] = documents
    return run


_NUMBER_TYPES = frozenset({int, float})


def _plain_entry(entry: dict[str, Any]) -> bool:
    """Whether ``entry`` is what a merge index holds for a document
    (:func:`~pytest_ocrmetrics.runfile.merge_index.merge_entry`): its keys, each value of its type (what
    :func:`_document` accepts of them), told in a few C-level passes per entry."""
    try:
        if not (type(entry["id"]) is str and type(entry["dataset"]) is str and type(entry["engine"]) is str
                and type(entry["outcome"]) is str and entry["outcome"] in _OUTCOMES):
            return False
        metrics, counts = entry["metrics"], entry["counts"]
    except (KeyError, TypeError):
        return False
    # (a sum is finite only when every number is: 1e999 decodes to infinity, which merge_entry never writes)
    if (type(metrics) is not dict or type(counts) is not dict or not set(map(type, metrics.values())) <= _NUMBER_TYPES
            or not math.isfinite(sum(metrics.values()))):
        return False
    if not _plain_counts(metrics, counts, entry["outcome"]):
        return False
    others = len(entry) - 6
    for key in ("cached", "truncated"):
        if key in entry:
            others -= 1
            if type(entry[key]) is not bool:
                return False
    if "tags" in entry:
        others -= 1
        if type(entry["tags"]) is not list or not set(map(type, entry["tags"])) <= {str}:
            return False
    return others == 0


_ENTRY_KEYS = frozenset({"id", "dataset", "engine", "outcome", "metrics", "counts", "cached", "truncated", "tags"})
_IDENTITY = itemgetter("id", "dataset", "engine")
# below this every value is: no sum of an entry's values can overflow to infinity, so all values finite means every
# entry's sum finite (what _plain_entry asks of each)
_SAFE_MAGNITUDE = 1e300


def _plain_entries(entries: list[Any]) -> bool:
    """Whether :func:`_plain_entry` holds for every one of ``entries`` (a merge index's), told in C passes over all
    their values at once instead of a few calls per entry. True only when it holds for each: False when it cannot tell
    cheaply (any doubt: then each entry is checked by :func:`_plain_entry`)."""
    try:
        if not entries or set(map(type, entries)) != {dict}:
            return False
        if set(map(type, chain.from_iterable(map(_IDENTITY, entries)))) != {str}:
            return False
        outcomes = list(map(itemgetter("outcome"), entries))
        if not set(outcomes) <= set(_OUTCOMES) or not set(chain.from_iterable(entries)) <= _ENTRY_KEYS:
            return False
        metrics, counts = list(map(itemgetter("metrics"), entries)), list(map(itemgetter("counts"), entries))
        return (_plain_numbers(metrics, counts) and _all_counts_there(metrics, counts, outcomes)
                and _plain_flags_and_tags(entries))
    except (KeyError, TypeError):
        return False


def _plain_numbers(metrics: list[Any], counts: list[Any]) -> bool:
    """The entries' ``metrics`` and ``counts`` are objects of finite numbers (no count below zero), each small enough
    that no entry's sum can overflow: what :func:`_plain_entry` asks of each entry's sums."""
    if set(map(type, metrics)) != {dict} or set(map(type, counts)) != {dict}:
        return False
    per_metric = list(chain.from_iterable(map(dict.values, counts)))
    if per_metric and set(map(type, per_metric)) != {dict}:
        return False
    count_numbers = list(chain.from_iterable(map(dict.values, per_metric)))
    for values in (list(chain.from_iterable(map(dict.values, metrics))), count_numbers):
        if values and (not set(map(type, values)) <= _NUMBER_TYPES or not all(map(math.isfinite, values))
                       or max(map(abs, values)) > _SAFE_MAGNITUDE):
            return False
    return not count_numbers or min(count_numbers) >= 0  # a negative count: merge_index.counts_problem


def _all_counts_there(metrics: list[dict[str, Any]], counts: list[dict[str, Any]], outcomes: list[str]) -> bool:
    """Every scored entry's micro-averaged metrics have both of their counts (counts_problem's "lacking")."""
    from pytest_ocrmetrics.runfile.merge_index import micro_counts

    scored = [outcome not in ("filtered", "skipped") for outcome in outcomes]
    for metric, keys in micro_counts().items():
        has = list(map(operator.contains, metrics, repeat(metric)))
        if not any(has):
            continue
        theirs = [c.get(metric) or {} for c in compress(counts, map(operator.and_, has, scored))]
        if not all(map(operator.contains, theirs, repeat(keys[0]))) or not all(
                map(operator.contains, theirs, repeat(keys[1]))):
            return False
    return True


def _plain_flags_and_tags(entries: list[dict[str, Any]]) -> bool:
    """``cached`` and ``truncated`` are booleans, ``tags`` lists of strings, where an entry has them."""
    flags = [entry[key] for key in ("cached", "truncated") for entry in entries if key in entry]
    tags = [entry["tags"] for entry in entries if "tags" in entry]
    if (flags and set(map(type, flags)) != {bool}) or (tags and set(map(type, tags)) != {list}):
        return False
    return not tags or set(map(type, chain.from_iterable(tags))) <= {str}


def _plain_counts(metrics: dict[str, Any], counts: dict[str, Any], outcome: str) -> bool:
    """Whether an entry's ``counts`` are objects of finite numbers with nothing the merge refuses
    (:func:`~pytest_ocrmetrics.runfile.merge_index.counts_problem`); an entry that fails is read from its line,
    where the merge refuses it with its own sentence."""
    from pytest_ocrmetrics.runfile.merge_index import counts_problem

    for numbers in counts.values():
        if (type(numbers) is not dict or not set(map(type, numbers.values())) <= _NUMBER_TYPES
                or not math.isfinite(sum(numbers.values()))):
            return False
    return counts_problem(metrics, counts, outcome) is None


def _read_text(path: Path) -> str:
    """The run file's text, or :class:`RunFileError` when it is missing or unreadable."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RunFileError(f"run file {str(path)!r} does not exist; write one with pytest --ocr-json=PATH") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RunFileError(f"run file {str(path)!r} cannot be read: {exc}") from None


def _parse_run(text: str, path: Path, *, schema: bool) -> dict[str, Any]:
    """The run file ``text`` (read from ``path``) decoded and checked, as :func:`load_run` describes."""
    non_finite: list[str] = []  # NaN, Infinity, -Infinity, and numbers too big for a float (1e999), as parsed

    def constant(name: str) -> float:
        non_finite.append(name)
        return float(name)

    def number(token: str) -> float:
        value = float(token)
        if value - value != 0:  # infinity (inf - inf is NaN); the only way a JSON number is not finite
            non_finite.append(token)
        return value

    try:
        # millions of containers and no cycles: the collector's passes over them found nothing, and reading a
        # 20,000-document run file took 1.5x as long
        with collector_paused():
            run = json.loads(text, parse_constant=constant, parse_float=number)
    except json.JSONDecodeError as exc:
        raise RunFileError(f"run file {str(path)!r} is not valid JSON (line {exc.lineno}, column {exc.colno}: "
                           f"{exc.msg})") from None
    except RecursionError:
        raise RunFileError(f"run file {str(path)!r} is nested too deeply to be a run file") from None
    source = f"run file {str(path)!r}"
    if schema:
        return validate_run(run, source)
    check_run_structure(run, source)
    if non_finite:  # only then: find where, and name the document
        _check_finite(run, source)
    return run


_OUTCOMES = ("passed", "failed", "error", "skipped", "filtered")
_TYPE_NAMES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer", float: "number",
               type(None): "null"}


class _Problem(Exception):
    """Where (a path) and what: the first place a run file breaks its structure."""

    def __init__(self, path: tuple[Any, ...], message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str) if not isinstance(value, (dict, list)) else (
        "{...}" if isinstance(value, dict) else "[...]")
    return text if len(text) <= 60 else text[:57] + "..."


def _type_error(path: tuple[Any, ...], value: Any, expected: str) -> _Problem:
    return _Problem(path, f"{_shown(value)} is not of type {expected}")


def _object(value: Any, path: tuple[Any, ...], required: tuple[str, ...] = ()) -> dict[str, Any]:
    if type(value) is not dict:
        raise _type_error(path, value, "'object'")
    for key in required:
        if key not in value:
            raise _Problem(path, f"{key!r} is a required property")
    return value


def _array(value: Any, path: tuple[Any, ...]) -> list[Any]:
    if type(value) is not list:
        raise _type_error(path, value, "'array'")
    return value


def _string(value: Any, path: tuple[Any, ...], *, nullable: bool = False) -> None:
    if type(value) is not str and not (nullable and value is None):
        raise _type_error(path, value, "'string', 'null'" if nullable else "'string'")


def _integer(value: Any, path: tuple[Any, ...], minimum: int | None = None) -> None:
    if type(value) is not int and not (type(value) is float and value.is_integer()):
        raise _type_error(path, value, "'integer'")
    if minimum is not None and value < minimum:
        raise _Problem(path, f"{_shown(value)} is less than the minimum of {minimum}")


def _number(value: Any, path: tuple[Any, ...], minimum: float | None = None) -> None:
    if type(value) is not float and type(value) is not int:
        raise _type_error(path, value, "'number'")
    if minimum is not None and value < minimum:
        raise _Problem(path, f"{_shown(value)} is less than the minimum of {minimum}")


def _numbers(value: Any, path: tuple[Any, ...]) -> None:
    """An object of numbers (a document's metrics, one metric's counts)."""
    for key, number in _object(value, path).items():
        if type(number) is not float and type(number) is not int:
            raise _type_error(path + (key,), number, "'number'")


_REQUIRED = ("id", "dataset", "engine", "outcome", "metrics", "counts", "elapsed_s")


def _document(doc: Any, path: tuple[Any, ...]) -> None:
    doc = _object(doc, path, _REQUIRED)
    for key in ("id", "dataset", "engine"):
        _string(doc[key], path + (key,))
    if doc["outcome"] not in _OUTCOMES or type(doc["outcome"]) is not str:
        raise _Problem(path + ("outcome",), f"{_shown(doc['outcome'])} is not one of {list(_OUTCOMES)}")
    _numbers(doc["metrics"], path + ("metrics",))
    for metric, entry in _object(doc["counts"], path + ("counts",)).items():
        _numbers(entry, path + ("counts", metric))
    _number(doc["elapsed_s"], path + ("elapsed_s",), 0)
    if len(doc) == 7:
        return
    get = doc.get
    for key in ("message", "image", "reference", "hypothesis"):
        if key in doc:
            _string(doc[key], path + (key,), nullable=True)
    for key in ("tags", "tests", "unchecked_thresholds"):
        if key in doc:
            for index, item in enumerate(_array(doc[key], path + (key,))):
                _string(item, path + (key, index))
    for key in ("cached", "truncated", "declared_checks"):
        if key in doc and type(doc[key]) is not bool:
            raise _type_error(path + (key,), doc[key], "'boolean'")
    if "replaced_characters" in doc:
        _integer(doc["replaced_characters"], path + ("replaced_characters",), 0)
    confidence = get("confidence")
    if confidence is not None:
        _number(confidence, path + ("confidence",))
    if "confusions" in doc:
        _array(doc["confusions"], path + ("confusions",))  # a whole: no reader merges or compares its items
    if "checks" in doc:
        for index, item in enumerate(_array(doc["checks"], path + ("checks",))):
            _object(item, path + ("checks", index))
    if "details" in doc:
        _object(doc["details"], path + ("details",))


def _summary_row(row: Any, path: tuple[Any, ...]) -> None:
    row = _object(row, path, ("engine", "dataset", "documents", "metrics"))
    _string(row["engine"], path + ("engine",))
    _string(row["dataset"], path + ("dataset",))
    _integer(row["documents"], path + ("documents",))
    for key in ("evaluated", "passed", "failed", "errors", "skipped", "filtered"):
        if key in row:
            _integer(row[key], path + (key,))
    for metric, entry in _object(row["metrics"], path + ("metrics",)).items():
        entry = _object(entry, path + ("metrics", metric), ("micro", "mean", "n"))
        for key, value in entry.items():
            if key == "n":
                _integer(value, path + ("metrics", metric, key))
            elif key in ("micro", "mean", "median", "p90", "p95", "min", "max", "ci_low", "ci_high"):
                _number(value, path + ("metrics", metric, key))


def check_run_structure(run: Any, source: str = "run") -> dict[str, Any]:
    """Check the structure of a run file that ``ocrmetrics merge``, ``compare``, ``report`` and ``--ocr-baseline``
    read: every entry they use has the type the JSON schema gives it, in plain Python and in time proportional to
    the documents (not to the characters of their confusion lists, which are checked to be lists, not item by item,
    nor ``details``, checked to be an object). Raise :class:`RunFileError` naming ``source`` and the first entry
    that is wrong, in the words the full schema check (:func:`validate_run`) uses. Numbers are not checked to be
    finite here (:func:`load_run` notices NaN while parsing; :func:`validate_run` walks for it).

    Args:
        run: a decoded run file.
        source: how messages name it (``run file 'shard-1.json'``).

    Returns:
        ``run``, unchanged.

    Raises:
        RunFileError: ``run`` is not a run file; the message names the entry, e.g. ``at documents/3: 'id' is a
            required property``.

    >>> check_run_structure({"schema": "pytest-ocrmetrics/1"}, "x.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pytest_ocrmetrics.runfile.read.RunFileError: x.json is not a pytest-ocrmetrics run file: at (top level): ...
    """
    try:
        _check_structure(run)
    except _Problem as problem:
        location = "/".join(str(p) for p in problem.path) or "(top level)"
        raise RunFileError(f"{source} is not a pytest-ocrmetrics run file: at {location}: {problem.message}; "
                           f"write one with pytest --ocr-json=PATH") from None
    return run


def _check_structure(run: Any) -> None:
    run = _object(run, (), ("schema", "created", "environment", "normalization", "documents", "summary"))
    _check_header(run)
    for index, doc in enumerate(_array(run["documents"], ("documents",))):
        _document(doc, ("documents", index))
    for key in ("summary", "summary_by_tag"):
        if key in run:
            for index, row in enumerate(_array(run[key], (key,))):
                _summary_row(row, (key, index))
                if key == "summary_by_tag":
                    _object(row, (key, index), ("tag",))
                    _string(row["tag"], (key, index, "tag"))
    _check_optional_entries(run)


def _check_header(run: Mapping[str, Any]) -> None:
    """The run's schema id, creation time, environment and normalization."""
    if run["schema"] != "pytest-ocrmetrics/1":
        raise _Problem(("schema",), "'pytest-ocrmetrics/1' was expected")
    _string(run["created"], ("created",))
    environment = _object(run["environment"], ("environment",), ("python", "platform", "plugin_version", "engines"))
    for key in ("python", "platform", "plugin_version"):
        _string(environment[key], ("environment", key))
    for label, identity in _object(environment["engines"], ("environment", "engines")).items():
        _object(identity, ("environment", "engines", label))
    normalization = _object(run["normalization"], ("normalization",), ("name", "unit", "tokenizer"))
    _string(normalization["name"], ("normalization", "name"))
    for key, allowed in (("unit", ("grapheme", "codepoint")), ("tokenizer", ("whitespace", "unicode"))):
        if normalization[key] not in allowed or type(normalization[key]) is not str:
            raise _Problem(("normalization", key), f"{_shown(normalization[key])} is not one of {list(allowed)}")


def _check_optional_entries(run: Mapping[str, Any]) -> None:
    """The entries a run file may hold: shard, bootstrap, interruption, counts, skipped entries, collection errors,
    dataset folders, facts and the baseline comparison."""
    for key, fields in (("shard", ("index", "count")), ("bootstrap", ("seed", "resamples"))):
        if key in run:
            entry = _object(run[key], (key,), fields)
            for field in fields:
                _integer(entry[field], (key, field), None if field == "seed" else (0 if field == "resamples" else 1))
    if "interrupted" in run and type(run["interrupted"]) is not bool:
        raise _type_error(("interrupted",), run["interrupted"], "'boolean'")
    if "replaced_characters" in run:
        _integer(run["replaced_characters"], ("replaced_characters",), 0)
    if "unchecked_thresholds" in run:
        for metric, count in _object(run["unchecked_thresholds"], ("unchecked_thresholds",)).items():
            _integer(count, ("unchecked_thresholds", metric), 1)
    for index, entry in enumerate(_array(run.get("skipped_entries", []), ("skipped_entries",))):
        _object(entry, ("skipped_entries", index), ("dataset", "source", "reason"))
    for index, entry in enumerate(_array(run.get("collection_errors", []), ("collection_errors",))):
        entry = _object(entry, ("collection_errors", index), ("dataset", "message"))
        for field in ("dataset", "message"):
            _string(entry[field], ("collection_errors", index, field))
    for name, entry in _object(run.get("datasets", {}), ("datasets",)).items():
        _string(_object(entry, ("datasets", name), ("root",))["root"], ("datasets", name, "root"))
    for key in ("facts", "facts_summary"):
        if key in run:
            for index, entry in enumerate(_array(run[key], (key,))):
                _object(entry, (key, index))
    if "baseline" in run:
        _object(run["baseline"], ("baseline",), ("compared", "new", "missing"))


DocumentKey = tuple[str, str, str]  # (dataset, engine, document id)


def doc_key(doc: Mapping[str, Any]) -> DocumentKey:
    """(dataset, engine, id): how a run file's documents are matched across runs."""
    return (str(doc["dataset"]), str(doc["engine"]), str(doc["id"]))


def scored_documents(run: Mapping[str, Any]) -> dict[DocumentKey, Mapping[str, Any]]:
    """The run's documents that carry comparable metrics (outcome passed or failed), by (dataset, engine, id)."""
    return {
        doc_key(doc): doc for doc in run.get("documents", ())
        if doc.get("outcome") in SCORED_OUTCOMES and doc.get("metrics")
    }
