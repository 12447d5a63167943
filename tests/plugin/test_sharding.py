"""``--ocr-shard=K/N`` and node-level splitting through whole pytest runs, merged with ``ocrmetrics merge``: the merged
run file equals the run file of the same documents run on one machine (but for timings and the creation time)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_ocrmetrics.cli import main
from pytest_ocrmetrics.runfile.sharding import shard_index
from tests.helpers.plugin import make_dataset

WORDS = ["invoice", "total", "amount", "tax", "date", "due", "paid", "balance", "customer", "number", "order", "item", "price"]
BASE = ["--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-no-cache", "-p", "no:randomly"]


def _pages(count: int) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """``count`` pages with 0 to 3 character errors each (fields on some), as ground truth and replay predictions."""
    docs: dict[str, dict[str, Any]] = {}
    predictions: dict[str, str] = {}
    for n in range(1, count + 1):
        text = " ".join(WORDS[(n * k) % len(WORDS)] for k in range(1, 6)) + f" {n * 7}.50"
        docs[f"page_{n:02}.png"] = {"full_text": text, "fields": {"total": f"{n * 7}.50"} if n % 3 == 0 else {}}
        predictions[f"page_{n:02}"] = text.replace("a", "o", n % 4)
    return docs, predictions


@pytest.fixture
def pages(pytester: pytest.Pytester) -> list[str]:
    docs, predictions = _pages(12)
    make_dataset(pytester.path, docs, predictions)
    return sorted(docs)


def _run(pytester: pytest.Pytester, json_name: str, *args: str, ret: int = pytest.ExitCode.OK) -> dict[str, Any]:
    result = pytester.runpytest(*BASE, f"--ocr-json={json_name}", *args)
    assert result.ret == ret, result.stdout.str()
    return json.loads((pytester.path / json_name).read_text(encoding="utf-8"))


def _merge(pytester: pytest.Pytester, names: list[str], output: str, *args: str) -> int:
    return main(["merge", *(str(pytester.path / name) for name in names), "-o", str(pytester.path / output), *args])


def _without_timings(run: dict[str, Any]) -> dict[str, Any]:
    """Everything of a run file but what differs between two runs of the same documents: the creation time and
    each document's recognition time."""
    return {**{k: v for k, v in run.items() if k != "created"},
            "documents": [{k: v for k, v in doc.items() if k != "elapsed_s"} for doc in run["documents"]]}


def test_merged_shards_equal_the_unsharded_run(pytester: pytest.Pytester, pages: list[str]) -> None:
    """N = 2 and N = 3, with xdist on some shards; a seed and resample count of their own (recorded in the run files),
    so a merge that fell back to the defaults would give other intervals."""
    settings = ["--ocr-seed=11", "--ocr-bootstrap=300", "--ocr-max=cer:0.05"]
    failed = pytest.ExitCode.TESTS_FAILED
    whole = _run(pytester, "whole.json", *settings, ret=failed)
    assert whole["bootstrap"] == {"seed": 11, "resamples": 300} and "shard" not in whole
    assert {doc["outcome"] for doc in whole["documents"]} == {"passed", "failed"}
    for count in (2, 3):
        names = []
        for index in range(1, count + 1):
            xdist = ["-n", "2"] if index == 1 else []
            shard = _run(pytester, f"shard-{index}-of-{count}.json", f"--ocr-shard={index}/{count}", *settings, *xdist,
                         ret=failed if any(d["outcome"] == "failed" for d in whole["documents"]
                                           if shard_index("invoices", d["id"], count) == index) else 0)
            assert shard["shard"] == {"index": index, "count": count}
            assert sorted(doc["id"] for doc in shard["documents"]) == [
                page for page in pages if shard_index("invoices", page, count) == index]
            assert 0 < len(shard["documents"]) < len(pages)  # each shard has part of the documents
            names.append(f"shard-{index}-of-{count}.json")
        assert _merge(pytester, names, f"merged-{count}.json") == 0
        merged = json.loads((pytester.path / f"merged-{count}.json").read_text(encoding="utf-8"))
        assert merged["summary"] == whole["summary"]  # exactly: micro, mean, percentiles, bootstrap intervals
        assert _without_timings(merged) == _without_timings(whole)
        _assert_documents_were_copied(pytester, names, f"merged-{count}.json")


