"""Scale (issue 12): what the plugin does so that thousands of documents cost little more than plain pytest.

JUnit testcases carry the metrics that matter (``--ocr-junit-properties``), in-process engines get no prefetch pool,
an xdist worker prefetches the documents it was given, records are spooled instead of held, the run file is written
document by document, the bootstrap is the same with and without numpy, and the garbage collector skips the
collected items. No timing is asserted here: ``benchmarks/bench_plugin.py`` measures.
"""

from __future__ import annotations

import gc
import json
import random
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.plugin import make_dataset
from tests.helpers.servers import load_fake_server

pytest_plugins = ["pytester"]


def _properties(xml_path: Path) -> dict[str, set[str]]:
    root = ET.parse(xml_path).getroot()
    return {case.get("name"): {p.get("name") for p in case.iter("property")} for case in root.iter("testcase")}


@pytest.mark.xdist_transport
def test_junit_carries_the_metrics_that_matter_by_default(pytester: pytest.Pytester, dataset: Path,
                                                          plugin_args: list[str]) -> None:
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-max=ned:0.9",
                                "--ocr-gate=bow_f1>=0.1", "--junitxml=out.xml", "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(passed=3)
    props = _properties(pytester.path / "out.xml")
    with_fields = props["replay-doc_001.png"]
    assert {"ocr.engine", "ocr.dataset", "ocr.document", "ocr.cer", "ocr.wer", "ocr.field_f1"} <= with_fields
    assert {"ocr.ned", "ocr.bow_f1"} <= with_fields  # checked (--ocr-max) and gated (--ocr-gate)
    assert not {"ocr.ser", "ocr.edit_similarity", "ocr.token_accuracy", "ocr.field_precision"} & with_fields
    assert "ocr.field_f1" not in props["replay-doc_002.png"]  # no fields in its ground truth: not computed
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert "ser" in run["documents"][0]["metrics"]  # the run file keeps every computed metric


_REPORTS_SEEN = """
import json

WORKER = []

def pytest_configure(config):
    WORKER.append(hasattr(config, "workerinput"))

def pytest_runtest_logreport(report):
    if WORKER[-1]:
        return  # the controller's reports: what JUnit and every other plugin there read
    pairs = [[type(pair).__name__, *pair] for pair in report.user_properties]
    with open("seen.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps([report.nodeid, report.when, pairs]) + "\\n")
"""


def _seen(root: Path) -> dict[tuple[str, str], list[list[Any]]]:
    lines = (root / "seen.jsonl").read_text(encoding="utf-8").splitlines()
    return {(nodeid, when): pairs for nodeid, when, pairs in map(json.loads, lines)}


@pytest.mark.xdist_transport
def test_junit_properties_reach_the_controller_whole_and_in_order(pytester: pytest.Pytester, dataset: Path,
                                                                   plugin_args: list[str]) -> None:
    # an xdist worker sends the OCR properties at the end of a report's user_properties as one text (execnet writes
    # a list's tuples value by value); the controller's reports must hold what the worker's held, as tuples
    pytester.makeconftest(_REPORTS_SEEN)
    pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--junitxml=out.xml",
                       *plugin_args).assert_outcomes(passed=3)
    ocr = ["ocr.engine", "ocr.dataset", "ocr.document", "ocr.cer", "ocr.wer"]
    root = ET.parse(pytester.path / "out.xml").getroot()
    case = next(c for c in root.iter("testcase") if c.get("name") == "replay-doc_002.png")
    assert [p.get("name") for p in case.iter("property")] == ocr
    assert [p.get("value") for p in case.iter("property")][:3] == ["replay", "invoices", "doc_002.png"]
    seen = _seen(pytester.path)
    call = seen[("invoices::replay-doc_002.png", "call")]
    assert [name for _, name, _ in call] == ocr and {kind for kind, _, _ in call} == {"tuple"}
    assert seen[("invoices::replay-doc_002.png", "teardown")] == call

    # a test function's own properties around them: one before its OCR properties, one added at teardown
    (pytester.path / "seen.jsonl").unlink()
    pytester.makepyfile(
        """
        import pytest

        pytestmark = pytest.mark.ocr_dataset("invoices")

        @pytest.fixture
        def noted(record_property):
            record_property("mine.before", 7)
            yield
            record_property("mine.after", ("a", "tuple"))

        def test_doc(noted, ocr_score):
            pass
        """
    )
    pytester.runpytest("--ocr-engine=replay:preds", "--junitxml=fn.xml", *plugin_args).assert_outcomes(passed=3)
    seen = _seen(pytester.path)
    nodeid = "test_junit_properties_reach_the_controller_whole_and_in_order.py::test_doc[replay-doc_002.png]"
    call, teardown = seen[(nodeid, "call")], seen[(nodeid, "teardown")]
    assert call[0] == ["tuple", "mine.before", 7] and [name for _, name, _ in call[1:]] == ocr
    assert teardown[:-1] == call and teardown[-1] == ["tuple", "mine.after", ["a", "tuple"]]
    root = ET.parse(pytester.path / "fn.xml").getroot()
    case = next(c for c in root.iter("testcase") if c.get("name") == "test_doc[replay-doc_002.png]")
    assert [p.get("name") for p in case.iter("property")] == ["mine.before", *ocr, "mine.after"]


