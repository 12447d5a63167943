"""``ocrmetrics merge`` copying the shards' document lines (``runfile/verbatim.py``, ``runfile/merge_index.py``,
``read.load_shard``).

The oracle is the merge as it was before: every shard decoded in full (``load_run``), merged and sanitised, every
document encoded again. The merged run file must be that text byte for byte (``created`` aside) whether a shard's
documents were copied as text or not, and a line the run-file writer would write differently must not be copied.
Every test runs on shard files written with their merge index (the lines read from the index when its digest
matches, else checked as text) and as they were written before it (each line checked as text).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from ocr_run_factory import make_doc, make_run

from pytest_ocrmetrics.cli import main
from pytest_ocrmetrics.core.safe_text import sanitize_run, write_lines_atomic
from pytest_ocrmetrics.reporting.files import dump_run, run_lines
from pytest_ocrmetrics.runfile.merge import merge_runs
from pytest_ocrmetrics.runfile.read import RunFileError, load_run, load_shard
from pytest_ocrmetrics.runfile.sharding import shard_index
from pytest_ocrmetrics.runfile.verbatim import VerbatimDocuments

# confusion pairs and texts with every kind of character the writer escapes, or writes raw, or a report replaces
ODD = ['"', "\\", "\n", "\t", "\r", "\b", "\f", "\x1b", "\x00", "\x7f", "é", "京", "\u2028", "\u202e", "😀", "", " "]


def _documents(n: int = 12) -> list[dict[str, Any]]:
    docs = []
    for i in range(n):
        doc = make_doc(f"doc_{i:03}.png", {"cer": round(0.01 * i, 4), "wer": round(0.02 * i, 4)},
                       outcome="passed" if i % 3 else "failed", size=40 + i,
                       reference=f"TOTAL {i}.50\n{ODD[i % len(ODD)]} line \"two\" \\ end",
                       hypothesis=f"TOTAL {i}.S0\t{ODD[(i + 3) % len(ODD)]}",
                       confusions=[(ODD[i % len(ODD)], ODD[(i + 1) % len(ODD)], i + 1), ("5", "S", 1)],
                       message="cer 0.5 > 0.3" if i % 3 == 0 else None)
        doc["details"] = {"note": f"détail {i}"} if i % 4 == 0 else {}
        doc["tests"] = [doc.pop("nodeid")]
        docs.append(doc)
    return docs


@pytest.fixture(autouse=True, params=["with the merge index", "before the merge index"])
def plugin_writer(request: pytest.FixtureRequest) -> Iterator[None]:
    """How :func:`_as_the_plugin_writes` writes a shard's run file in this test: as now, or as before the index."""
    _WRITER[0] = _with_index if request.param == "with the merge index" else _as_before_the_index
    yield
    _WRITER[0] = _with_index


def _write_shards(folder: Path, documents: list[dict[str, Any]], count: int = 3,
                  write: Callable[[Path, dict[str, Any]], None] | None = None) -> list[str]:
    """The shards' run files, written as ``pytest --ocr-shard=K/count --ocr-json`` writes them (``run_lines``)."""
    paths = []
    for k in range(1, count + 1):
        run = make_run([d for d in documents if shard_index(d["dataset"], d["id"], count) == k])
        run["shard"] = {"index": k, "count": count}
        run["bootstrap"] = {"seed": 0, "resamples": 200}
        path = folder / f"shard-{k}.json"
        (write or _as_the_plugin_writes)(path, run)
        paths.append(str(path))
    return paths


def _as_the_plugin_writes(path: Path, run: dict[str, Any]) -> None:
    """As the plugin writes a run file (with its merge index when it is a shard's), or as it did before the index
    (the test's ``plugin_writer``)."""
    _WRITER[0](path, run)


def _with_index(path: Path, run: dict[str, Any]) -> None:
    write_lines_atomic(path, run_lines(sanitize_run(run)))


