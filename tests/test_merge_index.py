"""A shard's merge index (``runfile/merge_index.py``): what ``ocrmetrics merge`` reads of each document, written after
the documents with a digest of the document lines, so that the merge copies the lines without decoding them.

The oracle is the merge of the shards read in full (``load_run``): the merged run file must be that text byte for
byte (``created`` aside), and the summary that of the lines, whatever was changed in the file after it was written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from ocr_run_factory import make_doc, make_run

from pytest_ocrmetrics.cli import main
from pytest_ocrmetrics.core.safe_text import sanitize_run, write_lines_atomic
from pytest_ocrmetrics.reporting.files import dump_run, run_lines
from pytest_ocrmetrics.runfile import verbatim
from pytest_ocrmetrics.runfile.merge import merge_runs
from pytest_ocrmetrics.runfile.merge_index import INDEX_KEY, indexed_parts, merge_entry
from pytest_ocrmetrics.runfile.read import RunFileError, load_run, load_shard, validate_run
from pytest_ocrmetrics.runfile.results import RunResults
from pytest_ocrmetrics.runfile.verbatim import VerbatimDocuments, documents_placeholder


def _documents(n: int = 8) -> list[dict[str, Any]]:
    docs = []
    for i in range(n):
        doc = make_doc(f"doc_{i:03}.png", {"cer": round(0.03 * i, 4), "wer": round(0.05 * i, 4), "ned": 0.01 * i},
                       outcome="passed" if i % 3 else "failed", size=40 + i, reference=f"TOTAL {i}.50 é",
                       hypothesis=f"TOTAL {i}.S0 京", confusions=[("5", "S", 1), ("\n", " ", i + 1)])
        doc["truncated"] = i == 5
        doc["details"] = {}
        if i % 2:
            doc["tags"] = ["receipt", f"batch-{i % 3}"]
        doc["tests"] = [doc.pop("nodeid")]
        docs.append(doc)
    return docs


def _shard(documents: list[dict[str, Any]], index: int = 1, count: int = 1) -> dict[str, Any]:
    run = make_run(documents)
    run["shard"] = {"index": index, "count": count}
    run["bootstrap"] = {"seed": 3, "resamples": 200}
    return run


def _write(path: Path, run: dict[str, Any]) -> str:
    write_lines_atomic(path, run_lines(sanitize_run(run)))
    return str(path)


def _without_created(text: str) -> str:
    return re.sub(r'^"created": "[^"]*",$', '"created": "",', text, count=1, flags=re.M)


def _merged_in_full(paths: list[str]) -> str:
    return _without_created(dump_run(sanitize_run(merge_runs([(repr(p), load_run(p, schema=False)) for p in paths]))))


def _merged(paths: list[str], out: Path) -> str:
    assert main(["merge", *paths, "-o", str(out)]) == 0
    return _without_created(out.read_text(encoding="utf-8"))


@pytest.fixture
def no_line_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line checked and decoded as text fails the test: every document must come from the index."""
    def refused(line: str) -> None:
        raise AssertionError(f"a line was decoded: {line[:40]}")

    monkeypatch.setattr(verbatim, "_document_head", refused)


def test_a_shard_file_ends_with_its_index_and_a_run_file_without_a_shard_has_none(tmp_path: Path) -> None:
    documents = _documents()
    text = Path(_write(tmp_path / "shard.json", _shard(documents))).read_text(encoding="utf-8")
    assert text.endswith('"}}\n') and f',\n"{INDEX_KEY}": {{"documents": [\n' in text
    assert json.loads(text)[INDEX_KEY]["documents"] == [merge_entry(doc) for doc in documents]
    assert INDEX_KEY not in dump_run(make_run(documents))  # the goldens' run files: no index
    stale = {**_shard(documents[:2]), INDEX_KEY: {"documents": [None], "sha256": "0" * 64}}
    assert json.loads(dump_run(stale))[INDEX_KEY]["documents"] == [merge_entry(doc) for doc in documents[:2]]
    assert INDEX_KEY not in dump_run({k: v for k, v in stale.items() if k != "shard"})