def test_junit_properties_all_and_its_ini_twin(pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]) -> None:
    pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-junit-properties=all",
                       "--junitxml=cli.xml", *plugin_args).assert_outcomes(passed=3)
    pytester.makeini("[pytest]\nocr_junit_properties = all\n")
    pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--junitxml=ini.xml",
                       *plugin_args).assert_outcomes(passed=3)
    for name in ("cli.xml", "ini.xml"):
        props = _properties(pytester.path / name)["replay-doc_001.png"]
        assert {"ocr.ser", "ocr.edit_similarity", "ocr.token_accuracy", "ocr.field_precision", "ocr.bow_f1"} <= props


def test_junit_properties_typo_is_one_usage_error(pytester: pytest.Pytester, dataset: Path) -> None:
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-junit-properties=every")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ocr-junit-properties='every' is not valid; choose one of: default, all*"])


def test_a_test_function_puts_what_it_checked_in_junit(pytester: pytest.Pytester, dataset: Path) -> None:
    pytester.makepyfile(
        """
        import pytest
        from pytest_ocrmetrics.assertions import assert_metric

        pytestmark = pytest.mark.ocr_dataset("invoices")

        def test_doc(ocr_score):
            assert_metric(ocr_score, "edit_similarity", 0.5)
        """
    )
    pytester.runpytest("--ocr-engine=replay:preds", "--junitxml=out.xml").assert_outcomes(passed=3)
    props = _properties(pytester.path / "out.xml")["test_doc[replay-doc_002.png]"]
    assert "ocr.edit_similarity" in props and "ocr.ser" not in props


def test_replay_engine_gets_no_prefetch_pool(tmp_path: Path) -> None:
    from pytest_ocrmetrics.engines.prefetch import wants_prefetch
    from pytest_ocrmetrics.engines.registry import default_registry
    from pytest_ocrmetrics.scoring.runner import OcrCase, OcrRunner, RunnerSettings

    make_dataset(tmp_path)
    runner = OcrRunner(RunnerSettings(engines=(f"replay:{tmp_path / 'preds'}",), concurrency=8), default_registry())
    dataset = runner.dataset(tmp_path / "invoices")
    cases = [OcrCase(runner.engines[0], document, dataset) for document in dataset.documents]
    assert not wants_prefetch(runner.engine(runner.engines[0]), 8)
    runner.start_prefetch(cases)
    runner.prefetch_more(cases)
    assert runner._prefetchers == {} and not runner.may_prefetch()
    assert runner.recognize(cases[1]).text == "Hello world"  # read in the test's own thread
    runner.close()


