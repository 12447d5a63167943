"""Merging the run files of a sharded CI run (``ocrmetrics merge``) into the run file of the whole run.

Pytest-free. Each shard (``pytest --ocr-shard=K/N --ocr-json=shard-K.json``, or a node-level split by pytest-split
or pytest-shard) writes its own run file; :func:`merge_runs` joins them: the documents concatenated in the order the
plugin writes them, and the summary recomputed from those documents by the plugin's own code
(:meth:`~pytest_ocrmetrics.runfile.results.RunResults.summary`) with the seed and resamples the shards recorded, so the merged
summary (micro averages from counts, means, percentiles, bootstrap intervals) equals, exactly, the summary of the
same documents run on one machine. Gates and baseline checks then run on the merged run (see ``ocrmetrics merge``).

Refused, with one sentence naming the files: a document in two files, files run with other normalization settings,
another engine identity (version, model, settings) or another bootstrap seed, shard files of different shard counts,
the same shard twice or a shard missing, an ``--ocr-shard`` file that scored documents without an engine another
shard ran (another ``--ocr-engine`` list, or the engine missing on that machine: its rows would be gated on part of
the documents), and a document whose counts no run writes (a negative count, or a micro-averaged metric without its
counts: the merged micro average would be wrong, or the summary could not be computed).
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from pytest_ocrmetrics.runfile.merge_index import counts_problem
from pytest_ocrmetrics.runfile.normalization import describe_normalization, same_normalization
from pytest_ocrmetrics.runfile.read import SCORED_OUTCOMES
from pytest_ocrmetrics.runfile.record import Run, build_merged_run
from pytest_ocrmetrics.runfile.results import RunResults, facts_of
from pytest_ocrmetrics.runfile.verbatim import VerbatimDocuments

__all__ = ["MergeError", "merge_runs", "DEFAULT_BOOTSTRAP"]

#: The summary's bootstrap settings of a run file that does not record them (the plugin's defaults).
DEFAULT_BOOTSTRAP: Mapping[str, int] = {"seed": 0, "resamples": 1000}


class MergeError(ValueError):
    """Run files that cannot be merged into one run; the message is one sentence naming the files."""


def merge_runs(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> Run:
    """One run (a dict of the JSON run file) from several ``(name, run)``, each run already validated
    (:func:`~pytest_ocrmetrics.runfile.read.load_run`, or :func:`~pytest_ocrmetrics.runfile.read.load_shard`);
    ``name`` is how messages call the file.

    Documents read as their text (a shard's :class:`~pytest_ocrmetrics.runfile.verbatim.VerbatimDocuments`) are
    checked, counted and summarised from what was decoded of them, or from their entry in the shard's merge index
    (:mod:`~pytest_ocrmetrics.runfile.merge_index`), and the merged run's ``documents`` keep them as text (a
    ``VerbatimDocuments``), so that the run file written from it copies each one; the file written is the same, byte
    for byte, as from the shards read in full (then ``documents`` is a list, as before).

    The result has no ``shard`` and no ``baseline`` entry (a baseline is compared after the merge), ``interrupted``
    when any shard was, ``replaced_characters`` and ``unchecked_thresholds`` summed, skipped entries and collection
    errors listed once.

    >>> doc = {"id": "a.png", "dataset": "d", "engine": "e", "outcome": "passed", "metrics": {}, "counts": {},
    ...        "elapsed_s": 0}
    >>> run = {"schema": "pytest-ocrmetrics/1", "created": "", "documents": [doc], "summary": [],
    ...        "environment": {"engines": {}}, "normalization": {"name": "nfc", "unit": "grapheme",
    ...        "tokenizer": "whitespace"}, "shard": {"index": 1, "count": 2}}
    >>> merge_runs([("one.json", run), ("two.json", {**run, "shard": {"index": 2, "count": 2}})])
    ... # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    pytest_ocrmetrics.runfile.merge.MergeError: document 'a.png' (e / d) is in both one.json and two.json: a document
    belongs to one shard only; merge the run files of one sharded run, each once
    """
    if not runs:
        raise MergeError("no run files to merge; give the run file of every shard")
    _check_shards(runs)
    first_name, first = runs[0]
    normalization = dict(first["normalization"])
    bootstrap = _bootstrap(first)
    _check_same_settings(runs, normalization, bootstrap)
    engines = _merged_engines(runs)
    _check_engine_lists(runs)
    for name, run in runs:
        _check_counts(name, run)
    entries, skipped, errors = _merged_documents(runs)
    documents = [document for _, document in entries]  # what the summary reads (all of it, but for texts)
    replaced = sum(int(run.get("replaced_characters") or 0) for _, run in runs)

    results = RunResults(normalization=normalization, seed=bootstrap["seed"], skipped_entries=skipped)
    unchecked, datasets = _shard_totals(runs)
    return build_merged_run(
        schema=first["schema"], environment={**first["environment"], "engines": dict(sorted(engines.items()))},
        normalization=normalization, documents=_written_documents(entries, replaced),
        summary=results.summary(documents, resamples=bootstrap["resamples"]),
        skipped_entries=[skipped[key] for key in sorted(skipped)],
        collection_errors=[errors[key] for key in sorted(errors)],
        interrupted=any(bool(run.get("interrupted")) for _, run in runs), bootstrap=bootstrap,
        summary_by_tag=results.summary_by_tag(documents, resamples=bootstrap["resamples"]),
        facts=facts_of(documents, seed=bootstrap["seed"], resamples=bootstrap["resamples"]),
        replaced_characters=replaced, unchecked_thresholds=unchecked, datasets=datasets)


def _documents(run: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    """The run's documents as the merge reads them: for documents kept as text, what was decoded of them."""
    documents = run["documents"]
    return documents.heads() if isinstance(documents, VerbatimDocuments) else documents