def test_the_index_is_read_instead_of_the_lines_and_the_merged_file_is_the_same(
        tmp_path: Path, no_line_decoded: None) -> None:
    documents = _documents(12)
    paths = [_write(tmp_path / f"s{k}.json", _shard(documents[k - 1::3], k, 3)) for k in (1, 2, 3)]
    shards = [load_shard(path) for path in paths]
    assert all(isinstance(shard["documents"], VerbatimDocuments) for shard in shards)
    assert [head for shard in shards for head in shard["documents"].heads()] == [
        merge_entry(doc) for k in (1, 2, 3) for doc in load_run(paths[k - 1], schema=False)["documents"]]
    assert all(INDEX_KEY not in shard for shard in shards)
    assert _merged(paths, tmp_path / "run.json") == _merged_in_full(paths)
    # the lines are kept as their bytes: the whole text (dump_run) decodes them, the documents are the lines
    merged = merge_runs([(repr(path), shard) for path, shard in zip(paths, shards)])
    assert any(isinstance(text, bytes) for text, _ in merged["documents"].entries)
    assert _without_created(dump_run(sanitize_run(merged))) == _merged_in_full(paths)
    assert list(shards[0]["documents"]) == load_run(paths[0], schema=False)["documents"]


def test_a_line_the_file_writer_cleans_does_not_match_and_is_read_as_before(tmp_path: Path) -> None:
    """A run written without its sanitising pass, holding a lone surrogate: the file writer replaces it, after the
    digest was taken of the text as it was; the file does not match its index, and is read as before."""
    documents = _documents(4)
    documents[1]["reference"] = "TOTAL \ud800 1.50"
    path = tmp_path / "shard.json"
    write_lines_atomic(path, run_lines(_shard(documents)))  # (not sanitised first, as the plugin does)
    assert "\ufffd" in path.read_text(encoding="utf-8")
    assert indexed_parts(path.read_bytes(), json.dumps(documents_placeholder())) is None
    assert _merged([str(path)], tmp_path / "run.json") == _merged_in_full([str(path)])


def _edited(path: str, old: str, new: str, *, after: str = "") -> None:
    text = Path(path).read_text(encoding="utf-8")
    at = text.index(after)
    assert old in text[at:]
    Path(path).write_text(text[:at] + text[at:].replace(old, new, 1), encoding="utf-8")


def test_a_line_changed_after_writing_is_read_from_the_line(tmp_path: Path) -> None:
    """A value changed by hand in a line, written as the writer writes it: only the digest tells. The merge reads
    that line (and its shard) as before, so the summary has the new value, not the index's."""
    documents = _documents()
    path = _write(tmp_path / "shard.json", _shard(documents))
    before = merge_runs([("s", load_shard(path))])["summary"][0]["metrics"]["ned"]["mean"]
    _edited(path, '"ned": 0.01}', '"ned": 0.91}', after='{"id": "doc_001.png"')
    shard = load_shard(path)
    assert shard["documents"].heads()[1]["metrics"]["ned"] == 0.91  # from the line: checked as text, decoded
    merged = merge_runs([("s", shard)])["summary"][0]["metrics"]["ned"]["mean"]
    assert merged == pytest.approx(before + 0.9 / len(documents))
    assert _merged([path], tmp_path / "run.json") == _merged_in_full([path])


@pytest.mark.parametrize(("old", "new", "after"), [
    ('"ned": 0.01}', '"ned": 0.91}', f'"{INDEX_KEY}"'),  # an entry changed
    ('"outcome": "passed"', '"outcome": "failed"', f'"{INDEX_KEY}"'),
    ('"sha256": "', '"sha256": "0', f'"{INDEX_KEY}"'),  # the digest itself
    ('{"id": "doc_002.png"', '{"id": "doc_002.png", "x": 1', f'"{INDEX_KEY}"'),
    ('"shard": {', '"shard": {"note": "é", ', ""),  # outside what the digest covers: still read from the index
    ('"cer": 0.06, ', '"cer": 0.06,', '{"id": "doc_002.png"'),  # another separator in a line
])
def test_an_index_that_does_not_match_is_not_read(old: str, new: str, after: str, tmp_path: Path) -> None:
    documents = _documents()
    path = _write(tmp_path / "shard.json", _shard(documents))
    _edited(path, old, new, after=after)
    kept = indexed_parts(Path(path).read_bytes(), json.dumps(documents_placeholder()))
    assert (kept is not None) is (old == '"shard": {')
    shard = load_shard(path)
    assert isinstance(shard["documents"], VerbatimDocuments) is (old != '"cer": 0.06, ') and INDEX_KEY not in shard
    assert merge_runs([("s", shard)])["summary"] == merge_runs([("s", load_run(path, schema=False))])["summary"]
    assert _merged([path], tmp_path / "run.json") == _merged_in_full([path])


