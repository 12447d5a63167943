"""JSON run files (``pytest --ocr-json=PATH``): read, validate, and index their documents across runs.

A run file is checked against its JSON Schema (``runfile/run_schema.json``, :mod:`pytest_ocrmetrics.runfile.record`)
and for non-finite numbers: ``json`` reads ``NaN``,
``Infinity`` and ``1e999`` without complaint, but a baseline holding them would compare as nothing at all.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterator, Mapping

__all__ = ["RunFileError", "load_run", "validate_run", "DocumentKey", "doc_key", "scored_documents",
           "SCORED_OUTCOMES"]

#: Outcomes of documents that carry comparable metrics.
SCORED_OUTCOMES: frozenset[str] = frozenset({"passed", "failed"})


class RunFileError(ValueError):
    """A file that is not a valid pytest-ocrmetrics JSON run file."""


def validate_run(run: Any, source: str = "run") -> dict[str, Any]:
    """Check ``run`` against the run file JSON Schema and for NaN or infinity; raise :class:`RunFileError` naming
    ``source``, the entry and, for a non-finite number, the document that holds it.

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
    return run


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


def load_run(path: str | Path) -> dict[str, Any]:
    """Read and validate a JSON run file (written by ``pytest --ocr-json=PATH``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RunFileError(f"run file {str(path)!r} does not exist; write one with pytest --ocr-json=PATH") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RunFileError(f"run file {str(path)!r} cannot be read: {exc}") from None
    try:
        run = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RunFileError(f"run file {str(path)!r} is not valid JSON (line {exc.lineno}, column {exc.colno}: "
                           f"{exc.msg})") from None
    except RecursionError:
        raise RunFileError(f"run file {str(path)!r} is nested too deeply to be a run file") from None
    return validate_run(run, f"run file {str(path)!r}")


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