def _assert_documents_were_copied(pytester: pytest.Pytester, names: list[str], merged: str) -> None:
    """The plugin's shard files are read with their document lines kept as text (what makes the merge fast), from
    their merge index (its digest matches, each entry is what the merge reads of its document), and the merged file
    is, byte for byte but its creation time, what a merge decoding every document writes."""
    from pytest_ocrmetrics.core.safe_text import sanitize_run
    from pytest_ocrmetrics.reporting.files import dump_run
    from pytest_ocrmetrics.runfile.merge import merge_runs
    from pytest_ocrmetrics.runfile.merge_index import INDEX_KEY, indexed_parts, merge_entry
    from pytest_ocrmetrics.runfile.read import load_run, load_shard
    from pytest_ocrmetrics.runfile.verbatim import VerbatimDocuments, documents_placeholder

    paths = [str(pytester.path / name) for name in names]
    assert all(isinstance(load_shard(path)["documents"], VerbatimDocuments) for path in paths)
    for path in paths:
        shard = load_run(path, schema=False)
        assert shard[INDEX_KEY]["documents"] == [merge_entry(doc) for doc in shard["documents"]]
        assert indexed_parts((pytester.path / path).read_bytes(), json.dumps(documents_placeholder())) is not None
    in_full = dump_run(sanitize_run(merge_runs([(repr(path), load_run(path, schema=False)) for path in paths])))
    written = (pytester.path / merged).read_text(encoding="utf-8")
    assert written.split("\n", 2)[2] == in_full.split("\n", 2)[2] and written.startswith('{"schema"')  # "created"