@pytest.mark.parametrize("cut", ["the digest", "the whole index", "the last line"])
def test_a_cut_file_is_read_as_before(cut: str, tmp_path: Path) -> None:
    path = _write(tmp_path / "shard.json", _shard(_documents()))
    text = Path(path).read_text(encoding="utf-8")
    if cut == "the digest":
        text = text[:text.rindex(', "sha256"')] + "}}\n"
    elif cut == "the whole index":
        text = text[:text.rindex(f',\n"{INDEX_KEY}"')] + "}\n"
    else:
        Path(path).write_text(text[:-30], encoding="utf-8")
        with pytest.raises(RunFileError, match="is not valid JSON") as shard:
            load_shard(path)
        with pytest.raises(RunFileError) as full:
            load_run(path, schema=False)
        assert str(shard.value) == str(full.value)
        return
    Path(path).write_text(text, encoding="utf-8")
    assert isinstance(load_shard(path)["documents"], VerbatimDocuments)
    assert _merged([path], tmp_path / "run.json") == _merged_in_full([path])


@pytest.mark.parametrize("odd", ["facts", "replaced_characters", "negative count", "string metric", "cached null",
                                 "tags not a list", "micro metric without its counts", "no documents"])
def test_documents_the_index_cannot_describe_are_read_from_their_lines(odd: str, tmp_path: Path) -> None:
    """Their entry is null: the merge checks and decodes their line, and refuses or merges it as before."""
    documents = _documents(6)
    run = _shard(documents)  # its summary from the documents as made: what is odd comes after
    doc = run["documents"][2]
    refused = {"negative count": "negative count -3", "string metric": "is not of type 'number'",
               "cached null": "is not of type 'boolean'", "tags not a list": "is not of type 'array'",
               "micro metric without its counts": "has cer without its counts"}
    if odd == "facts":
        doc["details"] = {"facts": [{"id": "f1", "type": "present", "passed": True, "text": "TOTAL"}]}
    elif odd == "replaced_characters":
        doc["replaced_characters"] = 2
    elif odd == "negative count":
        doc["counts"]["cer"]["errors"] = -3
    elif odd == "string metric":
        doc["metrics"]["ned"] = "0.5"
    elif odd == "cached null":
        doc["cached"] = None
    elif odd == "tags not a list":
        doc["tags"] = "receipt"
    elif odd == "micro metric without its counts":
        del doc["counts"]["cer"]
    elif odd == "no documents":
        run = _shard([])
    path = _write(tmp_path / "shard.json", run)
    entries = json.loads(Path(path).read_text(encoding="utf-8"))[INDEX_KEY]["documents"]
    # a micro metric without its counts has its entry, refused there as it is from the line
    kept = odd == "micro metric without its counts"
    assert entries == [None if i == 2 and not kept else merge_entry(d) for i, d in enumerate(run["documents"])]
    if odd in refused:
        with pytest.raises(Exception) as shard:
            merge_runs([("s", load_shard(path))])
        with pytest.raises(Exception) as full:
            merge_runs([("s", load_run(path, schema=False))])
        assert str(shard.value) == str(full.value) and refused[odd] in str(full.value)
        return
    assert isinstance(load_shard(path)["documents"], VerbatimDocuments)
    assert _merged([path], tmp_path / "run.json") == _merged_in_full([path])


def test_an_indexed_shard_is_a_valid_run_file_for_every_reader(tmp_path: Path) -> None:
    """The full schema (``--validate``), ``load_run`` and ``compare`` read a shard file with its index."""
    path = _write(tmp_path / "shard.json", _shard(_documents()))
    run = load_run(path)  # the full JSON schema
    assert validate_run(run) is run and len(run[INDEX_KEY]["documents"]) == len(run["documents"])
    assert main(["compare", path, path]) == 0
    out = tmp_path / "validated.json"
    assert main(["merge", path, "-o", str(out), "--validate"]) == 0
    assert _without_created(out.read_text(encoding="utf-8")) == _merged([path], tmp_path / "run.json")


