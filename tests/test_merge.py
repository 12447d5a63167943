"""Sharding without pytest: the stable shard of a document, and ``ocrmetrics merge`` (refusals, gates, baselines).

The end-to-end equality of merged and unsharded summaries lives in ``tests/plugin/test_sharding.py``.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ocr_run_factory import make_doc, make_run, validate

from pytest_ocrmetrics.cli import main
from pytest_ocrmetrics.runfile.merge import MergeError, merge_runs
from pytest_ocrmetrics.runfile.results import RunResults
from pytest_ocrmetrics.runfile.sharding import Shard, parse_shard, shard_index

IDS = st.lists(st.text(string.ascii_letters + string.digits + "_./ -é京\ud800", min_size=1, max_size=20),
               unique=True, max_size=30)


# -- the shard of a document ------------------------------------------------------------------------------------------


def test_shard_index_is_pinned_across_processes_and_versions() -> None:
    """SHA-256 + jump hash, never Python's per-process hash(): these values must never change (a change would
    move documents between the shards of running CI matrices, and between the cache keys built on them)."""
    assert [shard_index("invoices", f"doc_{n:03}.png", 4) for n in range(1, 9)] == [1, 4, 1, 1, 4, 1, 1, 4]
    assert shard_index("receipts", "doc_001.png", 4) == 3
    assert shard_index("invoices", "doc_001.png", 1) == 1


@settings(max_examples=60, deadline=None)
@given(ids=IDS, added=IDS, count=st.integers(1, 9))
def test_adding_documents_never_moves_an_existing_one(ids: list[str], added: list[str], count: int) -> None:
    """The shard split of a dataset, computed as the plugin does for each collected document, before and after
    documents are added (anywhere in the order): every existing document keeps its shard."""
    def split(documents: list[str]) -> dict[str, int]:
        return {doc: k for k in range(1, count + 1) for doc in documents if Shard(k, count).holds("invoices", doc)}

    before = split(ids)
    assert sorted(before) == sorted(ids)  # every document in exactly one shard
    grown = list(added) + list(ids)
    random.Random(len(grown)).shuffle(grown)
    after = split(grown)
    assert {doc: after[doc] for doc in ids} == before


def test_one_more_shard_moves_documents_only_into_the_new_shard() -> None:
    ids = [f"page_{n}.png" for n in range(4000)]
    for count in (1, 2, 3, 7):
        before = {doc: shard_index("books", doc, count) for doc in ids}
        after = {doc: shard_index("books", doc, count + 1) for doc in ids}
        moved = [doc for doc in ids if before[doc] != after[doc]]
        assert all(after[doc] == count + 1 for doc in moved)
        assert abs(len(moved) - len(ids) / (count + 1)) < 0.1 * len(ids) / (count + 1)


def test_shards_are_balanced_and_depend_on_the_dataset_name() -> None:
    ids = [f"{n}.png" for n in range(8000)]
    sizes = [sum(shard_index("scans", doc, 4) == k for doc in ids) for k in (1, 2, 3, 4)]
    assert all(abs(size - 2000) < 150 for size in sizes), sizes
    other = sum(shard_index("scans", doc, 4) == shard_index("letters", doc, 4) for doc in ids)
    assert other < 0.35 * len(ids)  # another dataset's document of the same name is split on its own


@pytest.mark.parametrize(("text", "expected"), [("1/1", Shard(1, 1)), ("3/4", Shard(3, 4)), (" 2 / 5 ", Shard(2, 5))])
def test_parse_shard(text: str, expected: Shard) -> None:
    assert parse_shard(text) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("0/2", "K must be 1 to N"), ("3/2", "K must be 1 to N"), ("1/0", "N must be at least 1"),
    ("2", "is not K/N"), ("a/b", "is not K/N"), ("1/2/3", "is not K/N"), ("-1/2", "is not K/N"),
    ("1/2\x1b[31m", "is not K/N"),
])
def test_bad_shard_is_one_sentence(text: str, message: str) -> None:
    with pytest.raises(ValueError) as excinfo:
        parse_shard(text)
    assert message in str(excinfo.value) and "--ocr-shard=" in str(excinfo.value)
    assert "\n" not in str(excinfo.value)


# -- merging run files ------------------------------------------------------------------------------------------------


def _docs(n: int = 9, *, engine: str = "tesseract", dataset: str = "receipts") -> list[dict[str, Any]]:
    rng = random.Random(n)
    return [make_doc(f"doc_{i:03}.png", {"cer": round(rng.random() / 4, 4), "wer": round(rng.random() / 2, 4)},
                     engine=engine, dataset=dataset, size=50 + i, outcome="passed" if i % 4 else "failed")
            for i in range(n)]


def _shards(documents: list[dict[str, Any]], count: int) -> list[tuple[str, dict[str, Any]]]:
    runs = []
    for k in range(1, count + 1):
        run = make_run([d for d in documents if shard_index(d["dataset"], d["id"], count) == k],
                       engines=sorted({d["engine"] for d in documents}))
        run["shard"] = {"index": k, "count": count}
        runs.append((f"shard-{k}.json", run))
    return runs


def test_merged_summary_is_the_plugin_summary_of_all_documents() -> None:
    documents = _docs(12) + _docs(5, dataset="letters")
    shards = _shards(documents, 3)
    assert all(run["documents"] for _, run in shards)  # each shard holds some documents: the merge is not trivial
    merged = merge_runs(shards)
    validate(merged)
    ordered = sorted(documents, key=lambda d: (d["engine"], d["dataset"], d["id"]))
    assert merged["documents"] == ordered
    expected = RunResults(normalization=merged["normalization"], seed=0).summary(ordered, resamples=1000)
    assert merged["summary"] == expected
    assert [row["documents"] for row in merged["summary"]] == [5, 12]
    assert "shard" not in merged and merged["bootstrap"] == {"seed": 0, "resamples": 1000}


def test_merge_uses_the_recorded_seed_and_resamples() -> None:
    shards = _shards(_docs(10), 2)
    for _, run in shards:
        run["bootstrap"] = {"seed": 7, "resamples": 50}
    merged = merge_runs(shards)
    expected = RunResults(normalization=merged["normalization"], seed=7).summary(merged["documents"], resamples=50)
    default = RunResults(normalization=merged["normalization"], seed=0).summary(merged["documents"], resamples=1000)
    assert merged["summary"] == expected != default
    assert merged["bootstrap"] == {"seed": 7, "resamples": 50}


def test_merge_joins_skipped_entries_errors_interruptions_and_replacements() -> None:
    (name1, one), (name2, two) = _shards(_docs(8), 2)
    entry = {"dataset": "receipts", "source": "ground_truth.json#bad", "reason": "no image"}
    one["skipped_entries"] = [entry]
    two["skipped_entries"] = [entry, {**entry, "source": "ground_truth.json#worse"}]
    one["collection_errors"] = [{"dataset": "broken", "message": "line 3: not JSON"}]
    two["collection_errors"] = [{"dataset": "broken", "message": "line 3: not JSON"}]
    two["interrupted"] = True
    one["replaced_characters"], two["replaced_characters"] = 2, 3
    merged = merge_runs([(name1, one), (name2, two)])
    validate(merged)
    assert [e["source"] for e in merged["skipped_entries"]] == ["ground_truth.json#bad", "ground_truth.json#worse"]
    assert merged["summary"][0]["skipped_entries"] == 2
    assert merged["collection_errors"] == [{"dataset": "broken", "message": "line 3: not JSON"}]
    assert merged["interrupted"] is True and merged["replaced_characters"] == 5
    one.pop("replaced_characters"), two.pop("replaced_characters"), two.pop("interrupted")
    merged = merge_runs([(name1, one), (name2, two)])
    assert "replaced_characters" not in merged and merged["interrupted"] is False


def test_merge_refuses_a_document_in_two_files() -> None:
    shards = _shards(_docs(6), 2)
    moved = shards[0][1]["documents"][0]
    shards[1][1]["documents"].append(dict(moved))
    with pytest.raises(MergeError) as excinfo:
        merge_runs(shards)
    assert str(excinfo.value).startswith(f"document {moved['id']!r} (tesseract / receipts) is in both shard-1.json "
                                         f"and shard-2.json")
    # another engine or dataset with the same document id is not a duplicate
    merge_runs(_shards(_docs(6) + _docs(6, engine="rapidocr") + _docs(6, dataset="letters"), 2))


def test_merge_refuses_other_normalization_settings() -> None:
    shards = _shards(_docs(6), 2)
    shards[1][1]["normalization"] = {**shards[1][1]["normalization"], "name": "nfc+casefold"}
    with pytest.raises(MergeError, match=r"shard-1\.json and shard-2\.json were run with different normalization "
                                         r"settings \(normalization 'nfc'.* against normalization 'nfc\+casefold'"):
        merge_runs(shards)
    shards[1][1]["normalization"] = {**shards[0][1]["normalization"], "name": "NFC"}  # the same profile, spelled
    merge_runs(shards)
    shards[1][1]["normalization"] = {**shards[0][1]["normalization"], "field_compare": "exact"}
    with pytest.raises(MergeError, match="field comparison 'lowercase' against .*field comparison 'exact'"):
        merge_runs(shards)


def test_merge_refuses_another_engine_identity() -> None:
    shards = _shards(_docs(6), 2)
    shards[1][1]["environment"]["engines"]["tesseract"] = {"name": "tesseract", "version": "5.4"}
    with pytest.raises(MergeError) as excinfo:
        merge_runs(shards)
    assert str(excinfo.value) == ("engine 'tesseract' is not the same in shard-1.json and shard-2.json (version '1.0' "
                                  "against '5.4'); run every shard with the same engine version, model and settings")


def test_merge_refuses_another_bootstrap_seed() -> None:
    shards = _shards(_docs(6), 2)
    shards[1][1]["bootstrap"] = {"seed": 3, "resamples": 1000}
    with pytest.raises(MergeError, match=r"--ocr-seed=0 --ocr-bootstrap=1000 against --ocr-seed=3"):
        merge_runs(shards)


def test_merge_refuses_an_incomplete_or_mixed_split() -> None:
    shards = _shards(_docs(9), 3)
    with pytest.raises(MergeError, match=r"^shard 2/3 is missing \(given: shard-1\.json \(1/3\), shard-3\.json"):
        merge_runs([shards[0], shards[2]])
    with pytest.raises(MergeError, match=r"^shards 2/3, 3/3 are missing"):
        merge_runs([shards[0]])
    with pytest.raises(MergeError, match=r"^shard-2\.json and again\.json are both shard 2/3"):
        merge_runs([*shards, ("again.json", {**shards[1][1], "documents": []})])
    other = _shards(_docs(9), 2)
    with pytest.raises(MergeError, match=r"^shard-1\.json is shard 1/3 but shard-1\.json is shard 1/2"):
        merge_runs([shards[0], other[0]])
    with pytest.raises(MergeError, match="no run files"):
        merge_runs([])


def test_an_empty_shard_merges() -> None:
    documents = _docs(3)
    shards = _shards(documents, 5)
    assert any(not run["documents"] for _, run in shards)
    assert len(merge_runs(shards)["documents"]) == 3


# -- ocrmetrics merge ---------------------------------------------------------------------------------------------------


@pytest.fixture
def shard_files(tmp_path: Path) -> list[str]:
    paths = []
    for name, run in _shards(_docs(10), 2):
        path = tmp_path / name
        path.write_text(json.dumps(run), encoding="utf-8")
        paths.append(str(path))
    return paths


def test_cli_merge_writes_the_run_file_and_reports(shard_files: list[str], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run.json"
    assert main(["merge", *shard_files, "-o", str(out), "--html", str(tmp_path / "r.html"),
                 "--csv", str(tmp_path / "r.csv"), "--markdown", str(tmp_path / "r.md")]) == 0
    merged = json.loads(out.read_text(encoding="utf-8"))
    validate(merged)
    assert len(merged["documents"]) == 10
    assert merged == {**merge_runs([(p, json.loads(Path(p).read_text())) for p in shard_files]),
                      "created": merged["created"]}
    assert len((tmp_path / "r.csv").read_text(encoding="utf-8").splitlines()) == 11
    assert "receipts" in (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "<html" in (tmp_path / "r.html").read_text(encoding="utf-8").lower()
    stdout = capsys.readouterr().out
    assert "merged 2 run files: 10 documents" in stdout and f"run file: {out}" in stdout


def test_cli_merge_pauses_the_collector_while_it_reads_and_merges_and_restores_it(
        shard_files: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shards' documents hold no cycles: no collection runs while they are read and merged (the full passes
    over them found nothing, at a cost on large merges; the command pauses it, see tests/test_cli.py); afterwards
    the collector is on again, after a merge that was refused too, and stays off when the caller had turned it
    off."""
    import gc

    from pytest_ocrmetrics.runfile import merge as merge_module

    seen: list[bool] = []
    real = merge_module.merge_runs

    def merge_runs_watched(runs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(runs)

    monkeypatch.setattr(merge_module, "merge_runs", merge_runs_watched)
    out = str(tmp_path / "run.json")
    assert main(["merge", *shard_files, "-o", out]) == 0
    assert main(["merge", shard_files[0], shard_files[0], "-o", out]) == 2  # refused: the same shard twice
    assert seen == [False, False] and gc.isenabled()
    gc.disable()
    try:
        assert main(["merge", *shard_files, "-o", out]) == 0
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_cli_merge_gates_exit_codes(shard_files: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "run.json")
    micro = merge_runs([(p, json.loads(Path(p).read_text())) for p in shard_files])["summary"][0]["metrics"]["cer"]
    assert main(["merge", *shard_files, "-o", out, f"--gate=cer<={micro['micro'] + 0.001}"]) == 0
    assert "ocrmetrics merge: passed" in capsys.readouterr().out
    assert main(["merge", *shard_files, "-o", out, f"--gate=cer<={micro['micro'] - 0.001}"]) == 1
    stdout = capsys.readouterr().out
    assert "gate cer<=" in stdout and "FAILED" in stdout
    # one shard alone is refused: a gate on part of the documents could pass what the whole run fails
    assert main(["merge", shard_files[0], "-o", out, "--gate=cer<=1"]) == 2
    assert main(["merge", *shard_files, "-o", out, "--gate=cre<=0.1"]) == 2
    assert "did you mean" in capsys.readouterr().err.lower()


def test_cli_merge_says_an_engine_that_evaluated_nothing_and_fails_when_a_verdict_was_asked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As pytest says it: the merged run's pair with every document skipped on every shard (the engine was not
    installed on the CI machines) fails a merge with a gate; without a gate or any checked threshold it warns."""
    skipped = [make_doc(f"doc_{i:03}.png", {}, engine="gone", outcome="skipped",
                        message="engine 'gone' is not available: install gone") for i in range(6)]
    paths = []
    for name, run in _shards(_docs(6) + skipped, 2):
        (tmp_path / name).write_text(json.dumps(run), encoding="utf-8")
        paths.append(str(tmp_path / name))
    out = str(tmp_path / "run.json")
    assert main(["merge", *paths, "-o", out]) == 0
    assert ("WARNING: gone / receipts: none of its 6 documents was evaluated (6 skipped: engine 'gone' is not "
            "available: install gone)") in capsys.readouterr().out.splitlines()
    assert main(["merge", *paths, "-o", out, "--gate=cer<=1"]) == 1
    stdout = capsys.readouterr().out.splitlines()
    assert ("ERROR: gone / receipts: none of its 6 documents was evaluated (6 skipped: engine 'gone' is not available: "
            "install gone), so nothing was checked there") in stdout
    assert any(line.startswith("ocrmetrics merge: FAILED") for line in stdout)


def test_cli_merge_baseline_exit_codes(shard_files: list[str], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "run.json")
    base = tmp_path / "base.json"
    assert main(["merge", *shard_files, "-o", str(base)]) == 0
    assert main(["merge", *shard_files, "-o", out, "--baseline", str(base), "--max-regression=cer:0.001"]) == 0
    assert json.loads(Path(out).read_text())["baseline"]["compared"] == 10
    worse = json.loads(Path(shard_files[1]).read_text())
    for doc in worse["documents"]:
        doc["metrics"]["cer"] = round(doc["metrics"]["cer"] + 0.2, 4)
        doc["counts"]["cer"]["errors"] = doc["counts"]["cer"]["errors"] + 0.2 * doc["counts"]["cer"]["reference_length"]
    Path(shard_files[1]).write_text(json.dumps(worse), encoding="utf-8")
    capsys.readouterr()
    assert main(["merge", *shard_files, "-o", out, "--baseline", str(base), "--max-regression=cer:0.001"]) == 1
    assert "REGRESSION cer regressed" in capsys.readouterr().out
    # without a tolerance the differences are reported, not enforced (as pytest --ocr-baseline)
    assert main(["merge", *shard_files, "-o", out, "--baseline", str(base)]) == 0
    # a baseline that matches no document fails; one made with other settings is refused unless allowed
    other = make_run(_docs(3, dataset="letters"))
    (tmp_path / "other.json").write_text(json.dumps(other), encoding="utf-8")
    assert main(["merge", *shard_files, "-o", out, "--baseline", str(tmp_path / "other.json")]) == 1
    base_run = json.loads(base.read_text())
    base_run["normalization"]["name"] = "lenient"
    base.write_text(json.dumps(base_run), encoding="utf-8")
    capsys.readouterr()
    assert main(["merge", *shard_files, "-o", out, "--baseline", str(base)]) == 2
    assert "--allow-mismatch" in capsys.readouterr().err
    assert main(["merge", *shard_files, "-o", out, "--baseline", str(base), "--allow-mismatch"]) == 0


def test_cli_merge_refusals_exit_2_with_one_line(shard_files: list[str], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "run.json")
    assert main(["merge", shard_files[0], shard_files[0], "-o", out]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ocrmetrics merge: error: ") and "are both shard 1/2" in err and err.count("\n") == 1
    nan = json.loads(Path(shard_files[1]).read_text())
    nan["documents"][0]["metrics"]["cer"] = float("nan")
    Path(shard_files[1]).write_text(json.dumps(nan), encoding="utf-8")
    assert main(["merge", *shard_files, "-o", out]) == 2
    assert "holds NaN at documents/0/metrics/cer" in capsys.readouterr().err
    assert main(["merge", shard_files[0], str(tmp_path / "missing.json"), "-o", out]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["merge", *shard_files]) == 2  # -o is required
    assert not Path(out).exists()


def test_cli_merge_hostile_names_and_an_interrupted_shard(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Document ids with a lone surrogate, ESC and a bidi override: merged, written as valid UTF-8 with the replaced
    characters counted; a refusal naming them shows marks, never a raw ESC."""
    hostile = "scan\x1b[31m\u202e\ud800.png"
    documents = [make_doc(hostile, {"cer": 0.1}, dataset="receipts\x1b[0m"), make_doc("x" * 100_000 + ".png", {"cer": 0.2})]
    paths = []
    for k, doc in enumerate(documents, 1):
        run = make_run([doc])
        run["interrupted"] = k == 2
        paths.append(tmp_path / f"part-{k}.json")
        paths[-1].write_text(json.dumps(run), encoding="utf-8")
    out = tmp_path / "run.json"
    assert main(["merge", *map(str, paths), "-o", str(out)]) == 0
    assert "part-2.json' is from an interrupted run" in capsys.readouterr().err
    merged = json.loads(out.read_bytes().decode("utf-8"))  # strict UTF-8: no lone surrogate was written
    validate(merged)
    assert merged["replaced_characters"] == 2 and merged["interrupted"] is True  # the id and the node id
    assert "scan\x1b[31m\u202e\ufffd.png" in [doc["id"] for doc in merged["documents"]]
    assert main(["merge", str(paths[0]), str(paths[0]), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "is in both" in err and "\x1b" not in err and "\u202e" not in err


# -- shards a merge cannot trust ----------------------------------------------------------------------------------------


def test_merge_refuses_a_shard_run_with_another_engine_list() -> None:
    """Shard 2 ran only tesseract (another --ocr-engine list, or rapidocr missing on that machine): the merged
    rapidocr row would be gated on shard 1's documents only."""
    documents = _docs(8) + _docs(8, engine="rapidocr")
    shards = _shards(documents, 2)
    (_, one), (_, two) = shards
    assert one["documents"] and two["documents"]
    two["documents"] = [doc for doc in two["documents"] if doc["engine"] == "tesseract"]
    del two["environment"]["engines"]["rapidocr"]
    with pytest.raises(MergeError) as excinfo:
        merge_runs(shards)
    message = str(excinfo.value)
    assert message.startswith("shard-2.json scored documents but did not run engine 'rapidocr' (not in its "
                              "environment.engines), which shard-1.json ran: ")
    assert "--ocr-engine" in message and "\n" not in message
    # the engine skipped on shard 2's machine (not installed): its documents are there, skipped, and refused alike
    two["documents"] += [{**doc, "outcome": "skipped", "metrics": {}, "counts": {}}
                         for doc in documents if doc["engine"] == "rapidocr"
                         and shard_index(doc["dataset"], doc["id"], 2) == 2]
    with pytest.raises(MergeError, match="^shard-2.json scored documents but did not run engine 'rapidocr'"):
        merge_runs(shards)


def test_merge_compares_engine_lists_only_of_shards_that_scored_documents() -> None:
    """An empty shard (or one whose pages were all unreadable) creates no engine and records none; node-level split
    files (no ``shard`` entry) may hold one engine's tests only: neither is refused."""
    documents = _docs(3) + _docs(3, engine="rapidocr")
    shards = _shards(documents, 5)
    empty = [run for _, run in shards if not run["documents"]]
    assert empty
    for run in empty:
        run["environment"]["engines"] = {}
    unreadable = empty[0]
    unreadable["documents"] = [{**_docs(1)[0], "id": "blank.png", "outcome": "error", "metrics": {}, "counts": {}}]
    assert len(merge_runs(shards)["documents"]) == 7
    by_engine = [make_run([d for d in documents if d["engine"] == engine]) for engine in ("rapidocr", "tesseract")]
    assert [list(run["environment"]["engines"]) for run in by_engine] == [["rapidocr"], ["tesseract"]]
    assert len(merge_runs([("part-1.json", by_engine[0]), ("part-2.json", by_engine[1])])["documents"]) == 6


@pytest.mark.parametrize("where", ["errors", "reference_length"])
def test_merge_refuses_a_negative_count(where: str) -> None:
    """A negative error count made the merged micro CER negative, and a gate on it passed."""
    shards = _shards(_docs(8), 2)
    doc = shards[1][1]["documents"][1]
    doc["counts"]["cer"][where] = -500.0
    with pytest.raises(MergeError) as excinfo:
        merge_runs(shards)
    assert str(excinfo.value).startswith(
        f"shard-2.json: document {doc['id']!r} (tesseract / receipts) has the negative count -500.0 at "
        f"counts/cer/{where}, which no run writes")
    assert "\n" not in str(excinfo.value)


@pytest.mark.parametrize("lacking", [("errors",), ("errors", "reference_length")])
def test_merge_refuses_a_scored_metric_without_its_counts(lacking: tuple[str, ...]) -> None:
    """It died with a ValueError traceback from the summary's accumulators."""
    shards = _shards(_docs(8), 2)
    doc = shards[1][1]["documents"][0]
    for key in lacking:
        del doc["counts"]["cer"][key]
    if len(lacking) == 2:
        del doc["counts"]["cer"]
    with pytest.raises(MergeError) as excinfo:
        merge_runs(shards)
    missing = " and ".join(f"counts/cer/{key}" for key in lacking)
    assert str(excinfo.value).startswith(
        f"shard-2.json: document {doc['id']!r} (tesseract / receipts) has cer without its counts ({missing} missing)")
    # a skipped or filtered document's metrics are not summed: not refused
    doc["outcome"] = "skipped"
    merge_runs(shards)


def test_cli_merge_refuses_untrustworthy_shards_in_one_line(shard_files: list[str], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "run.json")
    second = json.loads(Path(shard_files[1]).read_text(encoding="utf-8"))
    second["documents"][0]["counts"]["cer"]["errors"] = -1000
    Path(shard_files[1]).write_text(json.dumps(second), encoding="utf-8")
    assert main(["merge", *shard_files, "-o", out, "--gate=cer<=0.01"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ocrmetrics merge: error: {shard_files[1]!r}: document ") and err.count("\n") == 1
    assert "negative count -1000" in err
    del second["documents"][0]["counts"]["cer"]
    Path(shard_files[1]).write_text(json.dumps(second), encoding="utf-8")
    assert main(["merge", *shard_files, "-o", out]) == 2
    err = capsys.readouterr().err
    assert "has cer without its counts" in err and "Traceback" not in err and err.count("\n") == 1
    assert not Path(out).exists()