def _as_before_the_index(path: Path, run: dict[str, Any]) -> None:
    """As the plugin wrote a shard's run file before its merge index (``runfile/merge_index.py``): each line is
    checked as text (``runfile/verbatim.py``)."""
    _with_index(path, run)
    if "shard" not in run:
        return
    text = path.read_text(encoding="utf-8")
    cut = text.rindex(',\n"merge_index": {')
    path.write_text(text[:cut] + "}\n", encoding="utf-8")


_WRITER: list[Callable[[Path, dict[str, Any]], None]] = [_with_index]


def _without_created(text: str) -> str:
    return re.sub(r'^"created": "[^"]*",$', '"created": "",', text, count=1, flags=re.M)


def _merged_as_before(paths: list[str]) -> str:
    """The run file ``ocrmetrics merge`` wrote before documents were copied: every shard decoded in full."""
    run = merge_runs([(repr(path), load_run(path, schema=False)) for path in paths])
    return _without_created(dump_run(sanitize_run(run)))


def _merged(paths: list[str], out: Path) -> str:
    assert main(["merge", *paths, "-o", str(out)]) == 0
    return _without_created(out.read_bytes().decode("utf-8"))


def test_plugin_written_shards_are_copied_and_the_merged_file_is_the_same(tmp_path: Path) -> None:
    paths = _write_shards(tmp_path, _documents())
    shards = [load_shard(path) for path in paths]
    assert all(isinstance(shard["documents"], VerbatimDocuments) for shard in shards)
    assert [shard["documents"] for shard in shards] == [load_run(path, schema=False)["documents"] for path in paths]
    merged = merge_runs([(path, shard) for path, shard in zip(paths, shards)])
    assert isinstance(merged["documents"], VerbatimDocuments)
    assert _merged(paths, tmp_path / "run.json") == _merged_as_before(paths)
    # what the summary read of the copied documents is what it reads of the documents in full
    assert merged["summary"] == merge_runs([(p, load_run(p, schema=False)) for p in paths])["summary"]


def test_documents_beyond_the_bmp_and_empty_shards_still_merge_the_same(tmp_path: Path) -> None:
    documents = _documents(4)
    documents[1]["reference"] = "emoji 😀 and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢"  # not checked as text: decoded with the rest, still copied
    paths = _write_shards(tmp_path, documents, count=6)
    assert any(not load_run(path, schema=False)["documents"] for path in paths)  # an empty shard: read in full
    assert _merged(paths, tmp_path / "run.json") == _merged_as_before(paths)
    assert isinstance(merge_runs([(p, load_shard(p)) for p in paths])["documents"], VerbatimDocuments)