def _record(doc_id: str, test: str, **extra: Any) -> dict[str, Any]:
    record = make_doc(doc_id, {"cer": 0.1, "wer": 0.2, "ned": 0.05, "exact_match": 0.0}, size=50)
    record["counts"]["exact_match"] = {"matches": 0, "documents": 1}
    record["truncated"] = False
    record["details"] = {}
    record["nodeid"] = test
    record["checks"] = []
    record.update(extra)
    return record


def test_the_plugin_s_spooled_documents_give_the_entries_of_their_documents(tmp_path: Path) -> None:
    """The plugin's documents (spooled) make each entry from what it kept of the record: the same entry as from the
    document itself, for every kind of record; and its shard file is read from the index."""
    results = RunResults(seed=3)
    results.add(_record("a.png", "t::a"), "passed")
    results.add(_record("b.png", "t::b", tags=["x", "y"]), "failed", "cer too high")
    results.add(_record("c.png", "t::c", cached=True, truncated=True), "passed")
    results.add(_record("d.png", "t::d1"), "passed")  # two tests on one document: merged
    results.add(_record("d.png", "t::d2", tags=["z"]), "failed", "no")
    results.add(_record("e.png", "t::e", details={"facts": [{"id": "f", "type": "present", "passed": True}]}), "passed")
    results.add(_record("f.png", "t::f", replaced_characters=1), "passed")
    results.add({**_record("g.png", "t::g"), "metrics": {}, "counts": {}}, "error", "engine failed")
    documents = results.documents()
    assert list(documents.merge_entries()) == [merge_entry(doc) for doc in documents]
    assert [entry is None for entry in documents.merge_entries()] == [
        False, False, False, False, True, True, False]  # the merged document's from itself; facts; replaced
    odd = RunResults()  # null where a list or an object belongs (no run file holds it: the merge refuses it)
    odd.add(_record("h.png", "t::h", tags=None), "passed")
    odd.add(_record("i.png", "t::i", details=None), "passed")
    assert list(odd.documents().merge_entries()) == [None, None] == [merge_entry(d) for d in odd.documents()]
    run = results.to_run(plugin_version="0", pytest_version="0", shard={"index": 1, "count": 1},
                         bootstrap={"seed": 3, "resamples": 100})
    path = _write(tmp_path / "shard.json", run)
    assert indexed_parts(Path(path).read_bytes(), json.dumps(documents_placeholder())) is not None
    assert isinstance(load_shard(path)["documents"], VerbatimDocuments)
    assert _merged([path], tmp_path / "run.json") == _merged_in_full([path])


def _with_digest_recomputed(path: str) -> None:
    """The file's digest made to match what it now holds (what no edit by hand does)."""
    import hashlib

    data = Path(path).read_bytes()
    start = data.index(b'\n"documents": [') + len(b'\n"documents": [')
    end = data.rindex(b'], "sha256": "') + 1
    digest = hashlib.sha256(data[start:end]).hexdigest().encode("ascii")
    Path(path).write_bytes(data[:end + len(b', "sha256": "')] + digest + b'"}}\n')


@pytest.mark.parametrize(("old", "new"), [
    ('"ned": 0.01}', '"ned": "0.01"}'),  # a value of another type
    ('"outcome": "passed"', '"outcome": "maybe"'),
    ('"truncated": false', '"truncated": null'),
    ('"cached": false', '"cached": false, "x": 1'),  # a key no entry has
    ('{"id": "doc_001.png"', '7, {"id": "doc_001.png"'),  # an entry that is no object
    ('"metrics": {"cer": 0.03,', '"metrics": {"cer": NaN,'),  # refused by every reader, as before
    ('"metrics": {"cer": 0.03,', '"metrics": {"cer": 1e999,'),  # infinity
    ('"tags": ["receipt", "batch-1"]}\n]', '"tags": ["receipt", "batch-1"]},\nnull\n]'),  # one entry too many
])
def test_an_index_of_the_wrong_shape_is_not_read_even_with_its_digest_recomputed(
        old: str, new: str, tmp_path: Path) -> None:
    """Hostile: an index changed and its digest recomputed to match. An entry that is not what ``merge_entry``
    makes, or an index that does not have one entry per line, is not read: the file is read as before."""
    path = _write(tmp_path / "shard.json", _shard(_documents()))
    _edited(path, old, new, after=f'"{INDEX_KEY}"')
    _with_digest_recomputed(path)
    parts = indexed_parts(Path(path).read_bytes(), json.dumps(documents_placeholder()))
    assert (parts is None) is (new.endswith("null\n]"))  # the lines counted by the entries: not there
    if "NaN" in new or "1e999" in new:
        with pytest.raises(RunFileError) as shard_error:
            load_shard(path)
        with pytest.raises(RunFileError) as full:
            load_run(path, schema=False)
        assert str(shard_error.value) == str(full.value) and " at merge_index/documents/1/" in str(full.value)
        return
    shard = load_shard(path)
    assert isinstance(shard["documents"], VerbatimDocuments)
    assert all("elapsed_s" in head for head in shard["documents"].heads())  # every line read as text, not indexed
    assert _merged([path], tmp_path / "run.json") == _merged_in_full([path])