def test_prefetcher_add_queues_more_documents_and_restarts_its_workers() -> None:
    from pytest_ocrmetrics.core.documents import Document
    from pytest_ocrmetrics.engines.base import OcrOutput
    from pytest_ocrmetrics.engines.prefetch import Prefetcher

    seen: list[str] = []

    class Engine:
        concurrent = True

        def recognize(self, document: Document) -> OcrOutput:
            seen.append(document.id)
            return OcrOutput(text=document.id)

    docs = [Document(id=f"d{i}", dataset="x", image_path=None, reference_text="") for i in range(6)]
    with Prefetcher(Engine(), docs[:2], concurrency=3) as prefetcher:
        assert prefetcher.result(docs[1]).text == "d1"
        for thread in list(prefetcher._threads):
            thread.join(timeout=5)  # the first two are done: every worker has run out of work
        assert prefetcher.add(docs) == 4  # the two known ones are not queued again
        assert [prefetcher.result(doc).text for doc in docs] == [doc.id for doc in docs]
        assert sorted(seen) == sorted(doc.id for doc in docs)  # each recognised once, by the pool
        assert prefetcher.stats().done == 6


def test_xdist_worker_prefetches_the_documents_it_was_given(pytester: pytest.Pytester) -> None:
    """Without prefetch on the workers, two workers have at most two requests in flight together."""
    pytest.importorskip("xdist")
    docs = {f"p{i:02d}.png": {"full_text": "x"} for i in range(24)}
    make_dataset(pytester.path, docs, {})
    for i, name in enumerate(docs):  # distinct image bytes, so the server can tell the pages apart
        (pytester.path / "invoices" / "images" / name).write_bytes(b"\x89PNG\r\n\x1a\n" + bytes([i]))
    with load_fake_server().FakeChatServer(latency_s=0.3) as server:
        result = pytester.runpytest_subprocess(
            "--ocr-dataset=invoices", "--ocr-engine=openai", f"--ocr-engine-option=openai.base_url={server.base_url}",
            "--ocr-engine-option=openai.model=fake-vlm", "--ocr-concurrency=6", "--ocr-no-cache", "-n", "2",
        )
        result.assert_outcomes(passed=24)
        assert len(server.chat_requests) == 24  # each page once: a worker prefetches only the tests it was given
        assert server.max_in_flight >= 4


def test_records_are_spooled_and_read_back_fresh() -> None:
    from pytest_ocrmetrics.runfile.results import RunResults, SpooledDocuments

    results = RunResults()
    rng = random.Random(1)
    for i in range(50):
        value = rng.random()
        record = {"id": f"d{49 - i:02d}", "dataset": "ds", "engine": "e", "nodeid": f"t[{i}]",
                  "metrics": {"cer": value}, "counts": {"cer": {"errors": value * 10, "reference_length": 10}},
                  "reference": "ref \ud800", "hypothesis": "hyp", "checks": []}
        results.add(record, "passed")
    results.add({"id": "d00", "dataset": "ds", "engine": "e", "nodeid": "u[0]", "metrics": {}, "counts": {},
                 "checks": [{"metric": "cer"}]}, "failed", "too many errors")
    assert all(not isinstance(entry, dict) for entry in results.records)  # small index entries, not the records
    run = results.to_run(plugin_version="0", pytest_version="0", resamples=20)
    documents = run["documents"]
    assert isinstance(documents, SpooledDocuments) and len(documents) == 50
    assert [d["id"] for d in documents] == [f"d{i:02d}" for i in range(50)]
    first = documents[0]
    assert first["tests"] == ["t[49]", "u[0]"] and first["outcome"] == "failed" and first["message"] == "too many errors"
    assert first["checks"] == [{"metric": "cer"}] and first["metrics"]["cer"] > 0
    first["id"] = "changed"
    assert documents[0]["id"] == "d00"  # a fresh dict each time
    assert first["reference"] == "ref \ufffd" and run["replaced_characters"] == 50
    assert run["summary"] == results.summary(list(documents), resamples=20)  # streaming == from a list
    assert run["summary"][0]["failed"] == 1 and run["summary"][0]["metrics"]["cer"]["n"] == 50