# (what is written, what the line holds instead): each line is JSON the writer would write otherwise
EDITS = {
    "number spelling": ('"elapsed_s": 0.25', '"elapsed_s": 0.250'),
    "exponent": ('"elapsed_s": 0.25', '"elapsed_s": 25e-2'),
    "separator": ('"cached": false', '"cached":false'),
    "space": ('"cached": false', '"cached" : false'),
    "compact confusions": ('["5", "S", 1]', '["5","S",1]'),
    "escaped slash": ("TOTAL 1.50", "TOTAL 1\\/50"),
    "escaped letter": ("TOTAL 1.50", "TOTAL 1.\\u0035"),
    "upper-case escape": ('"', '"'),  # replaced below: \u001B
    "surrogate escape": ('"doc_001.png"', '"doc_001\\ud800.png"'),
    "non-character in a text": ("TOTAL 1.50", "TOTAL 1.50\ufdd0"),
    "non-character in a confusion": ('["5", "S", 1]', '["5\ufffe", "S", 1]'),
    "non-character elsewhere": ('"elapsed_s": 0.25', '"elapsed_s": 0.25, "note": "\U0001fffe"'),
    "a key twice": ('"cached": false', '"cached": false, "cached": true'),
    "leading zero in a text": ("TOTAL 1.50", "TOTAL 01.50"),  # not an edit of the form: still copied
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_line_the_writer_would_write_otherwise_is_not_copied(edit: str, tmp_path: Path) -> None:
    """The merged file is what decoding and encoding every document writes: a line written otherwise (or holding
    what a report replaces, and counts) reads its shard in full; so do surrogates, which the merge replaces."""
    documents = _documents(6)
    if edit == "upper-case escape":
        documents[1]["hypothesis"] = "ESC \x1b here"
    paths = _write_shards(tmp_path, documents, count=1)
    text = Path(paths[0]).read_text(encoding="utf-8")
    lines = text.split("\n")
    index = next(i for i, line in enumerate(lines) if line.startswith('{"id": "doc_001.png"'))
    old, new = EDITS[edit] if edit != "upper-case escape" else ("\\u001b", "\\u001B")
    assert old in lines[index]
    lines[index] = lines[index].replace(old, new, 1)
    Path(paths[0]).write_text("\n".join(lines), encoding="utf-8")
    copied = isinstance(load_shard(paths[0])["documents"], VerbatimDocuments)
    assert copied is (edit == "leading zero in a text")
    assert _merged(paths, tmp_path / "run.json") == _merged_as_before(paths)


def test_a_key_of_the_same_name_inside_another_value_is_not_taken_for_the_document_s(tmp_path: Path) -> None:
    documents = _documents(3)
    for doc in documents:  # details before the texts: its "reference" and "confusions" come first in the line
        details = {"reference": "nested", "confusions": [["n", "m", 1]]}
        rest = {k: v for k, v in doc.items() if k not in ("details",)}
        doc.clear()
        doc.update({"id": rest.pop("id"), "details": details, **rest})
    paths = _write_shards(tmp_path, documents, count=1, write=_as_before_the_index)
    shard = load_shard(paths[0])
    assert isinstance(shard["documents"], VerbatimDocuments)
    assert [head["details"] for head in shard["documents"].heads()] == [
        {"reference": "nested", "confusions": [["n", "m", 1]]}] * 3
    assert list(shard["documents"]) == load_run(paths[0], schema=False)["documents"]
    assert _merged(paths, tmp_path / "run.json") == _merged_as_before(paths)


def test_other_layouts_are_read_in_full_and_mixed_with_copied_shards(tmp_path: Path) -> None:
    documents = _documents(9)
    # a lone surrogate in the shard another writer wrote: the merge replaces it and counts it, as before
    documents[2]["id"] = next(name for name in (f"scan{n}\ud800.png" for n in range(100))
                              if shard_index("receipts", name, 3) == 2)

    def some_as_json_dumps(path: Path, run: dict[str, Any]) -> None:
        if path.name == "shard-2.json":  # one line, ASCII escapes: another writer's layout
            path.write_text(json.dumps(run), encoding="utf-8")
        else:
            _as_the_plugin_writes(path, run)

    paths = _write_shards(tmp_path, documents, count=3, write=some_as_json_dumps)
    kinds = [type(load_shard(path)["documents"]).__name__ for path in paths]
    assert kinds == ["VerbatimDocuments", "list", "VerbatimDocuments"]
    merged = _merged(paths, tmp_path / "run.json")
    assert merged == _merged_as_before(paths)
    assert json.loads(merged)["replaced_characters"] == 1
    # without it, the documents read in full are kept as they are beside the copied ones
    documents[2]["id"] = "scan.png"
    paths = _write_shards(tmp_path, documents, count=3, write=some_as_json_dumps)
    assert isinstance(merge_runs([(p, load_shard(p)) for p in paths])["documents"], VerbatimDocuments)
    assert _merged(paths, tmp_path / "run.json") == _merged_as_before(paths)


def test_a_document_s_own_count_of_replaced_characters_is_kept_as_before(tmp_path: Path) -> None:
    """A shard whose run records no ``replaced_characters`` but whose document does: the merged run counts the
    document's, as the sanitising of a merged list of documents did."""
    documents = _documents(4)
    documents[0]["replaced_characters"] = 2
    paths = _write_shards(tmp_path, documents, count=1)
    assert isinstance(load_shard(paths[0])["documents"], VerbatimDocuments)
    merged = _merged(paths, tmp_path / "run.json")
    assert merged == _merged_as_before(paths)
    assert json.loads(merged)["replaced_characters"] == 2


@pytest.mark.parametrize(("old", "new", "said"), [
    ('"elapsed_s": 0.25', '"elapsed_s": NaN', "holds NaN at documents/0/elapsed_s, in document 'doc_000.png'"),
    ('"elapsed_s": 0.25', '"elapsed_s": 1e999', "holds Infinity at documents/0/elapsed_s"),
    ('"outcome": "passed"', '"outcome": "maybe"', "at documents/1/outcome: \"maybe\" is not one of"),
    ('"cached": false', '"cached": false,', "is not valid JSON"),
    ('"environment": {', '"environment": {"x": NaN, ', "holds NaN at environment/x"),
])
def test_a_plugin_written_shard_with_a_fault_is_refused_with_the_same_sentence(
        old: str, new: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = _write_shards(tmp_path, _documents(6), count=1)
    text = Path(paths[0]).read_text(encoding="utf-8")
    first = 0 if old == '"environment": {' else text.index('{"id": "doc_001.png"' if "outcome" in old
                                                            else '{"id": "doc_000.png"')
    Path(paths[0]).write_text(text[:first] + text[first:].replace(old, new, 1), encoding="utf-8")
    with pytest.raises(RunFileError) as full:
        load_run(paths[0], schema=False)
    with pytest.raises(RunFileError) as shard:
        load_shard(paths[0])
    assert str(shard.value) == str(full.value) and said in str(full.value)
    assert main(["merge", *paths, "-o", str(tmp_path / "run.json")]) == 2
    assert capsys.readouterr().err == f"ocrmetrics merge: error: {full.value}\n"


def test_refusals_read_from_copied_documents_say_the_same(tmp_path: Path) -> None:
    """A document in two shards, other settings, a negative count: refused from what was decoded of the lines,
    with the sentences of a merge of shards read in full."""
    documents = _documents(8)
    paths = _write_shards(tmp_path, documents, count=2)

    def refusal(paths: list[str], read: Callable[[str], dict[str, Any]]) -> str:
        with pytest.raises(Exception) as excinfo:
            merge_runs([(repr(path), read(path)) for path in paths])
        return str(excinfo.value)

    def both(paths: list[str]) -> str:
        assert all(isinstance(load_shard(p)["documents"], VerbatimDocuments) for p in paths)
        said = refusal(paths, load_shard)
        assert said == refusal(paths, lambda path: load_run(path, schema=False))
        return said

    one = load_run(paths[0], schema=False)
    twice = tmp_path / "twice.json"
    _as_the_plugin_writes(twice, {**one, "shard": {"index": 2, "count": 2},
                                  "documents": load_run(paths[1], schema=False)["documents"] + one["documents"][:1]})
    assert "is in both" in both([paths[0], str(twice)])
    other = tmp_path / "other.json"
    _as_the_plugin_writes(other, {**load_run(paths[1], schema=False),
                                  "normalization": {**one["normalization"], "name": "nfc+casefold"}})
    assert "different normalization settings" in both([paths[0], str(other)])
    negative = load_run(paths[1], schema=False)
    negative["documents"][0]["counts"]["cer"]["errors"] = -5
    _as_the_plugin_writes(other, negative)
    assert "negative count -5" in both([paths[0], str(other)])


def test_verbatim_documents_are_a_sequence_of_the_documents(tmp_path: Path) -> None:
    paths = _write_shards(tmp_path, _documents(5), count=1)
    documents = load_shard(paths[0])["documents"]
    full = load_run(paths[0], schema=False)["documents"]
    assert isinstance(documents, VerbatimDocuments)
    assert len(documents) == 5 and documents[1] == full[1] and documents[1:3] == full[1:3] and list(documents) == full
    assert documents == full and documents != full[:4] and repr(documents) == "VerbatimDocuments(5 documents)"
    documents[0]["id"] = "changed"  # each access decodes afresh: the documents cannot be changed through it
    assert documents[0]["id"] == "doc_000.png"
    assert all("confusions" not in head and "reference" not in head for head in documents.heads())
    texts = documents.json_texts(lambda document: "unused")  # the lines of a shard whose merge index matched: bytes
    assert [text if isinstance(text, str) else text.decode("utf-8") for text in texts] == [
        json.dumps(document, ensure_ascii=False) for document in full]


@pytest.mark.parametrize(("text", "lines"), [
    ('{"x": 1,\n"documents": [\n{"a": 1},\n{"b": "c,\\nd"}\n],\n"facts": []}\n', ['{"a": 1}', '{"b": "c,\\nd"}']),
    ('{"x": 1,\n"documents": [\n{"a": 1}\n]}\n', ['{"a": 1}']),
    ('{"x": 1\n"documents": [\n{"a": 1},\n{"b": 2}\n]}\n', ['{"a": 1}', '{"b": 2}']),  # not after ",\n"
    ('{"x": 1,\n"documents": [\n{"a": 1},\n]}\n', ['{"a": 1},']),  # a trailing comma: that line is not JSON
    ('{"x": 1,\n"documents": [\n{"a":\n1}\n]}\n', None),  # a document over two lines
    ('{"x": 1,\n"documents": [{"a": 1}]}\n', None),  # not one document per line
    ('{"documents": [\n{"a": 1}\n]}\n', None),
])
def test_split_documents_takes_one_document_per_line(text: str, lines: list[str] | None) -> None:
    from pytest_ocrmetrics.runfile.verbatim import documents_placeholder, split_documents

    split = split_documents(text)
    assert (split and split[1]) == lines
    if split is not None:  # the rest of the file, the array replaced by the placeholder
        array = "[\n" + ",\n".join(split[1]) + "\n]"
        assert split[0].replace(json.dumps(documents_placeholder()), array) == text


def test_a_file_that_is_not_json_after_all_says_so_as_before(tmp_path: Path) -> None:
    path = tmp_path / "shard.json"
    run = make_run(_documents(2))
    path.write_text(dump_run(run).replace("\n]", ",\n]", 1), encoding="utf-8")  # a trailing comma in "summary"
    for text in (path.read_text(encoding="utf-8"), dump_run(run).replace("}\n]", "},\n]")):  # or in "documents"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(RunFileError) as full:
            load_run(path, schema=False)
        with pytest.raises(RunFileError) as shard:
            load_shard(path)
        assert str(shard.value) == str(full.value) and "is not valid JSON" in str(full.value)


def test_reports_gates_and_a_baseline_on_copied_documents_are_those_of_the_full_reading(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--validate`` reads every shard in full (the schema needs the documents): the same command with and without
    it writes the same run file (its baseline comparison included), CSV and Markdown, and says the same."""
    documents = _documents(10)
    paths = _write_shards(tmp_path, documents, count=2)
    base = tmp_path / "base.json"
    worse = [{**doc, "metrics": {**doc["metrics"], "cer": doc["metrics"]["cer"] + 0.1}} for doc in documents]
    _as_the_plugin_writes(base, make_run(worse))
    outputs = {}
    for mode in ("copied", "validated"):
        out = tmp_path / mode
        args = ["merge", *paths, "-o", str(out / "run.json"), "--baseline", str(base), "--gate=cer<=0.5",
                "--csv", str(out / "r.csv"), "--markdown", str(out / "r.md"), "--html", str(out / "r.html")]
        code = main(args + (["--validate"] if mode == "validated" else []))
        said = capsys.readouterr().out.replace(str(out), "OUT")
        outputs[mode] = (code, said, _without_created((out / "run.json").read_text(encoding="utf-8")),
                         (out / "r.csv").read_text(encoding="utf-8"), (out / "r.md").read_text(encoding="utf-8"))
        assert "<html" in (out / "r.html").read_text(encoding="utf-8").lower()
    assert outputs["copied"] == outputs["validated"]
    assert '"compared": 10, "new": 0' in outputs["copied"][2] and outputs["copied"][0] == 0