def test_an_empty_shard_passes_and_writes_its_run_file(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    docs, predictions = _pages(1)
    make_dataset(pytester.path, docs, predictions)
    (page,) = docs
    holder = shard_index("invoices", page, 3)
    whole = _run(pytester, "whole.json")
    for index in (1, 2, 3):
        shard = _run(pytester, f"s{index}.json", f"--ocr-shard={index}/3", *plugin_args)
        assert len(shard["documents"]) == (1 if index == holder else 0)
        assert shard["shard"] == {"index": index, "count": 3}
    assert _merge(pytester, ["s1.json", "s2.json", "s3.json"], "merged.json") == 0
    merged = json.loads((pytester.path / "merged.json").read_text(encoding="utf-8"))
    assert _without_timings(merged) == _without_timings(whole)


def test_documents_keep_their_shard_when_documents_are_added(pytester: pytest.Pytester) -> None:
    docs, predictions = _pages(12)
    make_dataset(pytester.path, docs, predictions)

    def collected(shard: str) -> set[str]:
        result = pytester.runpytest(*BASE, f"--ocr-shard={shard}", "--collect-only", "-q")
        return {line.split("replay-", 1)[1] for line in result.outlines if line.startswith("invoices::replay-")}

    before = [collected(f"{k}/3") for k in (1, 2, 3)]
    assert sorted(set().union(*before)) == sorted(docs) and sum(map(len, before)) == len(docs)
    more, more_predictions = _pages(30)
    # new pages first in the ground truth: positions of the old ones change, their shards must not
    make_dataset(pytester.path, {**{k: v for k, v in more.items() if k not in docs}, **docs},
                 {**more_predictions, **predictions})
    after = [collected(f"{k}/3") for k in (1, 2, 3)]
    assert [shard & set(docs) for shard in after] == before
    assert all(len(shard) > len(old) for shard, old in zip(after, before))


def test_node_level_split_by_k_and_deselect_merges_exactly(pytester: pytest.Pytester, pages: list[str]) -> None:
    """What pytest-split and pytest-shard do (drop items in pytest_collection_modifyitems) works on dataset items."""
    whole = _run(pytester, "whole.json")
    first_half = pages[: len(pages) // 2]
    deselect = [f"--deselect=invoices::replay-{page}" for page in first_half]
    keyword = " or ".join(page.removesuffix(".png") for page in first_half)
    one = _run(pytester, "one.json", "-k", keyword)
    two = _run(pytester, "two.json", *deselect, "-n", "2")
    assert sorted(doc["id"] for doc in one["documents"]) == first_half
    assert sorted(doc["id"] for doc in two["documents"]) == pages[len(pages) // 2:]
    assert _merge(pytester, ["one.json", "two.json"], "merged.json") == 0
    merged = json.loads((pytester.path / "merged.json").read_text(encoding="utf-8"))
    assert _without_timings(merged) == _without_timings(whole)


def test_a_python_suite_shards_its_documents_and_runs_other_tests_everywhere(pytester: pytest.Pytester,
                                                                             pages: list[str]) -> None:
    pytester.makepyfile(test_suite="""
        import pytest

        @pytest.mark.ocr_dataset("invoices")
        def test_cer(ocr_score):
            assert ocr_score.metrics["cer"] < 0.5

        def test_plain():
            pass
    """)
    ran = []
    for index in (1, 2):
        result = pytester.runpytest("--ocr-engine=replay:preds", "--ocr-no-cache", "-p", "no:randomly", "-v",
                                    f"--ocr-shard={index}/2", f"--ocr-json=s{index}.json")
        assert result.ret == pytest.ExitCode.OK
        result.stdout.fnmatch_lines(["*test_plain PASSED*"])
        ran.append(sorted(doc["id"] for doc in json.loads((pytester.path / f"s{index}.json").read_text())["documents"]))
    assert sorted(ran[0] + ran[1]) == pages and not set(ran[0]) & set(ran[1])


def test_bad_shard_is_a_usage_error_and_the_ini_key_works(pytester: pytest.Pytester, pages: list[str]) -> None:
    result = pytester.runpytest(*BASE, "--ocr-shard=4/3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ocr-shard='4/3': K must be 1 to N (shards are numbered from 1), e.g. "
                                 "--ocr-shard=1/3"])
    pytester.makeini("[pytest]\nocr_shard = 2/2\n")
    result = pytester.runpytest(*BASE, "--ocr-json=s.json")
    assert result.ret == pytest.ExitCode.OK
    expected = [page for page in pages if shard_index("invoices", page, 2) == 2]
    result.stdout.fnmatch_lines([f"*{len(expected)} passed, {len(pages) - len(expected)} deselected*"])
    assert json.loads((pytester.path / "s.json").read_text())["shard"] == {"index": 2, "count": 2}
    assert pytester.runpytest(*BASE, "--ocr-shard=1/2", "--ocr-json=s.json").ret == pytest.ExitCode.OK  # cli wins
    assert json.loads((pytester.path / "s.json").read_text())["shard"] == {"index": 1, "count": 2}
    pytester.makeini("[pytest]\nocr_shard = half\n")
    assert pytester.runpytest(*BASE).ret == pytest.ExitCode.USAGE_ERROR


@pytest.mark.xdist_transport
def test_a_shard_says_its_gates_saw_only_the_shard(pytester: pytest.Pytester, pages: list[str],
                                                   plugin_args: list[str]) -> None:
    note = "--ocr-shard=1/2: the gates and the baseline's aggregates saw only this shard's documents; check them on " \
           "the merged run with ocrmetrics merge"
    result = pytester.runpytest(*BASE, "--ocr-shard=1/2", "--ocr-gate=cer<=0.5", *plugin_args)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*PASS gate*", note])
    result = pytester.runpytest(*BASE, "--ocr-shard=1/2", *plugin_args)
    assert note not in result.stdout.str()