def test_run_file_is_written_piece_by_piece_as_dump_run_says() -> None:
    from pytest_ocrmetrics.reporting.files import dump_run, run_lines
    from pytest_ocrmetrics.runfile.results import RunResults

    results = RunResults()
    for i in range(3):
        results.add({"id": f"d{i}", "dataset": "ds", "engine": "e", "metrics": {"cer": 0.5}, "counts": {}}, "passed")
    run = results.to_run(plugin_version="0", pytest_version="0", resamples=5)
    pieces = list(run_lines(run))
    assert len(pieces) > 3 and "".join(pieces) == dump_run(run)
    assert json.loads(dump_run(run))["documents"] == list(run["documents"])
    assert dump_run({"documents": [], "summary": []}) == '{"summary": [],\n"documents": []}\n'


@pytest.mark.parametrize("n", [2, 3, 17, 400])
def test_bootstrap_is_the_same_with_and_without_numpy(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")
    import pytest_ocrmetrics.metrics.aggregate as aggregate

    rng = random.Random(n)
    columns = {"cer": sorted(rng.random() ** 3 for _ in range(n)), "wer": sorted(rng.choice([0.0, 1.0]) for _ in range(n)),
               "f1": [-0.0] * n}
    monkeypatch.setattr(aggregate, "_NUMPY_MIN_DRAWS", 0)
    fast = aggregate.bootstrap_mean_intervals(columns, seed=7, resamples=333)
    monkeypatch.setattr(aggregate, "_numpy_resample_means", lambda *args: None)  # the pure-Python loop
    aggregate._resample_indices_cached.cache_clear()
    assert aggregate.bootstrap_mean_intervals(columns, seed=7, resamples=333) == fast
    assert str(fast["f1"][0]) == "0.0"


def test_numpy_bootstrap_chunks_give_the_same_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")
    import pytest_ocrmetrics.metrics.aggregate as aggregate

    monkeypatch.setattr(aggregate, "_NUMPY_MIN_DRAWS", 0)
    columns = {"cer": [random.Random(3).random() for _ in range(50)]}
    whole = aggregate.bootstrap_mean_intervals(columns, seed=2, resamples=101)
    monkeypatch.setattr(aggregate, "_NUMPY_CHUNK", 50 * 7)  # 7 resamples a chunk, the last one shorter
    monkeypatch.setattr(aggregate, "_NUMPY_MIN_ROWS", 1)
    assert aggregate.bootstrap_mean_intervals(columns, seed=2, resamples=101) == whole
    monkeypatch.setattr(aggregate, "_NUMPY_MIN_ROWS", 30)  # raised to 30 a chunk: 30, 30, 30, then 11
    assert aggregate.bootstrap_mean_intervals(columns, seed=2, resamples=101) == whole


def test_garbage_collector_skips_collected_items_during_the_run(pytester: pytest.Pytester, dataset: Path,
                                                                 plugin_args: list[str]) -> None:
    pytester.makepyfile(
        """
        import gc
        import pytest

        pytestmark = pytest.mark.ocr_dataset("invoices")

        def test_doc(ocr_output):
            assert gc.get_freeze_count() > 0
        """
    )
    pytester.runpytest("--ocr-engine=replay:preds", *plugin_args).assert_outcomes(passed=3)
    assert gc.get_freeze_count() == 0  # unfrozen at the end (this in-process run froze this process's objects too)


def test_the_spool_file_is_closed_when_pytest_unconfigures(pytester: pytest.Pytester, dataset: Path) -> None:
    """The records' temporary file lives until the terminal summary is written, then it is closed (no ResourceWarning
    for an unclosed file at exit)."""
    from pytest_ocrmetrics.plugin import STATE

    seen = []

    class Capture:
        def pytest_configure(self, config: pytest.Config) -> None:
            seen.append(config)

    pytester.inline_run("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-json=run.json",
                        plugins=[Capture()])
    assert json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))["documents"]
    spool = seen[0].stash[STATE].outcome.results._spool
    assert spool._file is None