def _written_documents(entries: list[tuple[str | bytes | None, dict[str, Any]]], replaced: int) -> Sequence[dict[str, Any]]:
    """The merged run's ``documents``: a list when no shard's documents were kept as text (every document read in
    full, as before); else a :class:`VerbatimDocuments` that the run-file writer copies.

    Kept as text only when the file written is the same: the run's sanitising counts what it replaces in the
    documents (their own ``replaced_characters`` too, when the shards recorded none), and it does not look into a
    ``VerbatimDocuments``. So a document read in full that holds a character to replace, or a document's own count
    where the shards recorded none, makes the list again (each text decoded).
    """
    from pytest_ocrmetrics.core.safe_text import clean_run

    if all(text is None for text, _ in entries):
        return [document for _, document in entries]
    if any(text is None and clean_run(document)[1] for text, document in entries) or (
            not replaced and any(document.get("replaced_characters") for _, document in entries)):
        return [document if text is None else json.loads(text) for text, document in entries]
    return VerbatimDocuments(entries)


def _check_same_settings(runs: Sequence[tuple[str, Mapping[str, Any]]], normalization: Mapping[str, Any],
                         bootstrap: Mapping[str, int]) -> None:
    """Every shard ran with the first one's normalization and bootstrap settings, else :class:`MergeError`."""
    first_name = runs[0][0]
    for name, run in runs[1:]:
        if not same_normalization(normalization, run["normalization"]):
            raise MergeError(f"{first_name} and {name} were run with different normalization settings "
                             f"({describe_normalization(normalization, run['normalization'])} against "
                             f"{describe_normalization(run['normalization'], normalization)}); run every shard with "
                             f"the same --ocr-normalize, --ocr-unit, --ocr-tokenizer and --ocr-field-compare")
        if _bootstrap(run) != bootstrap:
            raise MergeError(f"{first_name} and {name} were run with different bootstrap settings "
                             f"({_bootstrap_text(bootstrap)} against {_bootstrap_text(_bootstrap(run))}); run every "
                             f"shard with the same --ocr-seed and --ocr-bootstrap")