def test_the_merge_does_not_check_again_the_counts_of_an_index_that_matched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each entry of a matching index had its counts checked as the merge checks every document (none negative, both
    counts of a micro-averaged metric): the merge's own pass over the documents is skipped for that shard."""
    from pytest_ocrmetrics.runfile import merge

    path = _write(tmp_path / "shard.json", _shard(_documents()))
    assert load_shard(path)["documents"].counts_checked
    expected = _merged_in_full([path])
    monkeypatch.setattr(merge, "counts_problem", lambda *args: pytest.fail("the counts were checked again"))
    assert _merged([path], tmp_path / "run.json") == expected


@pytest.mark.parametrize(("old", "new"), [
    ('"errors": 1.23, "reference_length": 41.0', '"errors": -1.23, "reference_length": 41.0'),  # negative
    ('"errors": 1.23, "reference_length": 41.0', '"reference_length": 41.0'),  # a micro count missing
])
def test_an_entry_whose_counts_the_merge_would_refuse_is_not_trusted(old: str, new: str, tmp_path: Path) -> None:
    """Hostile: an entry with a negative count, or without a micro-averaged metric's counts, its digest recomputed:
    the index is not read (nor its counts taken as checked); the lines, which are fine, are, as a full reading does."""
    path = _write(tmp_path / "shard.json", _shard(_documents()))
    _edited(path, old, new, after=f'"{INDEX_KEY}"')
    _with_digest_recomputed(path)
    shard = load_shard(path)
    assert isinstance(shard["documents"], VerbatimDocuments) and not shard["documents"].counts_checked
    assert all("elapsed_s" in head for head in shard["documents"].heads())  # read from the lines
    assert _merged([path], tmp_path / "run.json") == _merged_in_full([path])


# --- the whole index checked at once (read._plain_entries) decides as entry by entry (read._plain_entry) -----------

_VALID_ENTRIES = [
    {"id": "a.png", "dataset": "d", "engine": "e", "outcome": "passed", "metrics": {"cer": 0.25, "wer": 0.5},
     "counts": {"cer": {"errors": 1, "reference_length": 4}, "wer": {"errors": 1, "reference_length": 2}}},
    {"id": "b.png", "dataset": "d", "engine": "e", "outcome": "failed", "metrics": {"cer": 1, "exact_match": 0.0},
     "counts": {"cer": {"errors": 4, "reference_length": 4.0}, "exact_match": {"matches": 0, "documents": 1}},
     "cached": True, "tags": ["receipt", "blur"]},
    {"id": "c.png", "dataset": "d", "engine": "e", "outcome": "skipped", "metrics": {"cer": 0.5}, "counts": {},
     "truncated": False},
    {"id": "d.png", "dataset": "d", "engine": "e", "outcome": "error", "metrics": {}, "counts": {}},
]


_ODD_VALUES = [float("nan"), float("inf"), -1, -0.5, True, "1", None, [1], {"x": 1}, 1e308, 1.5e308, -1e308, 2, 0]
_PATHS = ["id", "outcome", "metrics", "counts", "cached", "tags", "extra", "metrics.cer", "metrics.wer", "counts.cer",
          "counts.cer.errors", "counts.cer.reference_length", "counts.wer", "tags.0", "drop.cer.count", "drop.key"]


def _perturbations() -> Any:
    from hypothesis import strategies as st

    return st.lists(st.tuples(st.integers(0, len(_VALID_ENTRIES) - 1), st.sampled_from(_PATHS),
                              st.sampled_from(_ODD_VALUES)), max_size=3)


