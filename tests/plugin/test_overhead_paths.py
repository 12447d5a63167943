"""The plugin's cheap paths (issue 12, overhead): the same results with less work per document.

Each test counts the work a path is meant to skip (images checked once, a replay folder listed once, no pass over
the spooled documents for tags or facts nobody has, the garbage collector's freeze kept through pytest's own closing
collections), or checks that a faster path gives exactly what the general one gives.
"""

from __future__ import annotations

import gc
import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.datasets import base, load_dataset
from pytest_ocrmetrics.engines.base import EngineError
from pytest_ocrmetrics.engines.replay import ReplayEngine
from pytest_ocrmetrics.runfile.results import RunResults
from tests.helpers.plugin import PNG_1X1, make_dataset


def _document(doc_id: str) -> Document:
    return Document(id=doc_id, dataset="d", image_path=None, reference_text="x")


# -- images ----------------------------------------------------------------------------------------------------------
def test_each_image_is_checked_once_and_only_problems_take_the_general_check(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    docs = {f"doc_{i}.png": {"full_text": "x"} for i in range(4)}
    data = make_dataset(tmp_path, docs, {})
    (data / "images" / "doc_3.png").unlink()
    (data / "images" / "doc_2.png").write_text("not an image", encoding="utf-8")
    calls: list[str] = []
    general = base.image_error

    def counting(image_path: Path, root: Path | None = None, **kwargs: Any) -> str | None:
        calls.append(Path(image_path).name)
        return general(image_path, root, **kwargs)

    monkeypatch.setattr(base, "image_error", counting)
    dataset = load_dataset(data)
    errors = {document.id: document.error for document in dataset.documents}
    assert sorted(calls) == ["doc_2.png", "doc_3.png"]  # the good images never reach the general check
    assert errors["doc_0.png"] is None and errors["doc_1.png"] is None
    assert "is not an image" in errors["doc_2.png"] and "does not exist" in errors["doc_3.png"]


def test_a_link_inside_the_dataset_folder_is_still_judged_by_the_general_check(tmp_path: Path) -> None:
    data = make_dataset(tmp_path, {"a.png": {"full_text": "x"}, "b.png": {"full_text": "y"}}, {})
    outside = tmp_path / "outside.png"
    outside.write_bytes(PNG_1X1)
    (data / "images" / "b.png").unlink()
    try:
        (data / "images" / "b.png").symlink_to(outside)
    except OSError:
        pytest.skip("symbolic links are not available here")
    errors = {document.id: document.error for document in load_dataset(data).documents}
    assert errors["a.png"] is None
    assert "symbolic link" in str(errors["b.png"]) and "outside the dataset folder" in str(errors["b.png"])


# -- replay ----------------------------------------------------------------------------------------------------------
def test_a_replay_folder_is_listed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    preds = tmp_path / "preds"
    preds.mkdir()
    for i in range(5):
        (preds / f"doc_{i}.txt").write_text(f"text {i}\n", encoding="utf-8")
    listed: list[str] = []
    scandir = os.scandir

    def counting(path: Any = ".") -> Any:
        listed.append(str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", counting)
    engine = ReplayEngine(preds)
    texts = [engine.recognize(_document(f"doc_{i}.png")).text for i in range(5)]
    assert texts == [f"text {i}" for i in range(5)]
    assert len(listed) == 1


def test_replay_keeps_its_order_and_finds_files_written_after_the_listing(tmp_path: Path) -> None:
    preds = tmp_path / "preds"
    (preds / "sub").mkdir(parents=True)
    (preds / "a.txt").write_text("stem", encoding="utf-8")
    (preds / "a.png.txt").write_text("id", encoding="utf-8")  # the id plus .txt comes first
    (preds / "a.png.json").write_text(json.dumps({"total": "1"}), encoding="utf-8")
    (preds / "flat.txt").write_text("flat", encoding="utf-8")  # sub/flat.png falls back to the flat stem
    engine = ReplayEngine(preds)
    first = engine.recognize(_document("a.png"))
    assert (first.text, first.fields) == ("id", {"total": "1"})
    assert first.metadata["prediction"] == str(preds / "a.png.txt")
    assert engine.recognize(_document("sub/flat.png")).text == "flat"
    (preds / "late.txt").write_text("late", encoding="utf-8")  # after the folder was listed
    assert engine.recognize(_document("late.png")).text == "late"
    (preds / "a.png.txt").unlink()  # removed after the listing: the next candidate on disk
    assert engine.recognize(_document("a.png")).text == "stem"
    with pytest.raises(EngineError, match="no prediction for document 'gone.png'"):
        engine.recognize(_document("gone.png"))


@pytest.mark.parametrize("raw", [b"a\r\nb\n", b"a\rb\r\n", b"\xef\xbb\xbfbom\n\n", b"",
                                 "caf\u00e9 \U0001f600\r".encode()])
def test_replay_reads_text_like_path_read_text(tmp_path: Path, raw: bytes) -> None:
    from pytest_ocrmetrics.datasets.sidecar import strip_trailing_newline

    preds = tmp_path / "preds"
    preds.mkdir()
    (preds / "d.txt").write_bytes(raw)
    expected = strip_trailing_newline((preds / "d.txt").read_text(encoding="utf-8-sig"))
    assert ReplayEngine(preds).recognize(_document("d.png")).text == expected


def test_replay_names_the_file_that_is_not_utf8(tmp_path: Path) -> None:
    preds = tmp_path / "preds"
    preds.mkdir()
    (preds / "d.txt").write_bytes(b"ok \xff")
    with pytest.raises(EngineError, match=r"d\.txt' is not valid UTF-8 \(byte 3\)"):
        ReplayEngine(preds).recognize(_document("d.png"))


# -- results ---------------------------------------------------------------------------------------------------------
def _record(doc_id: str, **extra: Any) -> dict[str, Any]:
    return {"id": doc_id, "dataset": "d", "engine": "e", "nodeid": f"t::{doc_id}", "metrics": {"cer": 0.25},
            "counts": {"cer": {"errors": 1, "reference_length": 4}}, **extra}


def _count_reads(results: RunResults, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    reads: list[int] = []
    read = results._spool.read

    def counting(offset: int, length: int) -> dict[str, Any]:
        reads.append(offset)
        return read(offset, length)

    monkeypatch.setattr(results._spool, "read", counting)
    return reads


def test_a_run_without_tags_or_facts_reads_no_record_back_for_its_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    results = RunResults()
    for i in range(5):
        results.add(_record(f"doc_{i}"), "passed")
    reads = _count_reads(results, monkeypatch)
    run = results.to_run(plugin_version="0", pytest_version="0", resamples=10)
    assert reads == []  # the summary reads the index; no pass for tag rows or facts nobody has
    assert "summary_by_tag" not in run and "facts" not in run and "facts_summary" not in run


def _summary_case(results: RunResults) -> None:
    results.add(_record("a"), "passed")
    results.add({**_record("b"), "metrics": {"cer": 0.5, "wer": 1, "field_f1": 0.75}, "cached": True,
                 "counts": {"cer": {"errors": 2, "reference_length": 4.0},
                            "wer": {"errors": 1, "reference_length": 1}}},
                "failed", "x")
    results.add({**_record("c"), "metrics": {}, "counts": {}}, "error", "engine error")  # no metrics yet
    results.add({**_record("c"), "nodeid": "t::c-2", "truncated": True}, "passed")  # the second test's metrics
    results.add({**_record("d"), "engine": "other"}, "skipped", "no")
    results.add({**_record("e"), "metrics": {"exact_match": 1.0, "cer": 0.0}}, "passed")


def test_the_summary_from_the_index_equals_the_summary_of_the_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    results = RunResults()
    _summary_case(results)
    reads = _count_reads(results, monkeypatch)
    fast = results.summary(resamples=50)
    assert reads == []
    assert fast == results.summary(list(results.documents()), resamples=50)
    assert [row["engine"] for row in fast] == ["e", "other"] and fast[0]["cache_hits"] == 1


def test_a_record_of_unusual_shape_sends_the_summary_back_to_the_records(monkeypatch: pytest.MonkeyPatch) -> None:
    results = RunResults()
    _summary_case(results)
    results.add({**_record("f"), "metrics": {"cer": "0.5"}}, "passed")  # not a number: the accumulator refuses it
    reads = _count_reads(results, monkeypatch)
    with pytest.raises(TypeError, match="value must be a number"):
        results.summary(resamples=5)
    assert reads  # read back, as before: the same error


@pytest.mark.parametrize(("bad", "error", "match"), [
    ({"metrics": {"cer": float("nan")}}, ValueError, "cer: value is NaN"),
    ({"metrics": {"cer": True}}, TypeError, "value must be a number, not bool"),
    ({"counts": {}}, ValueError, "some documents were added with counts and some without"),
    ({"counts": {"cer": {"errors": None, "reference_length": 4}}}, ValueError, "give both numerator and denominator"),
])
def test_values_the_accumulator_refuses_from_the_index_raise_its_own_sentence(
        bad: dict[str, Any], error: type[Exception], match: str) -> None:
    # the index's values are added to the accumulators a metric at a time; one it refuses sends that metric back
    # to the one-by-one path, so the run's builder says the same sentence as before
    results = RunResults()
    for i in range(3):
        results.add(_record(f"doc_{i}"), "passed")
    results.add({**_record("z"), **bad}, "passed")
    with pytest.raises(error, match=match):
        results.summary(resamples=5)
    slow = RunResults()
    for rec in ([_record(f"doc_{i}") for i in range(3)] + [{**_record("z"), **bad}]):
        slow.add(rec, "passed")
    with pytest.raises(error, match=match):
        slow.summary(list(slow.documents()), resamples=5)


def test_the_index_path_adds_whole_columns_the_accumulators_keep_in_order() -> None:
    results = RunResults()
    for i, cer in enumerate([0.5, 0, 1, 0.25]):  # an int among the floats: kept as a float, as one by one
        results.add(_record(f"doc_{i}", metrics={"cer": cer, "wer": 0.5}), "passed")
    (row,) = results.summary(resamples=0)
    assert list(row["metrics"]) == ["cer", "wer"]
    assert row["metrics"]["cer"]["n"] == 4 and row["metrics"]["cer"]["mean"] == 0.4375
    assert row["metrics"]["cer"]["numerator"] == 4.0 and row["metrics"]["cer"]["denominator"] == 16.0
    assert row["metrics"]["wer"]["numerator"] is None  # no counts for wer: its micro is its mean
    assert row == results.summary(list(results.documents()), resamples=0)[0]


def test_tags_and_facts_still_get_their_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    results = RunResults()
    results.add(_record("a", tags=["receipt"]), "passed")
    results.add(_record("b", details={"facts": [{"id": "f1", "type": "present", "passed": True}]}), "passed")
    run = results.to_run(plugin_version="0", pytest_version="0", resamples=10)
    assert [row["tag"] for row in run["summary_by_tag"]] == ["receipt"]
    assert [fact["id"] for fact in run["facts"]] == ["f1"] and run["facts_summary"]


def test_records_added_after_the_documents_were_read_land_in_the_right_place() -> None:
    results = RunResults()
    results.add(_record("a"), "passed")
    assert [d["id"] for d in results.documents()] == ["a"]  # a read moves the spool file's position
    results.add(_record("b", reference="\u00e9" * 50), "failed", "too many errors")
    assert [(d["id"], d["outcome"]) for d in results.documents()] == [("a", "passed"), ("b", "failed")]
    assert results.documents()[1]["reference"] == "\u00e9" * 50


# -- bootstrap -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("chunk_rows", [8, 9, 40])
def test_numpy_bootstrap_by_column_equals_the_loop(chunk_rows: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 8 or more resamples are summed over the first axis, several chunks, the last one shorter: the
    same numbers as the pure-Python loop."""
    pytest.importorskip("numpy")
    import pytest_ocrmetrics.metrics.aggregate as aggregate

    rng = random.Random(chunk_rows)
    columns = {"cer": [rng.random() ** 3 for _ in range(60)], "wer": [rng.choice([0.0, 1.0, -0.0]) for _ in range(60)]}
    monkeypatch.setattr(aggregate, "_NUMPY_MIN_DRAWS", 0)
    monkeypatch.setattr(aggregate, "_NUMPY_CHUNK", 60 * chunk_rows)
    fast = aggregate.bootstrap_mean_intervals(columns, seed=11, resamples=101)
    monkeypatch.setattr(aggregate, "_numpy_resample_means", lambda *args: None)
    aggregate._resample_indices_cached.cache_clear()
    assert aggregate.bootstrap_mean_intervals(columns, seed=11, resamples=101) == fast


# -- garbage collector -----------------------------------------------------------------------------------------------
def test_the_collected_items_stay_frozen_through_pytests_closing_collections(pytester: pytest.Pytester,
                                                                            dataset: Path) -> None:
    """pytest collects garbage when it unconfigures (unraisable exceptions); the items frozen after collection are
    unfrozen after that, when pytest cleans up, so those passes do not walk them again."""
    seen: list[int] = []

    class Watch:
        @pytest.hookimpl(trylast=True)
        def pytest_unconfigure(self, config: pytest.Config) -> None:
            seen.append(gc.get_freeze_count())

    pytester.inline_run("--ocr-dataset=invoices", "--ocr-engine=replay:preds", plugins=[Watch()])
    assert seen and seen[0] > 0
    assert gc.get_freeze_count() == 0


def test_a_tests_ocr_state_is_let_go_at_its_teardown(pytester: pytest.Pytester, dataset: Path) -> None:
    """Items live until the session ends; the OCR state of each test (its output, scores, checks) does not: it is
    dropped once the teardown report is made, so memory and the collector's full passes (one at interpreter exit
    walked it for every document) do not grow with it. The record still reaches every report."""
    from pytest_ocrmetrics.plugin.keys import ITEM_STATE

    pytester.makepyfile(test_doc="""
        import pytest

        @pytest.mark.ocr_dataset("invoices")
        def test_doc(ocr_score):
            assert ocr_score["cer"] >= 0
        """)
    held: list[str] = []

    class Watch:
        @pytest.hookimpl(trylast=True)
        def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
            held.extend(item.nodeid for item in items if ITEM_STATE in item.stash)

        def pytest_collection_finish(self, session: pytest.Session) -> None:
            items.extend(session.items)

    items: list[pytest.Item] = []
    result = pytester.inline_run(".", "--ocr-dataset=invoices", "--ocr-engine=replay:preds",
                                 "--ocr-max=cer:1", "--ocr-json=run.json", plugins=[Watch()])
    result.assertoutcome(passed=6)
    assert len(items) == 6 and held == []
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert len(run["documents"]) == 3 and all(len(d["tests"]) == 2 for d in run["documents"])
    assert all(d["checks"] and d["metrics"]["cer"] >= 0 for d in run["documents"])


def _run_file_texts(results: RunResults) -> tuple[str, str]:
    """The run file's text from the spooled documents, and from the same documents as a plain list."""
    from pytest_ocrmetrics.reporting.files import dump_run

    documents = results.documents()
    return dump_run({"documents": documents}), dump_run({"documents": list(documents)})


def test_spooled_documents_write_the_same_run_file_text() -> None:
    results = RunResults()
    results.add(_record("plain"), "passed")
    results.add(_record("unicode", reference="caf\u00e9 \u4eac \U0001f600 \"quoted\" \\ tests\": x",
                        nodeid="t::caf\u00e9[\u4eac]"), "failed", "cer 0.25 > 0.1")
    results.add(_record("surrogate", hypothesis="bad \ud800 text", nodeid="t::x\udcff"), "passed")
    results.add({**_record("nested"), "details": {"tests": [1, 2], "facts": []}, "confusions": [["a", "", 2]]},
                "passed")
    results.add(_record("twice"), "passed")  # two tests score this document: merged
    results.add({**_record("twice"), "nodeid": "t::twice-again", "metrics": {}}, "failed", "no")
    results.add({**_record("no-node"), "nodeid": None}, "skipped", "skip")
    results.add({k: v for k, v in _record("missing-node").items() if k != "nodeid"}, "passed")
    results.add(_record("path", image=Path("images/p.png")), "passed")  # written as its text
    spooled, listed = _run_file_texts(results)
    assert spooled == listed
    documents = json.loads(spooled)["documents"]
    tests = {d["id"]: d["tests"] for d in documents}
    assert tests["surrogate"] == ["t::x\ufffd"] and tests["twice"] == ["t::twice", "t::twice-again"]
    assert tests["no-node"] == []


def test_a_document_with_nan_is_still_refused_in_the_run_file() -> None:
    results = RunResults()
    results.add(_record("ok"), "passed")
    results.add({**_record("nan"), "metrics": {"cer": float("nan")}}, "passed")
    with pytest.raises(ValueError, match="Out of range float"):
        _run_file_texts(results)


# -- cache hits: read in the test's own thread, never queued ---------------------------------------------------------
class _Engine:
    name = "fake"
    concurrent = True

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def identity(self) -> dict[str, Any]:
        return {"engine": "fake"}

    def recognize(self, document: Document) -> Any:
        import threading

        from pytest_ocrmetrics.engines.base import OcrOutput

        self.calls.append((document.id, threading.current_thread().name))
        return OcrOutput(text=f"text {document.id}", engine=self.name)

    def close(self) -> None:
        return None


def _image_documents(tmp_path: Path, n: int) -> list[Document]:
    documents = []
    for i in range(n):
        image = tmp_path / f"p{i}.png"
        image.write_bytes(PNG_1X1 + bytes([i]))
        documents.append(Document(id=f"p{i}.png", dataset="d", image_path=image, reference_text="x"))
    return documents


def test_cached_documents_are_read_in_the_tests_thread_and_never_queued(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    import pytest_ocrmetrics.engines.cache as cache_module
    from pytest_ocrmetrics.engines.cache import CachingEngine, OutputCache
    from pytest_ocrmetrics.engines.prefetch import Prefetcher

    documents = _image_documents(tmp_path, 5)
    cache = OutputCache(tmp_path / "cache")
    warm = CachingEngine(_Engine(), cache)
    for document in documents[:3]:
        warm.recognize(document)  # three pages recognised in an earlier run
    engine = CachingEngine(_Engine(), cache)
    reads: list[str] = []
    read_image = cache_module.with_image_bytes

    def counting(document: Document) -> Document:
        reads.append(threading.current_thread().name)
        return read_image(document)

    prefetcher = Prefetcher(engine, documents, concurrency=4)
    assert prefetcher.stats().total == 2  # only the two misses are handed to the pool
    monkeypatch.setattr(cache_module, "with_image_bytes", counting)
    prefetcher.start()
    outputs = [prefetcher.result(document) for document in documents]
    prefetcher.close(cancel=False)
    assert [output.cached for output in outputs] == [True, True, True, False, False]
    assert sorted(doc_id for doc_id, _ in engine.engine.calls) == ["p3.png", "p4.png"]
    assert all(thread.startswith("ocr-prefetch") for _, thread in engine.engine.calls)
    assert all(thread.startswith("ocr-prefetch") for thread in reads)  # hits: no second read of their image
    assert (cache.hits, cache.misses) == (3, 3 + 2)  # the earlier run's three misses, then the two


def test_a_cached_image_changed_after_the_check_is_recognised_again(tmp_path: Path) -> None:
    from pytest_ocrmetrics.engines.cache import CachingEngine, OutputCache

    documents = _image_documents(tmp_path, 1)
    cache = OutputCache(tmp_path / "cache")
    engine = CachingEngine(_Engine(), cache)
    engine.recognize(documents[0])
    assert engine.has_cached(documents[0]) is True
    assert documents[0].image_path is not None
    documents[0].image_path.write_bytes(PNG_1X1 + b"another page")  # changed since has_cached() looked
    output = engine.recognize(documents[0])
    assert not output.cached and len(engine.engine.calls) == 2
    (tmp_path / "never.png").write_bytes(PNG_1X1 + b"never recognised")
    never = Document(id="never.png", dataset="d", image_path=tmp_path / "never.png")
    assert engine.has_cached(never) is False
    assert engine.has_cached(Document(id="gone.png", dataset="d", image_path=tmp_path / "gone.png")) is False
    engine.recognize(documents[0])  # the changed page, cached now
    assert engine.has_cached(documents[0]) is True
    page = Document(id="p0_pg1", dataset="d", image_path=documents[0].image_path, page=1)
    assert engine.has_cached(page) is False  # a PDF page is rendered by the pool, not at the start of the session
    assert OutputCache(tmp_path / "cache", refresh=True).contains(cache.key(documents[0], engine.engine)) is False


THREAD_LOG = """
import threading
from pathlib import Path

_start = threading.Thread.start

def _logging_start(self):
    with open(Path(__file__).parent / "threads.txt", "a") as log:
        log.write(self.name + "\\n")
    return _start(self)

threading.Thread.start = _logging_start
"""


def test_a_warm_cache_run_starts_no_prefetch_worker(pytester: pytest.Pytester) -> None:
    from tests.helpers.engines import COUNTING_ENGINE

    make_dataset(pytester.path)
    pytester.makeconftest(COUNTING_ENGINE + THREAD_LOG)
    log = pytester.path / "threads.txt"
    pytester.runpytest_subprocess("--ocr-dataset=invoices", "--ocr-engine=counting").assert_outcomes(passed=3)
    assert "ocr-prefetch-0" in log.read_text()  # a cold cache: the pool recognises ahead of the tests
    log.unlink()
    result = pytester.runpytest_subprocess("--ocr-dataset=invoices", "--ocr-engine=counting", "--junitxml=out.xml")
    result.assert_outcomes(passed=3)
    assert "ocr-prefetch" not in (log.read_text() if log.exists() else "")
    assert (pytester.path / "out.xml").read_text().count('name="ocr.cached" value="true"') == 3


def test_nothing_is_left_frozen_at_exit(pytester: pytest.Pytester, dataset: Path) -> None:
    """The plugin freezes the collected items and what tests leave behind while the run goes, and unfreezes all of
    it when pytest is done: at interpreter exit the user's objects are collected (and finalized) as without it."""
    pytester.makeconftest(
        """
        import atexit, gc
        from pathlib import Path

        here = Path(__file__).parent
        atexit.register(lambda: (here / "frozen.txt").write_text(str(gc.get_freeze_count())))
        """
    )
    pytester.runpytest_subprocess("--ocr-dataset=invoices", "--ocr-engine=replay:preds").assert_outcomes(passed=3)
    assert int((pytester.path / "frozen.txt").read_text()) == 0


def test_the_xdist_controller_freezes_what_it_holds_and_what_reports_leave(pytester: pytest.Pytester,
                                                                          dataset: Path) -> None:
    """Under ``-n 2`` the controller runs no test and collects no item, but keeps every report it receives: it freezes
    what it holds before the workers start and then what the reports leave, every GC_FREEZE_EVERY tests (here 1), as a
    process that runs the tests does; everything is unfrozen when pytest is done."""
    pytester.makeconftest(
        """
        import atexit, gc
        from pathlib import Path

        import pytest_ocrmetrics.plugin.scheduling as scheduling

        scheduling.GC_FREEZE_EVERY = 1
        here = Path(__file__).parent
        SEEN = []

        def pytest_runtest_logreport(report):
            if report.when == "call":
                SEEN.append(gc.get_freeze_count())

        def pytest_sessionfinish(session):
            if not hasattr(session.config, "workerinput"):  # the controller
                (here / "controller.txt").write_text(" ".join(map(str, SEEN)))
                atexit.register(lambda: (here / "frozen.txt").write_text(str(gc.get_freeze_count())))
        """
    )
    result = pytester.runpytest_subprocess("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "-n", "2")
    result.assert_outcomes(passed=3)
    seen = list(map(int, (pytester.path / "controller.txt").read_text().split()))
    assert len(seen) == 3 and seen[0] > 0 and seen[-1] > seen[0]  # frozen before the first report, then again
    assert int((pytester.path / "frozen.txt").read_text()) == 0


def test_what_tests_leave_is_frozen_as_the_run_goes_and_their_garbage_cycles_are_freed(
        pytester: pytest.Pytester, dataset: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every GC_FREEZE_EVERY tests the survivors are frozen too (pytest's closing collections then walk few
    objects); the cyclic garbage the tests left is collected first, not kept frozen until the end."""
    import pytest_ocrmetrics.plugin.scheduling as scheduling

    monkeypatch.setattr(scheduling, "GC_FREEZE_EVERY", 2)
    pytester.makepyfile(
        """
        import gc
        import weakref

        import pytest

        pytestmark = pytest.mark.ocr_dataset("invoices")
        FROZEN, CYCLES = [], []

        class Cycle:
            pass

        def test_doc(ocr_output):
            FROZEN.append(gc.get_freeze_count())
            garbage = Cycle()
            garbage.me = garbage  # unreachable after the test: only the collector frees it
            CYCLES.append(weakref.ref(garbage))

        def test_after():
            assert FROZEN[2] > FROZEN[0]  # frozen again after the second test
            assert CYCLES[0]() is None and CYCLES[1]() is None  # collected before that freeze, not kept
        """
    )
    pytester.runpytest_inprocess("--ocr-engine=replay:preds", "-p", "no:randomly").assert_outcomes(passed=4)
    assert gc.get_freeze_count() == 0


def test_pytest_does_not_visit_the_files_of_a_dataset_folder_in_its_test_paths(pytester: pytest.Pytester,
                                                                                 plugin_args: list[str]) -> None:
    """``pytest . --ocr-dataset=invoices``: the dataset's collector reads the folder; pytest's own walk skips the
    images and ground truth in it (thousands of files, each a few hooks), but still collects a Python test file
    there and everything outside it."""
    make_dataset(pytester.path)
    (pytester.path / "invoices" / "test_inside.py").write_text("def test_inside():\n    pass\n", encoding="utf-8")
    pytester.makepyfile(test_outside="def test_outside():\n    pass\n")
    pytester.makeconftest(
        """
        import os

        def pytest_collect_file(file_path, parent):
            with open(os.path.join(str(parent.config.rootpath), "visited.txt"), "a", encoding="utf-8") as out:
                out.write(file_path.name + "\\n")
        """
    )
    result = pytester.runpytest(".", "--ocr-dataset=invoices", "--ocr-engine=replay:preds", *plugin_args)
    result.assert_outcomes(passed=5)  # three documents and the two Python tests
    visited = set((pytester.path / "visited.txt").read_text(encoding="utf-8").split())
    assert {"test_inside.py", "test_outside.py"} <= visited
    assert not visited & {"doc_001.png", "doc_002.png", "doc_003.png", "ground_truth.json"}
    (pytester.path / "visited.txt").unlink()
    pytester.runpytest(".", *plugin_args).assert_outcomes(passed=2)  # no --ocr-dataset: pytest visits them all
    assert "doc_001.png" in (pytester.path / "visited.txt").read_text(encoding="utf-8").split()


def test_a_folder_inside_a_dataset_is_skipped_whole_unless_python_lies_below(pytester: pytest.Pytester,
                                                                             plugin_args: list[str]) -> None:
    """The dataset's images/ folder is one ``pytest_ignore_collect`` call, not one per image; a folder with a Python
    test file somewhere below it is still walked, and the test collected."""
    make_dataset(pytester.path)
    deep = pytester.path / "invoices" / "extra" / "nested"
    deep.mkdir(parents=True)
    (deep / "test_deep.py").write_text("def test_deep():\n    pass\n", encoding="utf-8")
    (pytester.path / "invoices" / "extra" / "page.png").write_bytes(b"\x89PNG")
    pytester.makeconftest(
        """
        import os

        def pytest_ignore_collect(collection_path, config):
            with open(os.path.join(str(config.rootpath), "asked.txt"), "a", encoding="utf-8") as out:
                out.write(collection_path.name + "\\n")
        """
    )
    result = pytester.runpytest(".", "--ocr-dataset=invoices", "--ocr-engine=replay:preds", *plugin_args)
    result.assert_outcomes(passed=4)  # three documents and the nested Python test
    asked = (pytester.path / "asked.txt").read_text(encoding="utf-8").split()
    assert "images" in asked and not {"doc_001.png", "doc_002.png", "doc_003.png"} & set(asked)
    assert {"extra", "nested", "test_deep.py"} <= set(asked)


@pytest.mark.parametrize(("args", "counted"), [
    ((), False),  # no report shows confusions: none are counted
    (("--ocr-json=run.json",), True),  # the run file keeps them for any report made later
    (("--ocr-html=report.html",), True),
    (("--ocr-summary=full",), True),  # its "top character confusions"
])
def test_confusions_are_counted_only_when_a_report_shows_them(pytester: pytest.Pytester, args: tuple[str, ...],
                                                             counted: bool) -> None:
    make_dataset(pytester.path)
    pytester.makeconftest(
        """
        import os
        from pytest_ocrmetrics.metrics import text

        counted = []
        original = text.confusion_cells

        def counting(*args, **kwargs):
            counted.append(1)
            return original(*args, **kwargs)

        text.confusion_cells = counting

        def pytest_unconfigure(config):
            with open(os.path.join(str(config.rootpath), "counted.txt"), "w") as out:
                out.write(str(len(counted)))
        """
    )
    result = pytester.runpytest_subprocess("--ocr-dataset=invoices", "--ocr-engine=replay:preds", *args)
    result.assert_outcomes(passed=3)
    assert int((pytester.path / "counted.txt").read_text()) == (3 if counted else 0)
    if "--ocr-json=run.json" in args:
        documents = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))["documents"]
        assert [d["id"] for d in documents if d["confusions"]] == ["doc_001.png", "doc_003.png"]
    if "--ocr-summary=full" in args:
        result.stdout.fnmatch_lines(["*character confusions*", "*O*0*"])


def test_a_score_counts_its_confusions_when_they_are_read() -> None:
    from pytest_ocrmetrics.engines.base import OcrOutput
    from pytest_ocrmetrics.runfile.record import scored_record
    from pytest_ocrmetrics.scoring.document import score_document

    document = Document(id="a", dataset="d", image_path=None, reference_text="INVOICE 10")
    score = score_document(document, OcrOutput(text="INV0ICE 1O"), engine="e")
    assert scored_record(score, confusions=False)["confusions"] == []
    assert score.confusions == (("O", "0", 1), ("0", "O", 1))
    assert scored_record(score)["confusions"] == [["O", "0", 1], ["0", "O", 1]]
    no_text = score_document(Document(id="b", dataset="d", image_path=None), OcrOutput(text="x"), engine="e")
    assert no_text.confusions == () and scored_record(no_text)["confusions"] == []


def test_a_column_that_would_mix_counts_into_an_accumulator_is_left_to_it() -> None:
    from pytest_ocrmetrics.metrics.aggregate import MetricAccumulator
    from pytest_ocrmetrics.runfile.results import _add_column

    with_counts = MetricAccumulator("cer", [0.5], [1], [2])
    assert not _add_column(with_counts, [("cer", 0.5)]) and with_counts.values == [0.5]  # nothing added
    without = MetricAccumulator("cer", [0.5])
    assert not _add_column(without, [("cer", 0.5, 1, 2)]) and without.numerators == []
    assert _add_column(with_counts, [("cer", 1, 3, 4)]) and with_counts.values == [0.5, 1.0]


class _Float(float):
    """A float the summary's column path does not take (its type is not float): such a document goes one by one."""


def test_given_documents_summarise_the_same_by_columns_one_by_one_and_mixed() -> None:
    # a merge gives the summary its documents: the plain ones go in a column at a time, any other one by one, in order
    cers = [0.5, 0.25, 0.125, 1.0, 0.0]

    def documents(kind: str) -> list[dict[str, Any]]:
        docs = []
        for i, cer in enumerate(cers):
            odd = kind == "slow" or (kind == "mixed" and i % 2 == 1)
            value = _Float(cer) if odd else cer
            docs.append({**_record(f"doc_{i}", metrics={"cer": value, "wer": value / 2},
                                   counts={"cer": {"errors": i, "reference_length": 8}}, tags=["t", f"t{i % 2}"]),
                         "outcome": "passed"})
        return docs

    rows = [RunResults().summary(documents(kind), resamples=30) for kind in ("plain", "slow", "mixed")]
    assert rows[0] == rows[1] == rows[2]
    tagged = [RunResults().summary_by_tag(documents(kind), resamples=30) for kind in ("plain", "slow", "mixed")]
    assert tagged[0] == tagged[1] == tagged[2] and [row["tag"] for row in tagged[0]] == ["t", "t0", "t1"]
    assert rows[0][0]["metrics"]["cer"]["numerator"] == 10.0 and rows[0][0]["metrics"]["wer"]["n"] == 5


_ODDITIES = ["nan", "bool", "text", "none", "float subclass", "name é", "name 7", "count nan", "count text",
             "count none", "count missing", "counts listed", "no counts for cer", "metrics none", "metrics listed",
             "counts text", "negative count", "int value"]


def _odd_document(draw: Any, position: int) -> dict[str, Any]:
    """A document as a merge or a tag row may give it: plain (of one of a few shapes), or with one oddity that the
    accumulators refuse or take only one by one (some of them harmless: an int value, a negative count)."""
    from hypothesis import strategies as st

    names = draw(st.lists(st.sampled_from(["cer", "wer", "field_f1", "custom"]), unique=True, min_size=1, max_size=4))
    metrics: Any = {name: draw(st.sampled_from([0.0, 0.25, 1.0])) for name in names}
    counts: Any = {name: {"errors": draw(st.integers(0, 3)), "reference_length": 4}
                   for name in names if name in ("cer", "wer")}
    oddity = draw(st.sampled_from(_ODDITIES)) if draw(st.integers(0, 3)) == 0 else None
    name = names[0]
    counted = next(iter(counts), None)
    if oddity in ("nan", "bool", "text", "none", "float subclass", "int value"):
        metrics[name] = {"nan": float("nan"), "bool": True, "text": "x", "none": None, "float subclass": _Float(0.5),
                         "int value": 1}[oddity]
    elif oddity in ("name é", "name 7"):
        metrics["é" if oddity == "name é" else 7] = 0.5
    elif counted is not None and oddity in ("count nan", "count text", "count none", "negative count"):
        counts[counted]["errors"] = {"count nan": float("nan"), "count text": "x", "count none": None,
                                     "negative count": -1}[oddity]
    elif counted is not None and oddity in ("count missing", "counts listed", "no counts for cer"):
        if oddity == "count missing":
            del counts[counted]["reference_length"]
        elif oddity == "counts listed":
            counts[counted] = [1, 4]
        else:
            del counts[counted]
    elif oddity in ("metrics none", "metrics listed"):
        metrics = None if oddity == "metrics none" else [0.5]
    elif oddity == "counts text":
        counts = "x"
    outcome = draw(st.sampled_from(["passed", "passed", "passed", "failed", "error", "skipped", "filtered"]))
    return {"id": f"doc_{position}", "dataset": "d", "engine": "e", "outcome": outcome, "metrics": metrics,
            "counts": counts, "tags": ["t"] if position % 2 else ["t", "u"]}


def _summarised(documents: list[dict[str, Any]]) -> Any:
    """The summary and the tag rows, or the exception they raise (type and sentence)."""
    try:
        results = RunResults()
        rows = results.summary(documents, resamples=0), results.summary_by_tag(documents, resamples=0)
    except Exception as exc:  # noqa: BLE001 - the oracle compares whatever is raised
        return type(exc), str(exc)
    return rows, [list(row["metrics"]) for row in rows[0]]  # the metrics' order too


def test_given_documents_in_bulk_summarise_and_refuse_exactly_as_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch of given documents goes in bulk only when every one is plain and fits the accumulators; anything else
    (NaN, a bool, a float subclass, a missing or odd count, counts on some documents only, a name that is not plain
    text, metrics that are not an object) makes the batch go document by document. The oracle: the same documents
    with the bulk and the column path turned off (every value through MetricAccumulator.add); rows, the metrics'
    order and every refusal's sentence must be the same, across batch boundaries (batches of 3 here)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from pytest_ocrmetrics.runfile import results as results_module

    @st.composite
    def documents(draw: Any) -> list[dict[str, Any]]:
        return [_odd_document(draw, i) for i in range(draw(st.integers(0, 12)))]

    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(docs=documents())
    def check(docs: list[dict[str, Any]]) -> None:
        with monkeypatch.context() as patched:
            patched.setattr(results_module, "_BATCH", 3)
            in_bulk = _summarised(docs)
            patched.setattr(results_module, "_batch_columns", lambda pending: None)
            patched.setattr(results_module, "_add_column", lambda acc, items: False)  # MetricAccumulator.add each
            one_at_a_time = _summarised(docs)
        assert repr(in_bulk) == repr(one_at_a_time)  # repr: NaN never equals itself

    check()


def test_plain_given_documents_are_read_in_bulk_without_a_per_document_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_ocrmetrics.runfile import results as results_module

    documents = [{**_record(f"doc_{i}", metrics={"cer": i / 300, "field_f1": 1.0} if i % 3 else {"cer": 0.5},
                            counts={"cer": {"errors": i, "reference_length": 300}}), "outcome": "passed"}
                 for i in range(600)]
    expected = RunResults().summary(documents, resamples=0)

    def refused(rec: Any) -> Any:
        raise AssertionError("read one by one")

    monkeypatch.setattr(results_module, "_metric_values", refused)
    assert RunResults().summary(documents, resamples=0) == expected
    assert expected[0]["metrics"]["cer"]["numerator"] == sum(range(600))
    assert expected[0]["metrics"]["field_f1"]["n"] == 400