def _merged_documents(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> tuple[
        list[tuple[str | bytes | None, dict[str, Any]]], dict[tuple[str, str], dict[str, Any]], dict[str, dict[str, Any]]]:
    """Every shard's documents in the plugin's order as ``(text, document)`` (``text`` None for a document read in
    full; else ``document`` is what was decoded of it), a document in two shards a :class:`MergeError`, and the
    skipped entries and collection errors, each listed once."""
    owner: dict[tuple[str, str, str], str] = {}
    entries: list[tuple[str | bytes | None, dict[str, Any]]] = []
    skipped: dict[tuple[str, str], dict[str, Any]] = {}
    errors: dict[str, dict[str, Any]] = {}
    for name, run in runs:
        shard = run["documents"]
        pairs = shard.entries if isinstance(shard, VerbatimDocuments) else [(None, doc) for doc in shard]
        for text, doc in pairs:
            key = (str(doc["engine"]), str(doc["dataset"]), str(doc["id"]))
            if key in owner:
                raise MergeError(f"document {key[2]!r} ({key[0]} / {key[1]}) is in both {owner[key]} and {name}: "
                                 f"a document belongs to one shard only; merge the run files of one sharded run, "
                                 f"each once")
            owner[key] = name
            entries.append((text, doc if text is not None else dict(doc)))
        for entry in run.get("skipped_entries") or ():
            skipped.setdefault((str(entry["dataset"]), str(entry["source"])), dict(entry))
        for error in run.get("collection_errors") or ():
            errors.setdefault(str(error["dataset"]), dict(error))
    # the plugin's order (RunResults.documents): by engine, dataset, document id
    entries.sort(key=lambda entry: (entry[1]["engine"], entry[1]["dataset"], entry[1]["id"]))
    return entries, skipped, errors


def _shard_totals(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> tuple[dict[str, int], dict[str, Any]]:
    """The shards' unchecked thresholds summed, and their dataset folders (as the first shard that has each)."""
    unchecked: dict[str, int] = {}
    for _, run in runs:  # each shard counts its own documents (a document is in one shard)
        for metric, count in (run.get("unchecked_thresholds") or {}).items():
            unchecked[metric] = unchecked.get(metric, 0) + int(count)
    datasets: dict[str, Any] = {}
    for _, run in runs:  # each dataset's folder as the first shard that has it recorded it (images are relative)
        for name, entry in (run.get("datasets") or {}).items():
            datasets.setdefault(str(name), dict(entry))
    return unchecked, datasets


def _bootstrap(run: Mapping[str, Any]) -> dict[str, int]:
    entry = run.get("bootstrap") or DEFAULT_BOOTSTRAP
    return {"seed": int(entry["seed"]), "resamples": int(entry["resamples"])}


def _bootstrap_text(bootstrap: Mapping[str, int]) -> str:
    return f"--ocr-seed={bootstrap['seed']} --ocr-bootstrap={bootstrap['resamples']}"


def _merged_engines(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """Every engine's identity; the same engine label with another identity in two files is refused."""
    engines: dict[str, Any] = {}
    source: dict[str, str] = {}
    for name, run in runs:
        for label, identity in ((run.get("environment") or {}).get("engines") or {}).items():
            if label in engines and engines[label] != identity:
                raise MergeError(f"engine {label!r} is not the same in {source[label]} and {name} "
                                 f"({_identity_difference(engines[label], identity)}); run every shard with the same "
                                 f"engine version, model and settings")
            engines.setdefault(label, identity)
            source.setdefault(label, name)
    return engines


def _check_engine_lists(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
    """The ``--ocr-shard`` files that scored documents ran the same engines (their ``environment.engines``).

    Every engine of a document runs in the document's shard, so a shard that scored documents without an engine
    another shard ran was run with another ``--ocr-engine`` list, or without that engine installed: the merged rows
    of that engine would be gated on part of the documents. A shard that scored nothing (an empty shard, every page
    unreadable) creates no engine and records none, so it is not compared. Node-level splits (no ``shard`` entry)
    put an engine's tests where they like: their files are not compared either.
    """
    listed: list[tuple[str, set[str]]] = [
        (name, {str(label) for label in ((run.get("environment") or {}).get("engines") or {})})
        for name, run in runs
        if run.get("shard") and any(doc.get("outcome") in SCORED_OUTCOMES for doc in _documents(run))]
    for name, engines in listed:
        for other, other_engines in listed:
            missing = sorted(other_engines - engines)
            if missing:
                raise MergeError(f"{name} scored documents but did not run engine {missing[0]!r} (not in its "
                                 f"environment.engines), which {other} ran: every engine of a document runs in the "
                                 f"document's shard, so that engine's rows would be gated on part of the documents; "
                                 f"run every shard with the same --ocr-engine list, each engine installed on every "
                                 f"machine")


def _check_counts(name: str, run: Mapping[str, Any]) -> None:
    """Every document's counts are what a run writes (:func:`~pytest_ocrmetrics.runfile.merge_index.counts_problem`):
    none negative (a negative error count makes the merged micro average smaller, even negative, and a gate pass), and
    a scored micro-averaged metric with its numerator and denominator (the summary sums them; without them it cannot
    be computed)."""
    if getattr(run["documents"], "counts_checked", False):  # read from a merge index: checked entry by entry
        return
    for doc in _documents(run):
        problem = counts_problem(doc.get("metrics"), doc.get("counts") or {}, doc.get("outcome"))
        if problem is None:
            continue
        kind, where, value = problem
        if kind == "negative":
            raise MergeError(f"{name}: document {doc['id']!r} ({doc['engine']} / {doc['dataset']}) has the "
                             f"negative count {value!r} at counts/{where}, which no run writes (the merged micro "
                             f"average would be wrong, even negative); write that shard's run file again with "
                             f"pytest --ocr-json=PATH")
        raise MergeError(f"{name}: document {doc['id']!r} ({doc['engine']} / {doc['dataset']}) has {where} without "
                         f"its counts ({' and '.join(f'counts/{where}/{key}' for key in value)} missing): the merged "
                         f"micro average sums them over the documents; write that shard's run file again with pytest "
                         f"--ocr-json=PATH")


def _identity_difference(old: Any, new: Any) -> str:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(old) | set(new), key=str):
            if old.get(key) != new.get(key):
                return f"{key} {old.get(key)!r} against {new.get(key)!r}"
    return f"{old!r} against {new!r}"


def _check_shards(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
    """The ``--ocr-shard`` files among ``runs`` are the shards of one split: one count, each index once, none
    missing (a missing shard would let the gates pass on part of the documents)."""
    shards = [(name, run["shard"]) for name, run in runs if run.get("shard")]
    if not shards:
        return
    count_name, count_shard = shards[0]
    count = int(count_shard["count"])
    seen: dict[int, str] = {}
    for name, shard in shards:
        if int(shard["count"]) != count:
            raise MergeError(f"{count_name} is shard {count_shard['index']}/{count} but {name} is shard "
                             f"{shard['index']}/{shard['count']}: merge the run files of one split (the same N in "
                             f"every --ocr-shard=K/N)")
        index = int(shard["index"])
        if index in seen:
            raise MergeError(f"{seen[index]} and {name} are both shard {index}/{count}: give each shard's run file once")
        seen[index] = name
    missing = [index for index in range(1, count + 1) if index not in seen]
    if missing:
        names = ", ".join(f"{index}/{count}" for index in missing)
        given = ", ".join(f"{seen[i]} ({i}/{count})" for i in sorted(seen))
        raise MergeError(f"{'shard' if len(missing) == 1 else 'shards'} {names} "
                         f"{'is' if len(missing) == 1 else 'are'} missing (given: {given}"
                         f"); give the run file of every shard, an empty shard writes one too")