def _perturbed(changes: list[tuple[int, str, Any]]) -> list[Any]:
    """The valid entries with each change applied where its container still is one (a change inside a value another
    change replaced is left out)."""
    import copy

    entries: list[Any] = copy.deepcopy(_VALID_ENTRIES)
    for position, where, value in changes:
        entry = entries[position]
        metrics, counts = entry.get("metrics"), entry.get("counts")
        cer = counts.get("cer") if isinstance(counts, dict) else None
        if where == "drop.key":
            entry.pop("outcome", None)
        elif where == "drop.cer.count":
            if isinstance(cer, dict):
                cer.pop("reference_length", None)
        elif where in ("metrics.cer", "metrics.wer"):
            if isinstance(metrics, dict):
                metrics[where.split(".")[1]] = value
        elif where in ("counts.cer.errors", "counts.cer.reference_length"):
            if isinstance(cer, dict):
                cer[where.split(".")[2]] = value
        elif where in ("counts.cer", "counts.wer"):
            if isinstance(counts, dict):
                counts[where.split(".")[1]] = value
        elif where == "tags.0":
            entry["tags"] = [value] if not isinstance(entry.get("tags"), list) else [value, *entry["tags"][1:]]
        else:
            entry[where] = value
    return entries


def test_the_whole_index_is_plain_when_each_entry_is() -> None:
    from pytest_ocrmetrics.runfile.read import _plain_entries, _plain_entry

    assert all(map(_plain_entry, _VALID_ENTRIES)) and _plain_entries(_VALID_ENTRIES)
    assert not _plain_entries([]) and not _plain_entries([None])


def _agrees(entries: list[Any]) -> bool:
    """The whole-index check accepts only what every entry's check accepts, and refuses what they all accept only
    for a number too big to be summed safely."""
    from pytest_ocrmetrics.runfile.read import _plain_entries, _plain_entry

    if _plain_entries(entries):
        return all(map(_plain_entry, entries))
    return not all(map(_plain_entry, entries)) or any(
        isinstance(v, float) and abs(v) > 1e300 for e in entries if isinstance(e, dict) for v in _numbers(e))


def test_each_single_change_to_an_entry_is_judged_as_entry_by_entry() -> None:
    changes = [(position, where, value) for position in range(len(_VALID_ENTRIES)) for where in _PATHS
               for value in _ODD_VALUES]
    wrong = [change for change in changes if not _agrees(_perturbed([change]))]
    assert wrong == []


def test_the_whole_index_check_never_accepts_what_an_entry_check_refuses() -> None:
    from hypothesis import given, settings

    @settings(max_examples=300, deadline=None)
    @given(_perturbations())
    def check(changes: list[tuple[int, str, Any]]) -> None:
        assert _agrees(_perturbed(changes))

    check()


def _numbers(entry: dict[str, Any]) -> list[Any]:
    found = list((entry.get("metrics") or {}).values()) if isinstance(entry.get("metrics"), dict) else []
    for numbers in (entry.get("counts") or {}).values() if isinstance(entry.get("counts"), dict) else ():
        found += list(numbers.values()) if isinstance(numbers, dict) else []
    return found


def test_a_shard_read_from_its_index_refuses_the_same_entries_as_before(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # the plugin's index is checked at once (no entry by entry); one entry edited by hand to a negative count: the
    # whole-index check says no, the entries are checked one by one, the index is not used, and the merge reads the
    # line and refuses it as before
    from pytest_ocrmetrics.runfile import read

    run = make_run(_documents(4))
    path = tmp_path / "shard.json"
    write_lines_atomic(path, run_lines(sanitize_run({**run, "shard": {"index": 1, "count": 1}})))
    with monkeypatch.context() as patched:
        patched.setattr(read, "_plain_entry", lambda entry: pytest.fail("checked entry by entry"))
        assert load_shard(path)["documents"].counts_checked
    text = path.read_text(encoding="utf-8")
    edited = re.sub(r'("merge_index".*?"errors": )(\d+)', r"\g<1>-\2", text, count=1, flags=re.S)
    assert edited != text
    path.write_text(edited, encoding="utf-8")
    documents = load_shard(path)["documents"]
    assert not getattr(documents, "counts_checked", False)
